// schemagate console: plain ES modules, no build step, nothing fetched from elsewhere.
import { buildForm, showViolations } from "./form.js";
import { validate } from "./validate.js";
import { heatCurve, lineChart } from "./chart.js";

const main = document.getElementById("main");
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})[c]);
const pretty = (v) => `<pre>${esc(JSON.stringify(v, null, 2))}</pre>`;

// The key is pasted once and kept for this tab only; it is never shown again.
const keyState = document.getElementById("key-state");
function showKeyState() { keyState.textContent = sessionStorage.getItem("sg-key") ? "key set" : "no key"; }
document.getElementById("key-form").onsubmit = (e) => {
  e.preventDefault();
  const input = document.getElementById("api-key");
  if (input.value) sessionStorage.setItem("sg-key", input.value.trim());
  else sessionStorage.removeItem("sg-key");
  input.value = "";
  showKeyState();
  route();
};
showKeyState();

async function api(path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  const key = sessionStorage.getItem("sg-key");
  if (key) headers.Authorization = `Bearer ${key}`;
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, {method: options.method || "GET", headers,
                               body: options.body !== undefined ? JSON.stringify(options.body) : undefined});
  const text = await r.text();
  let body = text;
  try { body = JSON.parse(text); } catch { /* text (metrics) */ }
  return {status: r.status, ok: r.ok, body, headers: r.headers};
}

const errorText = (r) => (r.body && r.body.error ? `${r.body.error.code}: ${r.body.error.message}` : `HTTP ${r.status}`);

