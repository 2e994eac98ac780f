// Forms drawn from JSON Schemas (seed 001: schemas drive a form-based UX). Each input carries
// the JSON Pointer of the value it edits, so the server's violations land beside their field.

const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})[c]);

function resolve(schema, root) {
  let s = schema;
  for (let hops = 0; s && typeof s.$ref === "string" && s.$ref.startsWith("#/") && hops < 16; hops++) {
    s = s.$ref.slice(2).split("/").reduce((o, k) => (o ? o[k.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined), root);
  }
  return s || {};
}

function typeOf(s) {
  if (Array.isArray(s.type)) return s.type.find((t) => t !== "null") || "string";
  if (s.type) return s.type;
  if (s.enum) return typeof s.enum[0] === "number" ? "number" : "string";
  if (s.properties) return "object";
  return "string";
}

// Returns {element, read()}: the form for `schema` and a function that reads its value back.
export function buildForm(schema, root = schema, pointer = "", name = "", required = false) {
  schema = resolve(schema, root);
  const type = typeOf(schema);
  const label = name ? `<label for="f${esc(pointer)}" class="${required ? "required" : ""}">${esc(name)}</label>` : "";
  const help = schema.description ? `<div class="help">${esc(schema.description)}</div>` : "";
  const wrap = document.createElement("div");
  wrap.className = "field";
  wrap.dataset.pointer = pointer;
  if (type === "object") {
    const fs = document.createElement("fieldset");
    if (name) fs.innerHTML = `<legend class="${required ? "required" : ""}">${esc(name)}</legend>${help}`;
    const req = new Set(schema.required || []);
    const parts = [];
    for (const [key, sub] of Object.entries(schema.properties || {})) {
      const part = buildForm(sub, root, `${pointer}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`, key, req.has(key));
      parts.push([key, part]);
      fs.appendChild(part.element);
    }
    wrap.appendChild(fs);
    wrap.insertAdjacentHTML("beforeend", `<div class="error" role="alert"></div>`);
    return {
      element: wrap,
      read() {
        const out = {};
        for (const [key, part] of parts) {
          const v = part.read();
          if (v !== undefined) out[key] = v;
        }
        return out;
      },
    };
  }
  if (type === "array") {
    const items = resolve(schema.items || {}, root);
    wrap.innerHTML = `${label}${help}<div class="rows"></div><button type="button" class="secondary add">Add</button><div class="error" role="alert"></div>`;
    const rows = wrap.querySelector(".rows");
    const parts = [];
    const add = (value) => {
      const row = document.createElement("div");
      const part = buildForm(items, root, `${pointer}/${parts.length}`, `${name}[${parts.length}]`, false);
      if (value !== undefined) part.set?.(value);
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "secondary";
      remove.textContent = "Remove";
      const entry = {part, row};
      remove.onclick = () => { row.remove(); parts.splice(parts.indexOf(entry), 1); };
      row.append(part.element, remove);
      rows.appendChild(row);
      parts.push(entry);
    };
    wrap.querySelector(".add").onclick = () => add();
    for (const v of schema.default || []) add(v);
    return { element: wrap, read: () => (parts.length ? parts.map((p) => p.part.read()) : undefined) };
  }
  let input;
  if (schema.enum) {
    input = `<select id="f${esc(pointer)}"><option value="">—</option>${schema.enum.map((v) => `<option value="${esc(JSON.stringify(v))}">${esc(v)}</option>`).join("")}</select>`;
  } else if (type === "boolean") {
    input = `<input id="f${esc(pointer)}" type="checkbox">`;
  } else if (type === "integer" || type === "number") {
    const min = schema.minimum !== undefined ? ` min="${schema.minimum}"` : "";
    const max = schema.maximum !== undefined ? ` max="${schema.maximum}"` : "";
    input = `<input id="f${esc(pointer)}" type="number"${min}${max} step="${type === "integer" ? 1 : "any"}">`;
  } else if (name === "other" || (schema.maxLength || 0) > 200) {
    input = `<textarea id="f${esc(pointer)}" rows="2"></textarea>`;
  } else {
    const t = schema.format === "date" ? "date" : schema.format === "date-time" ? "datetime-local" : schema.format === "email" ? "email" : "text";
    input = `<input id="f${esc(pointer)}" type="${t}">`;
  }
  wrap.innerHTML = `${label}${input}${help}<div class="error" role="alert"></div>`;
  const el = wrap.querySelector("input, select, textarea");
  const set = (v) => {
    if (v === undefined || v === null) return;
    if (el.type === "checkbox") el.checked = !!v;
    else if (el.tagName === "SELECT") el.value = JSON.stringify(v);
    else el.value = v;
  };
  set(schema.default);
  return {
    element: wrap,
    set,
    read() {
      if (el.type === "checkbox") return el.checked;
      if (el.value === "") return undefined;
      if (el.tagName === "SELECT") return JSON.parse(el.value);
      if (el.type === "number") return Number(el.value);
      return el.value;
    },
  };
}

// Puts each violation beside the field its instanceLocation names (or the nearest parent).
export function showViolations(container, violations) {
  for (const f of container.querySelectorAll(".field")) {
    f.classList.remove("invalid");
    const e = f.querySelector(":scope > .error");
    if (e) e.textContent = "";
  }
  const unplaced = [];
  for (const v of violations || []) {
    let pointer = v.instanceLocation || "";
    let field = null;
    while (true) {
      field = container.querySelector(`.field[data-pointer="${CSS.escape(pointer)}"]`);
      if (field || pointer === "") break;
      pointer = pointer.slice(0, pointer.lastIndexOf("/"));
    }
    if (!field) { unplaced.push(v); continue; }
    field.classList.add("invalid");
    const e = field.querySelector(":scope > .error");
    if (e) e.textContent += (e.textContent ? "; " : "") + v.message;
  }
  return unplaced;
}
