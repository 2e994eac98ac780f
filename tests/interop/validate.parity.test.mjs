// The console checks a form in the browser before sending it (ui/validate.js) and promises the
// server's own words. This holds it to that: every case of the official JSON-Schema-Test-Suite
// that the client-side checks cover is run through both `schemagate validate` and the console's
// module, and the verdicts and the (location, message) lists must be the same.
import {test} from "node:test";
import assert from "node:assert/strict";
import {execFileSync} from "node:child_process";
import {mkdtempSync, readFileSync, writeFileSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join, dirname} from "node:path";
import {fileURLToPath} from "node:url";

import {validate} from "../../ui/validate.js";

const here = dirname(fileURLToPath(import.meta.url));
const suite = join(here, "../../../shared/testdata/JSON-Schema-Test-Suite/tests/draft2020-12");
const binary = process.env.SCHEMAGATE_BINARY;

const KEYWORD_FILES = [
  "additionalProperties", "allOf", "anyOf", "boolean_schema", "const", "contains", "default",
  "dependentRequired", "dependentSchemas", "enum", "exclusiveMaximum", "exclusiveMinimum",
  "if-then-else", "infinite-loop-detection", "items", "maxContains", "maxItems", "maxLength",
  "maxProperties", "maximum", "minContains", "minItems", "minLength", "minProperties", "minimum",
  "multipleOf", "not", "oneOf", "pattern", "patternProperties", "prefixItems", "properties",
  "propertyNames", "ref", "required", "type", "uniqueItems",
];
const FORMAT_FILES = ["date", "date-time", "time", "uuid", "ipv4"];

// What the console leaves to the server: a group whose schema uses any of these is not the
// client's to judge.
const SERVER_ONLY = new Set(["$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef",
  "unevaluatedProperties", "unevaluatedItems", "$vocabulary", "definitions", "dependencies"]);
function clientCovers(schema) {
  if (Array.isArray(schema)) return schema.every(clientCovers);
  if (schema === null || typeof schema !== "object") return true;
  for (const [k, v] of Object.entries(schema)) {
    if (SERVER_ONLY.has(k)) return false;
    if (k === "$ref" && typeof v === "string" && !(v === "#" || v.startsWith("#/"))) return false;
    if (k === "$schema" && v !== "https://json-schema.org/draft/2020-12/schema") return false;
    if (!clientCovers(v)) return false;
  }
  return true;
}

// The CLI's basic output names the message `error`; the API's violations name it `message`.
const said = (list) => list.map((e) => `${e.instanceLocation} ${e.message ?? e.error}`).sort();

function compareFile(path, assertFormat, dir) {
  const stats = {groups: 0, cases: 0, invalid: 0};
  for (const [g, group] of JSON.parse(readFileSync(path, "utf8")).entries()) {
    if (!clientCovers(group.schema)) continue;
    stats.groups++;
    const schemaFile = join(dir, `schema-${g}.json`);
    const instancesFile = join(dir, `instances-${g}.jsonl`);
    writeFileSync(schemaFile, JSON.stringify(group.schema));
    writeFileSync(instancesFile, group.tests.map((t) => JSON.stringify(t.data)).join("\n") + "\n");
    const args = ["validate", "--schema", schemaFile, "--instances", instancesFile, "--output", "basic"];
    if (assertFormat) args.push("--assert-format");
    let out;
    try {
      out = execFileSync(binary, args, {encoding: "utf8"});
    } catch (e) {
      out = e.stdout;  // exit 1: some instance is invalid
    }
    const lines = out.trim().split("\n").map((l) => JSON.parse(l));
    group.tests.forEach((t, i) => {
      const server = lines[i];
      const client = validate(group.schema, t.data, {assertFormat});
      const where = `${path.split("/").pop()}: ${group.description} / ${t.description}`;
      assert.equal(client.length === 0, server.valid, `${where}: verdicts differ`);
      assert.deepEqual(said(client), said(server.errors || []), `${where}: messages differ`);
      stats.cases++;
      if (!server.valid) stats.invalid++;
    });
  }
  return stats;
}

test("the console's checks say what the server says, over the official suite", {skip: !binary && "SCHEMAGATE_BINARY is not set"}, () => {
  const dir = mkdtempSync(join(tmpdir(), "sg-parity-"));
  try {
    const total = {groups: 0, cases: 0, invalid: 0};
    const add = (s) => { for (const k of Object.keys(total)) total[k] += s[k]; };
    for (const f of KEYWORD_FILES) add(compareFile(join(suite, `${f}.json`), false, dir));
    for (const f of FORMAT_FILES) add(compareFile(join(suite, "optional/format", `${f}.json`), true, dir));
    console.log(`compared ${total.cases} cases (${total.invalid} invalid) in ${total.groups} groups`);
    assert.ok(total.cases > 800 && total.invalid > 350, "the suite was not read: too few cases compared");
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

test("a value in a message is written as the server writes it", () => {
  const [e] = validate({maximum: 9}, 9.5);
  assert.equal(e.message, "must be <= 9, got 9.5");
  const [long] = validate({const: "x"}, "y".repeat(100));
  assert.equal(long.message, "must be equal to \"x\"");
  const [cut] = validate({enum: ["é".repeat(90)]}, "a");
  assert.equal(Array.from(cut.message.slice("must be one of ".length)).length, 80);
  assert.ok(cut.message.endsWith("..."));
});