// --- Discover ------------------------------------------------------------------------------
async function discover(params) {
  main.innerHTML = `<h1>Find an agent</h1>
    <form id="search" role="search">
      <input id="q" type="search" placeholder="describe what you need" aria-label="what you need" size="40">
      <button type="submit">Search</button>
      <div class="filters">
        <input id="capability" placeholder="capability" aria-label="capability">
        <input id="tag" placeholder="tag" aria-label="tag">
        <input id="language" placeholder="language" aria-label="language">
        <input id="provider" placeholder="provider" aria-label="provider">
      </div>
    </form>
    <ol id="results" class="results"></ol>
    <h2>All agents</h2><ul id="agents" class="agents"></ul>
    <button id="more" class="secondary" hidden>Next page</button>`;
  const form = document.getElementById("search");
  form.onsubmit = async (e) => {
    e.preventDefault();
    const filters = {};
    for (const f of ["capability", "tag", "language", "provider"]) {
      const v = document.getElementById(f).value.trim();
      if (v) filters[f] = v;
    }
    const r = await api("/agents/search", {method: "POST", body: {query: document.getElementById("q").value, filters, top: 10}});
    const list = document.getElementById("results");
    if (!r.ok) { list.innerHTML = `<li class="error">${esc(errorText(r))}</li>`; return; }
    list.innerHTML = r.body.results.map((a) => `<li><a href="#/agents/${encodeURIComponent(a.id)}">${esc(a.name)}</a>
      <span class="score">score ${Number(a.score).toFixed(3)}</span><div class="muted">${esc(a.description)}</div></li>`).join("")
      || `<li class="muted">nothing matches</li>`;
  };
  let cursor = "";
  const more = document.getElementById("more");
  const page = async () => {
    const r = await api(`/agents?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    if (!r.ok) { document.getElementById("agents").innerHTML = `<li class="error">${esc(errorText(r))}</li>`; return; }
    document.getElementById("agents").insertAdjacentHTML("beforeend", r.body.agents.map((a) =>
      `<li><a href="#/agents/${encodeURIComponent(a.id)}">${esc(a.name)}</a> <span class="muted">${esc(a.id)}</span></li>`).join(""));
    cursor = r.body.next_cursor || "";
    more.hidden = !cursor;
  };
  more.onclick = page;
  await page();
  if (params.get("q")) { document.getElementById("q").value = params.get("q"); form.requestSubmit(); }
}

// --- Agent page and invocation ---------------------------------------------------------------
async function agentPage(id) {
  const r = await api(`/agents/${encodeURIComponent(id)}`);
  if (!r.ok) { main.innerHTML = `<p class="error">${esc(errorText(r))}</p>`; return; }
  const card = r.body;
  main.innerHTML = `<h1>${esc(card.name)}</h1><p>${esc(card.description)}</p>
    <p><a href="/a2a/${encodeURIComponent(card.id)}/.well-known/agent-card.json">A2A agent card</a></p>
    <details><summary>Card</summary>${pretty(card)}</details>
    <div id="ops"></div>
    <h2>Recent invocations</h2><div id="recent" class="muted">loading…</div>`;
  recent(card.id);
  const ops = document.getElementById("ops");
  for (const op of card.operations || [{name: "default", input_schema: card.inputs ? null : {}}]) {
    const section = document.createElement("section");
    section.innerHTML = `<h2>${esc(op.name)}${op.version ? ` <span class="muted">${esc(op.version)}</span>` : ""}</h2>
      <p>${esc(op.description || "")}</p>`;
    ops.appendChild(section);
    let schema = op.input_schema;
    if (op.scenario) {
      const s = await api(`/scenarios/${encodeURIComponent(op.scenario)}/versions/${encodeURIComponent((await api(`/scenarios/${encodeURIComponent(op.scenario)}/template`)).body.schema_version || "")}/json-schema`);
      schema = s.ok ? s.body : {};
    }
    section.insertAdjacentHTML("beforeend", `<details><summary>Input schema</summary>${pretty(schema)}</details>` +
      (op.output_schema ? `<details><summary>Output schema</summary>${pretty(op.output_schema)}</details>` : ""));
    // Scenario payloads go through the exchange, which asserts formats; plain operations treat
    // `format` as an annotation, as JSON Schema 2020-12 does by default.
    invokeForm(section, card.id, op.name, schema || {}, {assertFormat: !!op.scenario});
  }
}

// The audit log's calls of this agent (admins only: the log names clients).
async function recent(id) {
  const r = await api("/audit?limit=1000");
  const box = document.getElementById("recent");
  if (!box) return;
  if (!r.ok) { box.textContent = "an admin key shows this agent's recent invocations"; return; }
  const rows = r.body.entries.filter((e) => e.action === "invoke" && (e.target === id || e.target.startsWith(`${id}/`))).slice(-20).reverse();
  box.className = "";
  box.innerHTML = rows.length
    ? `<table id="recent-calls"><tr><th>at</th><th>client</th><th>operation</th><th>status</th><th>ms</th></tr>${rows.map((e) =>
        `<tr><td>${esc(e.at)}</td><td>${esc(e.client_id)}</td><td>${esc(e.target.slice(id.length + 1))}</td><td>${e.status}</td><td>${e.latency_ms}</td></tr>`).join("")}</table>`
    : `<p class="muted">no calls recorded</p>`;
}

// Server-sent events as they arrive: calls onEvent(name, data) for each; returns the response
// when it is not a stream (an error before the stream began).
async function streamApi(path, body, onEvent) {
  const headers = {"Content-Type": "application/json", Accept: "text/event-stream"};
  const key = sessionStorage.getItem("sg-key");
  if (key) headers.Authorization = `Bearer ${key}`;
  const r = await fetch(path, {method: "POST", headers, body: JSON.stringify(body)});
  if (!r.ok || !(r.headers.get("Content-Type") || "").startsWith("text/event-stream")) {
    const text = await r.text();
    let parsed = text;
    try { parsed = JSON.parse(text); } catch { /* not JSON */ }
    return {status: r.status, ok: r.ok, body: parsed};
  }
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (!data.length) continue;
      let parsed = data.join("\n");
      try { parsed = JSON.parse(parsed); } catch { /* plain text event */ }
      onEvent(name, parsed);
    }
  }
  return null;
}

function invokeForm(section, agent, op, schema, {assertFormat}) {
  const form = document.createElement("form");
  form.className = "invoke";
  form.noValidate = true;  // checked below with the server's own messages, then by the server
  form.innerHTML = `<div class="tabs" role="tablist"><button type="button" class="secondary" role="tab" aria-selected="true" data-tab="form">Form</button><button type="button" class="secondary" role="tab" aria-selected="false" data-tab="json">JSON</button></div>
    <div class="form-tab"></div><div class="json-tab" hidden><textarea rows="10" cols="60" aria-label="payload as JSON"></textarea></div>
    <label class="inline"><input type="checkbox" class="stream"> stream the reply</label>
    <button type="submit">Invoke</button><div class="reply" aria-live="polite"></div>`;
  const built = buildForm(schema);
  form.querySelector(".form-tab").appendChild(built.element);
  const textarea = form.querySelector("textarea");
  let tab = "form";
  form.querySelectorAll("[data-tab]").forEach((b) => (b.onclick = () => {
    if (b.dataset.tab === "json" && tab === "form") textarea.value = JSON.stringify(built.read() ?? {}, null, 2);
    tab = b.dataset.tab;
    form.querySelectorAll("[data-tab]").forEach((x) => x.setAttribute("aria-selected", String(x === b)));
    form.querySelector(".form-tab").hidden = tab !== "form";
    form.querySelector(".json-tab").hidden = tab !== "json";
  }));
  const failed = (r, reply) => {
    const unplaced = showViolations(form, r.body?.error?.details?.violations || []);
    reply.innerHTML = `<p class="error">${esc(errorText(r))}</p>` + (unplaced.length ? pretty(unplaced) : "");
  };
  form.onsubmit = async (e) => {
    e.preventDefault();
    const reply = form.querySelector(".reply");
    let payload;
    try { payload = tab === "json" ? JSON.parse(textarea.value || "{}") : built.read() ?? {}; }
    catch (err) { reply.innerHTML = `<p class="error">not JSON: ${esc(err.message)}</p>`; return; }
    // Checked here first, in the server's words, so that a mistake costs no call.
    const problems = validate(schema, payload, {assertFormat});
    if (problems.length) {
      const unplaced = showViolations(form, problems);
      reply.innerHTML = `<p class="error">not sent: ${problems.length} problem${problems.length === 1 ? "" : "s"} to fix</p>` + (unplaced.length ? pretty(unplaced) : "");
      form.querySelector(".field.invalid input, .field.invalid select, .field.invalid textarea")?.focus();
      return;
    }
    const path = `/agents/${encodeURIComponent(agent)}/operations/${encodeURIComponent(op)}/invoke`;
    if (form.querySelector(".stream").checked) {
      reply.innerHTML = `<h3>Events</h3><ol class="events"></ol>`;
      const list = reply.querySelector(".events");
      const r = await streamApi(path, payload, (name, data) => {
        list.insertAdjacentHTML("beforeend", `<li><strong>${esc(name)}</strong> ${pretty(data)}</li>`);
      });
      if (r) failed(r, reply); else showViolations(form, []);
      return;
    }
    const r = await api(path, {method: "POST", body: payload});
    if (r.ok) { showViolations(form, []); reply.innerHTML = `<h3>Reply</h3>${pretty(r.body)}`; return; }
    failed(r, reply);
  };
  section.appendChild(form);
}

// --- Scenarios, versions, compatibility ---------------------------------------------------------
async function scenarios() {
  const r = await api("/scenarios");
  main.innerHTML = `<h1>Scenarios</h1><ul>${(r.body.scenarios || []).map((s) =>
    `<li><a href="#/scenarios/${encodeURIComponent(s.scenario)}">${esc(s.scenario)}</a> <span class="muted">${esc(s.versions.join(", "))}</span></li>`).join("")}</ul>`;
}

async function scenario(name) {
  const list = (await api("/scenarios")).body.scenarios || [];
  const s = list.find((x) => x.scenario === name);
  if (!s) { main.innerHTML = `<p class="error">no scenario ${esc(name)}</p>`; return; }
  const options = s.versions.map((v) => `<option>${esc(v)}</option>`).join("");
  main.innerHTML = `<h1>${esc(name)}</h1>
    <p><a href="#/scenarios/${encodeURIComponent(name)}/evolution">Evolution</a></p>
    <label>Version <select id="version">${options}</select></label>
    <label>Language <input id="lang" size="6" placeholder="en"></label>
    <div id="template"></div>
    <h2>Compatibility</h2>
    <label>From <select id="from">${options}</select></label> <label>to <select id="to">${options}</select></label>
    <button id="compare" type="button">Compare</button><div id="report"></div>
    <h2>Profile</h2><div id="profile"></div>`;
  const show = async () => {
    const v = document.getElementById("version").value;
    const lang = document.getElementById("lang").value;
    const t = await api(`/scenarios/${encodeURIComponent(name)}/template?schema_version=${encodeURIComponent(v)}${lang ? `&preferred_language=${encodeURIComponent(lang)}` : ""}`);
    document.getElementById("template").innerHTML = t.ok
      ? `<table><tr><th>key</th><th>type</th><th>required</th><th>description</th></tr>${t.body.keys.map((k) =>
          `<tr><td>${esc(k.key_name)}</td><td>${esc(k.key_type)}</td><td>${k.required ? "yes" : ""}</td><td>${esc(k.semantic_description)}</td></tr>`).join("")}</table>`
        + (t.body.deprecation_warning ? `<p class="error">${esc(t.body.deprecation_warning)}</p>` : "")
      : `<p class="error">${esc(errorText(t))}</p>`;
  };
  document.getElementById("version").onchange = show;
  document.getElementById("lang").onchange = show;
  document.getElementById("version").value = s.latest_version;
  await show();
  document.getElementById("compare").onclick = async () => {
    const c = await api(`/scenarios/${encodeURIComponent(name)}/compatibility`, {method: "POST",
      body: {from: document.getElementById("from").value, to: document.getElementById("to").value}});
    document.getElementById("report").innerHTML = c.ok
      ? `<p>${c.body.breaking ? `<strong class="error">breaking</strong>` : "compatible"}: needs a ${esc(c.body.required_bump)} version</p>
         <ul>${c.body.changes.map((ch) => `<li class="${ch.breaking ? "error" : ""}">${esc(ch.direction)} ${esc(ch.kind)}: ${esc(ch.message)}</li>`).join("")}</ul>`
      : `<p class="error">${esc(errorText(c))}</p>`;
  };
  const p = await api(`/contracts/${encodeURIComponent(name)}/compatibility`);
  document.getElementById("profile").innerHTML = p.ok
    ? `<p>accepts ${esc(p.body.accepts.join(", "))}; default ${esc(p.body.default)}</p>` +
      (p.body.deprecations.length ? `<ul>${p.body.deprecations.map((d) => `<li>${esc(d.version)} deprecated, withdrawn on ${esc(d.deprecation_date)}</li>`).join("")}</ul>` : "")
    : "";
}

// --- Evolution (seed 000 §6.2) -------------------------------------------------------------------
async function evolution(name) {
  const r = await api(`/scenarios/${encodeURIComponent(name)}/evolution`);
  if (!r.ok) { main.innerHTML = `<h1>Evolution of ${esc(name)}</h1><p class="error">${esc(errorText(r))}</p>`; return; }
  const e = r.body;
  const now = Date.now();
  const halfLife = e.limits.heat_half_life_hours * 3600e3;
  const chart = (c) => lineChart(heatCurve(c.heat_history || [], halfLife, now), {threshold: e.limits.heat_threshold,
    className: "heat-chart", label: `heat of ${c.id} over time: ${c.heat} now, trigger at ${e.limits.heat_threshold}`});
  main.innerHTML = `<h1>Evolution of ${esc(name)}</h1>
    <p class="muted">${e.experimental_keys} of ${e.limits.max_experimental_keys} experimental keys; a cluster triggers at heat ${e.limits.heat_threshold} (dashed line); heat halves every ${e.limits.heat_half_life_hours} h</p>
    <h2>Pool</h2>
    <table><tr><th>cluster</th><th>state</th><th>heat over time</th><th>clients</th><th>fragments</th><th>key</th><th></th></tr>
    ${e.clusters.map((c) => `<tr data-cluster="${esc(c.id)}"><td>${esc(c.id)}</td><td>${esc(c.state)}</td><td>${chart(c)} ${c.heat}</td>
      <td>${c.distinct_clients}</td><td>${esc(c.samples.join(" | "))}</td><td>${esc(c.key_name || "")}</td>
      <td>${c.state === "awaiting_approval" ? `<button data-approve="${esc(c.id)}">Approve</button> <button class="secondary" data-reject="${esc(c.id)}">Reject</button>` : ""}</td></tr>`).join("")}</table>
    <h2>Keys</h2>
    <table><tr><th>key</th><th>state</th><th>usage</th><th>types</th><th>adoption</th><th>alignment</th></tr>
    ${e.keys.map((k) => `<tr><td>${esc(k.key_name)}</td><td>${esc(k.state)}</td>
      <td>${(k.metrics.usage_frequency * 100).toFixed(1)}%</td><td>${(k.metrics.value_type_correctness * 100).toFixed(1)}%</td>
      <td>${(k.metrics.client_adoption_rate * 100).toFixed(1)}%</td>
      <td>${k.metrics.semantic_alignment_accuracy === null ? "not judged" : (k.metrics.semantic_alignment_accuracy * 100).toFixed(1) + "%"}</td></tr>`).join("")}</table>
    <div id="decision" aria-live="polite"></div>`;
  for (const b of main.querySelectorAll("[data-approve], [data-reject]")) {
    b.onclick = async () => {
      const approve = b.dataset.approve !== undefined;
      const id = approve ? b.dataset.approve : b.dataset.reject;
      const d = await api(`/scenarios/${encodeURIComponent(name)}/evolution/clusters/${encodeURIComponent(id)}/${approve ? "approve" : "reject"}`, {method: "POST", body: {}});
      if (!d.ok) { document.getElementById("decision").innerHTML = `<p class="error">${esc(errorText(d))}</p>`; return; }
      await evolution(name);
    };
  }
}

// --- Status ------------------------------------------------------------------------------------
// Per route from Prometheus text: requests by status and the latency histogram's buckets.
function parseMetrics(text) {
  const routes = {};
  const route = (name) => (routes[name] ??= {requests: 0, errors: 0, buckets: []});
  for (const line of text.split("\n")) {
    let m = /^schemagate_http_requests_total\{method="[^"]*",route="([^"]*)",status="(\d+)"\} (\S+)/.exec(line);
    if (m) { const r = route(m[1]); r.requests += Number(m[3]); if (Number(m[2]) >= 400) r.errors += Number(m[3]); continue; }
    m = /^schemagate_http_request_duration_seconds_bucket\{route="([^"]*)",le="([^"]*)"\} (\S+)/.exec(line);
    if (m) route(m[1]).buckets.push([m[2] === "+Inf" ? Infinity : Number(m[2]), Number(m[3])]);
  }
  return routes;
}

// The bucket bound below which a share q of the requests finished (an upper estimate).
function quantile(buckets, q) {
  const total = buckets.length ? buckets[buckets.length - 1][1] : 0;
  if (!total) return null;
  for (const [le, count] of buckets) if (count >= q * total) return le;
  return Infinity;
}

const ms = (s) => (s === null ? "" : s === Infinity ? "> 10 s" : `${+(s * 1000).toPrecision(3)} ms`);

// The status page samples /metrics every two seconds while it is open and keeps the last
// minute: request rates and p95 latency over that minute, per route and in all.
const SAMPLE_MS = 2000, SAMPLES_KEPT = 30;
let statusRun = 0;

async function status() {
  const run = ++statusRun;
  const [health, ready] = await Promise.all([api("/healthz"), api("/readyz")]);
  main.innerHTML = `<h1>Status</h1>
    <p>health: <strong>${health.ok ? "ok" : "failing"}</strong>, readiness: <strong>${ready.ok ? "ready" : "not ready"}</strong></p>
    <h2>Requests and latency</h2><p class="muted" id="sampling">sampling /metrics every ${SAMPLE_MS / 1000} s…</p>
    <div id="overall"></div><div id="routes" class="scroll"></div>`;
  const history = [];  // {at, routes} per sample
  while (run === statusRun && location.hash.startsWith("#/status")) {
    const m = await api("/metrics");
    if (typeof m.body !== "string") {
      document.getElementById("sampling").textContent = errorText(m);
      return;
    }
    history.push({at: performance.now(), routes: parseMetrics(m.body)});
    if (history.length > SAMPLES_KEPT + 1) history.shift();
    if (history.length > 1 && run === statusRun) drawStatus(history);
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
  }
}

// Per interval between samples: requests per second and the p95 of the requests in it.
function intervals(history, pick) {
  const out = [];
  for (let i = 1; i < history.length; i++) {
    const [a, b] = [pick(history[i - 1].routes), pick(history[i].routes)];
    const seconds = (history[i].at - history[i - 1].at) / 1000;
    const delta = b.buckets.map(([le, n], k) => [le, n - (a.buckets[k]?.[1] || 0)]);
    out.push({t: history[i].at / 1000, rate: (b.requests - a.requests) / seconds, p95: quantile(delta, 0.95)});
  }
  return out;
}

function sumRoutes(routes) {
  const all = {requests: 0, errors: 0, buckets: []};
  for (const r of Object.values(routes)) {
    all.requests += r.requests;
    all.errors += r.errors;
    r.buckets.forEach(([le, n], k) => { all.buckets[k] = [le, (all.buckets[k]?.[1] || 0) + n]; });
  }
  return all;
}

function drawStatus(history) {
  const sampling = document.getElementById("sampling");
  if (!sampling) return;
  sampling.textContent = `last ${Math.round((history[history.length - 1].at - history[0].at) / 1000)} s, sampled every ${SAMPLE_MS / 1000} s`;
  const empty = {requests: 0, errors: 0, buckets: []};
  const overall = intervals(history, sumRoutes);
  const last = overall[overall.length - 1];
  const p95s = (xs) => xs.map((x) => [x.t, x.p95 === null ? 0 : Math.min(x.p95, 10) * 1000]);
  document.getElementById("overall").innerHTML = `<div class="charts">
    <figure><figcaption>all requests: ${last.rate.toFixed(1)}/s</figcaption>${lineChart(overall.map((x) => [x.t, x.rate]), {width: 260, height: 60, className: "rate-chart", label: `requests per second, now ${last.rate.toFixed(1)}`})}</figure>
    <figure><figcaption>p95 latency: ${ms(last.p95)}</figcaption>${lineChart(p95s(overall), {width: 260, height: 60, className: "latency-chart", label: `p95 latency in ms, now ${ms(last.p95)}`})}</figure></div>`;
  const now = history[history.length - 1].routes;
  const rows = Object.entries(now).map(([name, r]) => {
    const series = intervals(history, (routes) => routes[name] || empty);
    return {name, r, series, rate: series[series.length - 1].rate,
            p50: quantile(r.buckets, 0.5), p95: quantile(r.buckets, 0.95), p99: quantile(r.buckets, 0.99)};
  }).sort((a, b) => b.r.requests - a.r.requests);
  document.getElementById("routes").innerHTML = `<table id="route-stats">
    <tr><th>route</th><th>requests</th><th>errors</th><th>req/s</th><th>p50</th><th>p95</th><th>p99</th><th>req/s over time</th></tr>
    ${rows.map((x) => `<tr><td>${esc(x.name)}</td><td>${x.r.requests}</td><td>${x.r.errors}</td><td>${x.rate.toFixed(1)}</td>
      <td>${ms(x.p50)}</td><td>${ms(x.p95)}</td><td>${ms(x.p99)}</td>
      <td>${lineChart(x.series.map((p) => [p.t, p.rate]), {width: 100, height: 20, className: "route-rate", label: `${x.name}: ${x.rate.toFixed(1)} requests per second`})}</td></tr>`).join("")}</table>
    <p class="muted">p50/p95/p99 since the server started, from its histogram buckets (an upper bound)</p>`;
}

async function route() {
  const hash = location.hash.slice(1) || "/";
  const [path, query] = hash.split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  try {
    if (parts[0] === "agents" && parts[1]) await agentPage(parts[1]);
    else if (parts[0] === "scenarios" && parts[1] && parts[2] === "evolution") await evolution(parts[1]);
    else if (parts[0] === "scenarios" && parts[1]) await scenario(parts[1]);
    else if (parts[0] === "scenarios") await scenarios();
    else if (parts[0] === "status") await status();
    else await discover(params);
  } catch (err) {
    main.innerHTML = `<p class="error">${esc(err.message)}</p>`;
  }
  main.focus();
}

window.addEventListener("hashchange", route);
route();
