// JSON Schema 2020-12 checks in the browser that say what the server would say, word for word,
// so that a form can point at a wrong field before anything is sent. The server stays the judge:
// keywords this file does not know (remote $refs, unevaluated*, $dynamicRef, most formats) are
// left to it. tests/interop/validate.parity.test.mjs holds these messages to the server's over
// the official test suite.

const TYPE_ORDER = ["null", "boolean", "object", "array", "number", "string", "integer"];

const typeName = (v) =>
  v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v;

const hasType = (v, t) => {
  const actual = typeName(v);
  return actual === t || (t === "number" && actual === "integer");
};

// RFC 8785 text (members sorted, ECMAScript numbers), as the server writes values in messages.
function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

// At most 80 characters, as the server cuts them.
function shortJson(v) {
  const chars = Array.from(canonical(v));
  return chars.length > 80 ? `${chars.slice(0, 77).join("")}...` : chars.join("");
}

function equal(a, b) {
  if (typeof a === "number" && typeof b === "number") return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]));
  }
  if (a && b && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && equal(a[k], b[k]));
  }
  return a === b;
}

const chars = (s) => Array.from(s).length;
const escapeToken = (k) => String(k).replace(/~/g, "~0").replace(/\//g, "~1");

const leap = (y) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
function fullDate(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const days = [31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return mo >= 1 && mo <= 12 && d >= 1 && d <= days[mo - 1];
}
function fullTime(s) {
  const m = /^(\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/.exec(s);
  if (!m) return false;
  const [h, mi, sec] = [Number(m[1]), Number(m[2]), Number(m[3])];
  let offset = 0;
  if (m[6]) {
    const [oh, om] = [Number(m[7]), Number(m[8])];
    if (oh > 23 || om > 59) return false;
    offset = (oh * 60 + om) * (m[6] === "+" ? 1 : -1);
  }
  if (h > 23 || mi > 59 || sec > 60) return false;
  // A leap second only where it falls on 23:59:60 UTC.
  return sec < 60 || (((h * 60 + mi - offset) % 1440) + 1440) % 1440 === 23 * 60 + 59;
}
const FORMATS = {
  date: fullDate,
  time: fullTime,
  "date-time": (s) => s.length >= 11 && (s[10] === "T" || s[10] === "t") && fullDate(s.slice(0, 10)) && fullTime(s.slice(11)),
  uuid: (s) => /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(s),
  ipv4: (s) => /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(s),
};

// The JSON Schema 2020-12 evaluation of `instance` against `schema`: every failure as the
// server reports it, {instanceLocation, keywordLocation, message}; [] when it passes.
export function validate(schema, instance, {assertFormat = false} = {}) {
  const errors = [];
  const regexes = new Map();
  const regex = (source) => {
    if (!regexes.has(source)) {
      try { regexes.set(source, new RegExp(source, "u")); } catch { regexes.set(source, null); }
    }
    return regexes.get(source);
  };
  const resolve = (ref) => {
    if (ref === "#") return schema;
    if (!ref.startsWith("#/")) return undefined;  // anchors and remote documents: the server's part
    return ref.slice(2).split("/").reduce((o, t) => {
      const k = decodeURIComponent(t).replace(/~1/g, "/").replace(/~0/g, "~");
      return o !== undefined && o !== null && typeof o === "object" ? o[k] : undefined;
    }, schema);
  };

  const fail = (instanceLocation, keywordLocation, message) => {
    errors.push({instanceLocation, keywordLocation, message});
    return false;
  };

  // Returns whether `v` passes `s`; failures are appended to `errors`.
  function node(s, v, inst, kw, depth) {
    if (s === true || s === undefined) return true;
    if (s === false) return fail(inst, kw, "no value is allowed here (false schema)");
    if (typeof s !== "object" || s === null || depth > 64) return true;
    let ok = true;
    const at = (k) => `${kw}/${k}`;
    const check = (cond, k, message) => { if (!cond) ok = fail(inst, at(k), message()); };

    if (typeof s.$ref === "string") {
      const target = resolve(s.$ref);
      if (target !== undefined && !node(target, v, inst, at("$ref"), depth + 1)) ok = false;
    }
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? s.type : [s.type];
      check(types.some((t) => hasType(v, t)), "type",
        () => `expected ${TYPE_ORDER.filter((t) => types.includes(t)).join(" or ")}, got ${typeName(v)}`);
    }
    if (Object.hasOwn(s, "const")) check(equal(v, s.const), "const", () => `must be equal to ${shortJson(s.const)}`);
    if (Array.isArray(s.enum)) check(s.enum.some((e) => equal(v, e)), "enum", () => `must be one of ${shortJson(s.enum)}`);

    if (typeof v === "number") {
      const got = () => shortJson(v);
      if (typeof s.multipleOf === "number") {
        const q = v / s.multipleOf;
        check(Number.isFinite(q) && Number.isInteger(q), "multipleOf", () => `must be a multiple of ${s.multipleOf}`);
      }
      if (typeof s.maximum === "number") check(v <= s.maximum, "maximum", () => `must be <= ${s.maximum}, got ${got()}`);
      if (typeof s.exclusiveMaximum === "number") check(v < s.exclusiveMaximum, "exclusiveMaximum", () => `must be < ${s.exclusiveMaximum}, got ${got()}`);
      if (typeof s.minimum === "number") check(v >= s.minimum, "minimum", () => `must be >= ${s.minimum}, got ${got()}`);
      if (typeof s.exclusiveMinimum === "number") check(v > s.exclusiveMinimum, "exclusiveMinimum", () => `must be > ${s.exclusiveMinimum}, got ${got()}`);
    }
    if (typeof v === "string") {
      if (typeof s.maxLength === "number") check(chars(v) <= s.maxLength, "maxLength", () => `must be at most ${s.maxLength} characters long, got ${chars(v)}`);
      if (typeof s.minLength === "number") check(chars(v) >= s.minLength, "minLength", () => `must be at least ${s.minLength} characters long, got ${chars(v)}`);
      if (typeof s.pattern === "string" && regex(s.pattern)) check(regex(s.pattern).test(v), "pattern", () => `does not match the pattern ${s.pattern}`);
      if (assertFormat && FORMATS[s.format]) check(FORMATS[s.format](v), "format", () => `is not a valid ${s.format}`);
    }

    if (Array.isArray(v)) {
      const count = (k, n, most) => check(most ? v.length <= n : v.length >= n, k, () => `must have at ${most ? "most" : "least"} ${n} items, got ${v.length}`);
      if (typeof s.maxItems === "number") count("maxItems", s.maxItems, true);
      if (typeof s.minItems === "number") count("minItems", s.minItems, false);
      if (s.uniqueItems === true) {
        let dup = null;
        for (let i = 0; i < v.length && !dup; i++) for (let j = i + 1; j < v.length && !dup; j++) if (equal(v[i], v[j])) dup = [i, j];
        check(!dup, "uniqueItems", () => `items at ${dup[0]} and ${dup[1]} are equal; they must be unique`);
      }
      const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
      prefix.forEach((p, i) => { if (i < v.length && !node(p, v[i], `${inst}/${i}`, `${at("prefixItems")}/${i}`, depth + 1)) ok = false; });
      if (s.items !== undefined) {
        for (let i = prefix.length; i < v.length; i++) if (!node(s.items, v[i], `${inst}/${i}`, at("items"), depth + 1)) ok = false;
      }
      if (s.contains !== undefined) {
        const mark = errors.length;
        const found = v.filter((x, i) => node(s.contains, x, `${inst}/${i}`, at("contains"), depth + 1)).length;
        errors.length = mark;
        const min = typeof s.minContains === "number" ? s.minContains : 1;
        if (found < min) check(false, "contains", () => `must contain at least ${min} matching item${min === 1 ? "" : "s"}, found ${found}`);
        else if (typeof s.maxContains === "number") check(found <= s.maxContains, "contains", () => `must contain at most ${s.maxContains} matching items, found ${found}`);
      }
    }

    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const keys = Object.keys(v);
      const count = (k, n, most) => check(most ? keys.length <= n : keys.length >= n, k, () => `must have at ${most ? "most" : "least"} ${n} properties, got ${keys.length}`);
      if (typeof s.maxProperties === "number") count("maxProperties", s.maxProperties, true);
      if (typeof s.minProperties === "number") count("minProperties", s.minProperties, false);
      for (const name of Array.isArray(s.required) ? s.required : []) {
        check(Object.hasOwn(v, name), "required", () => `missing required property "${name}"`);
      }
      for (const [prop, needs] of Object.entries(s.dependentRequired || {})) {
        if (!Object.hasOwn(v, prop)) continue;
        for (const need of needs) check(Object.hasOwn(v, need), "dependentRequired", () => `property "${prop}" requires property "${need}"`);
      }
      for (const [prop, sub] of Object.entries(s.dependentSchemas || {})) {
        if (Object.hasOwn(v, prop) && !node(sub, v, inst, `${at("dependentSchemas")}/${escapeToken(prop)}`, depth + 1)) ok = false;
      }
      const props = s.properties && typeof s.properties === "object" ? s.properties : {};
      const patterns = Object.keys(s.patternProperties || {});
      for (const k of keys) {
        const here = `${inst}/${escapeToken(k)}`;
        const known = Object.hasOwn(props, k);
        if (known && !node(props[k], v[k], here, `${at("properties")}/${escapeToken(k)}`, depth + 1)) ok = false;
        let matched = false;
        for (const p of patterns) {
          if (!regex(p) || !regex(p).test(k)) continue;
          matched = true;
          if (!node(s.patternProperties[p], v[k], here, `${at("patternProperties")}/${escapeToken(p)}`, depth + 1)) ok = false;
        }
        if (!known && !matched && s.additionalProperties !== undefined) {
          if (s.additionalProperties === false) ok = fail(here, at("additionalProperties"), `property "${k}" is not allowed (additionalProperties)`);
          else if (!node(s.additionalProperties, v[k], here, at("additionalProperties"), depth + 1)) ok = false;
        }
        if (s.propertyNames !== undefined && !node(s.propertyNames, k, here, at("propertyNames"), depth + 1)) ok = false;
      }
    }

    if (Array.isArray(s.allOf)) s.allOf.forEach((sub, i) => { if (!node(sub, v, inst, `${at("allOf")}/${i}`, depth + 1)) ok = false; });
    if (Array.isArray(s.anyOf)) {
      const mark = errors.length;
      if (s.anyOf.some((sub, i) => node(sub, v, inst, `${at("anyOf")}/${i}`, depth + 1))) errors.length = mark;
      else ok = fail(inst, at("anyOf"), `does not match any of the ${s.anyOf.length} alternatives`);
    }
    if (Array.isArray(s.oneOf)) {
      const mark = errors.length;
      const matched = [];
      for (let i = 0; i < s.oneOf.length && matched.length < 2; i++) {
        if (node(s.oneOf[i], v, inst, `${at("oneOf")}/${i}`, depth + 1)) matched.push(i);
      }
      if (matched.length === 1) errors.length = mark;
      else if (matched.length > 1) { errors.length = mark; ok = fail(inst, at("oneOf"), `matches alternatives ${matched[0]} and ${matched[1]}; exactly one must match`); }
      else ok = fail(inst, at("oneOf"), `does not match any of the ${s.oneOf.length} alternatives; exactly one must match`);
    }
    if (s.not !== undefined) {
      const mark = errors.length;
      const matched = node(s.not, v, inst, at("not"), depth + 1);
      errors.length = mark;
      check(!matched, "not", () => `must not match the schema in "not"`);
    }
    if (s.if !== undefined) {
      const mark = errors.length;
      const holds = node(s.if, v, inst, at("if"), depth + 1);
      errors.length = mark;
      const next = holds ? s.then : s.else;
      if (next !== undefined && !node(next, v, inst, at(holds ? "then" : "else"), depth + 1)) ok = false;
    }
    return ok;
  }

  node(schema, instance, "", "", 0);
  return errors;
}
