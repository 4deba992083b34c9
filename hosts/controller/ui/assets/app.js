// The region console: log in with an API token, then follow the region's
// objects through server-sent events. Views (chosen by the URL's hash):
//   #/map                     cloudlets on a map, by state, with counts
//   #/kind/<Kind>?filters     one kind's objects, filtered and sorted
//   #/object/<Kind>/<key>     one object: fields, Info, links, history
//   #/usage                   per cloudlet, used against quota
//   #/fluidos                 solvers, contracts, allocations
// Plain script, no build step; every text goes in through textContent.
"use strict";

const ADMIN_ONLY = "\u0000admin";
const kindViews = ["Cloudlet", "ClusterInst", "AppInst", "App"];
const fluidosKinds = ["Solver", "Contract", "Allocation"];
// Alerts: rows of this kind, when a source emits them, are listed on the
// map and usage views (with their cloudlet) and in their own table.
const ALERT_KIND = "Alert";
const rows = new Map(); // "kind/key" -> row
let source = null;
let detail = null; // the object page's fetched row
let renderQueued = false;

function $(id) { return document.getElementById(id); }
function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}
const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

function setStatus(text) { $("status").textContent = text; }

function stateClass(state) {
  if (state === "READY" || state === "ACTIVE" || state === "SOLVED" || state === "ONLINE") return "ok";
  if (/ERROR|FAILED|DEGRADED|TIMED_OUT|NOSPACE|FULL/.test(state || "")) return "error";
  if (/REQUESTED|ING$|INIT|RUNNING|PENDING/.test(state || "")) return "busy";
  return "";
}

function orgName(org) { return org === ADMIN_ONLY ? "(admin only)" : (org || "(everyone)"); }

function age(t) {
  if (!t) return "";
  const s = Math.max(0, (Date.now() - new Date(t).getTime()) / 1000);
  if (s < 60) return Math.floor(s) + "s";
  if (s < 3600) return Math.floor(s / 60) + "m";
  if (s < 86400) return Math.floor(s / 3600) + "h";
  return Math.floor(s / 86400) + "d";
}

function objectHref(kind, key) { return "#/object/" + encodeURIComponent(kind) + "/" + encodeURIComponent(key); }
function kindHref(kind, params) {
  const q = new URLSearchParams(params || {}).toString();
  return "#/kind/" + encodeURIComponent(kind) + (q ? "?" + q : "");
}

function rowsOf(kind) { return [...rows.values()].filter((r) => r.kind === kind); }

// route parses the hash into a view and its arguments.
function route() {
  const h = location.hash.replace(/^#\/?/, "");
  const [path, query] = h.split("?");
  const parts = path.split("/").map(decodeURIComponent);
  const params = new URLSearchParams(query || "");
  if (parts[0] === "kind" && parts[1]) return { view: "kind", kind: parts[1], params };
  if (parts[0] === "object" && parts[1]) return { view: "object", kind: parts[1], key: parts.slice(2).join("/"), params };
  if (["usage", "fluidos", "map"].includes(parts[0])) return { view: parts[0], params };
  return { view: "map", params };
}

function renderNav(r) {
  const nav = $("nav");
  nav.replaceChildren();
  const items = [["map", "#/map", "Map"], ...kindViews.map((k) => ["kind:" + k, kindHref(k), k]),
    ["usage", "#/usage", "Usage"], ["fluidos", "#/fluidos", "FLUIDOS"]];
  if (rowsOf(ALERT_KIND).length) items.push(["kind:" + ALERT_KIND, kindHref(ALERT_KIND), "Alerts (" + rowsOf(ALERT_KIND).length + ")"]);
  const current = r.view === "kind" ? "kind:" + r.kind : r.view === "object" ? "kind:" + r.kind : r.view;
  for (const [id, href, label] of items) {
    const a = el("a", { href, text: label });
    if (id === current) a.setAttribute("aria-current", "page");
    nav.append(a);
  }
}

// openDetails are the ids of the object page's sections the user opened:
// a live re-render keeps them open.
const openDetails = new Set();

// focusMark names the focused element of the view, so that a live
// re-render gives a keyboard user the focus back where it was.
function focusMark() {
  const a = document.activeElement;
  if (!a || !$("view").contains(a) || a === $("view")) return null;
  if (a.id) return { id: a.id };
  if (a.tagName === "A") return { href: a.getAttribute("href"), text: a.textContent };
  if (a.tagName === "SUMMARY") return { summary: a.parentElement.id };
  return null;
}

function refocus(m) {
  if (!m) return;
  let e = null;
  if (m.id) e = $(m.id);
  else if (m.summary) e = document.querySelector("#" + CSS.escape(m.summary) + " > summary");
  else e = [...$("view").querySelectorAll("a")].find((a) => a.getAttribute("href") === m.href && a.textContent === m.text);
  if (e) e.focus({ preventScroll: true });
}

function render() {
  renderQueued = false;
  if (!source) return;
  const r = route();
  renderNav(r);
  const root = $("view");
  const mark = focusMark();
  root.replaceChildren();
  root.dataset.view = r.view;
  switch (r.view) {
    case "kind": renderKind(root, r.kind, r.params); break;
    case "object": renderObject(root, r.kind, r.key); break;
    case "usage": renderUsage(root); break;
    case "fluidos": renderFluidos(root); break;
    default: renderMap(root);
  }
  refocus(mark);
}

function queueRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(render);
}

// ---- views per kind ----

const columns = {
  name: { title: "Name", get: (r) => r.name || r.key },
  key: { title: "Key", get: (r) => r.key },
  phases: { title: "Pipeline", get: (r) => (r.phases || []).map((p) => p.name + " " + (p.state || "-")).join(", ") },
  org: { title: "Organization", get: (r) => orgName(r.org) },
  cloudlet: { title: "Cloudlet", get: (r) => cloudletName(r.cloudlet) },
  state: { title: "State", get: (r) => r.state || "" },
  age: { title: "Age", get: (r) => age(r.created), sortKey: (r) => (r.created ? -new Date(r.created).getTime() : -Infinity) },
  power: { title: "Power", get: (r) => r.power || "" },
  where: { title: "Where", get: (r) => r.where || "" },
  message: { title: "Latest message", get: (r) => r.message || "" },
  errors: { title: "Errors", get: (r) => (r.errors || []).join("; ") },
};

function columnsOf(kind) {
  switch (kind) {
    case "Cloudlet": return ["name", "org", "state", "age", "where", "message", "errors"];
    case "ClusterInst": return ["name", "org", "cloudlet", "state", "age", "message", "errors"];
    case "AppInst": return ["name", "org", "cloudlet", "state", "power", "age", "message", "errors"];
    case "App": return ["name", "org", "where", "age"];
    default: return ["name", "org", "state", "where", "message", "errors"];
  }
}

// nameOfKey is the name in a key string ("organization=o,name=n" -> "n").
function nameOfKey(key) {
  const m = /(?:^|,)name=([^,]*)/.exec(key || "");
  return m ? m[1] : key;
}

function cloudletName(key) {
  if (!key) return "";
  const c = rows.get("Cloudlet/" + key);
  return (c && c.name) || nameOfKey(key);
}

function uniq(list) { return [...new Set(list.filter((x) => x !== undefined && x !== ""))].sort(); }

function filterSelect(id, label, values, current, show) {
  const sel = el("select", { id, name: id });
  sel.append(el("option", { value: "", text: "all" }));
  for (const v of values) {
    const o = el("option", { value: v, text: show ? show(v) : v });
    if (v === current) o.selected = true;
    sel.append(o);
  }
  return el("label", {}, label + " ", sel);
}

function renderKind(root, kind, params) {
  const all = rowsOf(kind);
  const f = { org: params.get("org") || "", cloudlet: params.get("cloudlet") || "", state: params.get("state") || "", q: params.get("q") || "" };
  const sort = params.get("sort") || "name";
  const dir = params.get("dir") === "desc" ? -1 : 1;
  root.append(el("h2", { text: kind }));

  const form = el("form", { class: "filters", id: "filters", role: "search" });
  form.append(filterSelect("f-org", "Organization", uniq(all.map((r) => r.org)), f.org, orgName));
  if (all.some((r) => r.cloudlet) && kind !== "Cloudlet") {
    form.append(filterSelect("f-cloudlet", "Cloudlet", uniq(all.map((r) => r.cloudlet)), f.cloudlet, cloudletName));
  }
  form.append(filterSelect("f-state", "State", uniq(all.map((r) => r.state)), f.state));
  const text = el("input", { id: "f-q", type: "search", placeholder: "name, message, error…", value: f.q });
  form.append(el("label", {}, "Text ", text));
  const apply = () => {
    const p = new URLSearchParams();
    const o = $("f-org").value, c = $("f-cloudlet") ? $("f-cloudlet").value : "", s = $("f-state").value, q = $("f-q").value.trim();
    if (o) p.set("org", o);
    if (c) p.set("cloudlet", c);
    if (s) p.set("state", s);
    if (q) p.set("q", q);
    if (params.get("sort")) p.set("sort", params.get("sort"));
    if (params.get("dir")) p.set("dir", params.get("dir"));
    history.replaceState(null, "", kindHref(kind, Object.fromEntries(p)));
    const focused = document.activeElement && document.activeElement.id;
    render();
    if (focused && $(focused)) {
      $(focused).focus();
      if (focused === "f-q") $(focused).setSelectionRange($(focused).value.length, $(focused).value.length);
    }
  };
  form.addEventListener("change", apply);
  text.addEventListener("input", apply);
  form.addEventListener("submit", (e) => { e.preventDefault(); apply(); });
  root.append(form);

  const q = f.q.toLowerCase();
  const list = all.filter((r) => (!f.org || r.org === f.org) && (!f.cloudlet || r.cloudlet === f.cloudlet) && (!f.state || r.state === f.state) &&
    (!q || [r.key, r.name, r.message, r.where, r.org, ...(r.errors || [])].some((x) => (x || "").toLowerCase().includes(q))));
  const cols = columnsOf(kind);
  const col = columns[sort] || columns.name;
  const keyOf = col.sortKey || col.get;
  list.sort((a, b) => {
    const x = keyOf(a), y = keyOf(b);
    const c = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
    return dir * (c || a.key.localeCompare(b.key));
  });
  root.append(el("p", { class: "count", id: "count", text: list.length + " of " + all.length }));
  if (list.length === 0) {
    root.append(el("p", { class: "empty", text: all.length ? "nothing matches the filters" : "none" }));
    return;
  }
  root.append(tableOf(kind, list, cols, { params, sort, dir }));
}

// tableOf renders rows of kind in cols; with sorting (params, sort, dir)
// the column titles are links that sort by them.
function tableOf(kind, list, cols, sorting) {
  const table = el("table", { dataset: { kind } });
  const head = table.createTHead().insertRow();
  for (const c of cols) {
    const th = el("th", { scope: "col", dataset: { col: c } });
    if (sorting) {
      const { params, sort, dir } = sorting;
      const next = new URLSearchParams(params);
      next.set("sort", c);
      next.set("dir", sort === c && dir === 1 ? "desc" : "asc");
      th.append(el("a", { href: kindHref(kind, Object.fromEntries(next)), text: columns[c].title + (sort === c ? (dir === 1 ? " ▲" : " ▼") : "") }));
      if (sort === c) th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    } else {
      th.textContent = columns[c].title;
    }
    head.append(th);
  }
  const body = table.createTBody();
  for (const r of list) {
    const tr = body.insertRow();
    tr.dataset.key = r.key;
    for (const c of cols) {
      const td = tr.insertCell();
      td.className = c;
      td.dataset.label = columns[c].title;
      const v = columns[c].get(r);
      if (c === "name" || c === "key") td.append(el("a", { href: objectHref(kind, r.key), text: v, title: r.key }));
      else if (c === "cloudlet" && r.cloudlet) td.append(el("a", { href: objectHref("Cloudlet", r.cloudlet), text: v }));
      else if (c === "phases") td.append(pipeline(r.phases || []));
      else td.textContent = v;
      if (c === "state") td.className = "state " + stateClass(r.state);
      if (c === "age" && r.created) td.title = new Date(r.created).toISOString();
      if (c === "errors" && v) td.classList.add("error");
    }
  }
  return el("div", { class: "scroll" }, table);
}

function pipeline(phases) {
  const ol = el("ol", { class: "pipeline" });
  for (const p of phases) {
    ol.append(el("li", { class: "phase " + stateClass(p.state), dataset: { phase: p.name, state: p.state || "" } }, p.name + " ", el("span", { text: p.state || "—" })));
  }
  return ol;
}

// ---- an object's page ----

let detailFor = "";
let detailSeq = 0;

async function fetchDetail(kind, key) {
  const id = kind + "/" + key;
  const seq = ++detailSeq;
  try {
    const resp = await fetch("object?" + new URLSearchParams({ kind, key }), { credentials: "same-origin" });
    if (seq !== detailSeq) return;
    detail = resp.ok ? await resp.json() : { missing: resp.status };
  } catch (e) {
    if (seq !== detailSeq) return;
    detail = { missing: "unreachable" };
  }
  detailFor = id;
  queueRender();
}

function renderObject(root, kind, key) {
  const id = kind + "/" + key;
  if (detailFor !== id) {
    root.append(el("h2", { text: kind + " " + key }), el("p", { class: "empty", text: "loading…" }));
    if (!detail || detail.pending !== id) {
      detail = { pending: id };
      fetchDetail(kind, key);
    }
    return;
  }
  const r = detail;
  const row = rows.get(id);
  root.append(el("p", { class: "crumbs" }, el("a", { href: kindHref(kind), text: kind }), " / " + ((row && row.name) || key)));
  if (r.missing) {
    root.append(el("h2", { text: kind + " " + key }), el("p", { class: "error", id: "object-missing",
      text: r.missing === "deleted" ? "deleted" : "not found (or not yours to see)" }));
    return;
  }
  const head = el("h2", { id: "object-title" }, (r.name || r.key) + " ");
  if (r.state) head.append(el("span", { class: "state badge " + stateClass(r.state), id: "object-state", text: r.state }));
  root.append(head);
  const facts = el("dl", { class: "facts" });
  const fact = (k, v) => { if (v) facts.append(el("dt", { text: k }), el("dd", {}, v)); };
  fact("Key", r.key);
  fact("Organization", orgName(r.org));
  fact("Message", r.message);
  fact("Power", r.power);
  fact("Age", r.created ? age(r.created) + " (created " + new Date(r.created).toISOString() + ")" : "");
  if (r.location) fact("Location", r.location.lat + ", " + r.location.lon);
  root.append(facts);
  if ((r.errors || []).length) {
    root.append(el("div", { class: "error-box", role: "alert" }, el("h3", { text: "Errors" }), el("ul", {}, ...r.errors.map((e) => el("li", { text: e })))));
  }
  const links = el("ul", { class: "links", id: "links" });
  for (const l of r.links || []) {
    const target = rows.get(l.kind + "/" + l.key);
    links.append(el("li", {}, l.rel + ": ", el("a", { href: objectHref(l.kind, l.key), dataset: { rel: l.rel }, text: (target && target.name) || nameOfKey(l.key), title: l.key }),
      target && target.state ? el("span", { class: "state " + stateClass(target.state), text: " " + target.state }) : null));
  }
  // What refers to this object: instances of a cluster, of an App; clusters
  // and instances of a cloudlet.
  for (const o of rows.values()) {
    for (const l of o.links || []) {
      if (l.kind === kind && l.key === key) {
        links.append(el("li", {}, o.kind + ": ", el("a", { href: objectHref(o.kind, o.key), dataset: { rel: "child" }, text: o.name || o.key }),
          el("span", { class: "state " + stateClass(o.state), text: " " + (o.state || "") })));
      }
    }
  }
  if (links.childElementCount) root.append(el("h3", { text: "Related" }), links);
  if ((r.usage || []).length) root.append(el("h3", { text: "Usage" }), usageBars(r));
  const hist = (r.detail && r.detail.history) || [];
  root.append(el("h3", { text: "History" }));
  if (!hist.length) root.append(el("p", { class: "empty", text: "nothing recorded since the controller started" }));
  const histRoot = el("div", { id: "history" });
  for (const op of [...hist].reverse()) {
    const sec = el("section", { class: "op", dataset: { request: String(op.request) } });
    sec.append(el("h4", { text: "Request " + op.request + ", from " + new Date(op.started).toLocaleString() }));
    if (op.dropped) sec.append(el("p", { class: "empty", text: op.dropped + " older steps not kept" }));
    const ol = el("ol", { class: "steps" });
    for (const s of op.steps || []) {
      const li = el("li", { class: "step" + (s.error ? " error" : "") + (s.state ? " state" : "") });
      li.append(el("time", { datetime: s.time, text: new Date(s.time).toLocaleTimeString() }), " ");
      if (s.state) li.append(el("span", { class: "state " + stateClass(s.state), text: s.state }));
      else li.append(el("span", { class: "msg", text: (s.task && s.task !== s.message ? s.task + ": " : "") + s.message }));
      ol.append(li);
    }
    sec.append(ol);
    histRoot.append(sec);
  }
  root.append(histRoot);
  const d = r.detail || {};
  for (const [title, data, id] of [["Fields", d.fields, "fields"], ["Info", d.info, "info"]]) {
    if (!data) continue;
    const det = el("details", { id });
    det.open = openDetails.has(id);
    det.addEventListener("toggle", () => { if (det.open) openDetails.add(id); else openDetails.delete(id); });
    det.append(el("summary", { text: title }), el("pre", { text: JSON.stringify(data, null, 2) }));
    root.append(det);
  }
}

// ---- map ----

function countsByCloudlet() {
  const n = new Map();
  for (const r of rows.values()) {
    if ((r.kind !== "ClusterInst" && r.kind !== "AppInst") || !r.cloudlet) continue;
    if (!n.has(r.cloudlet)) n.set(r.cloudlet, { clusters: 0, instances: 0 });
    n.get(r.cloudlet)[r.kind === "ClusterInst" ? "clusters" : "instances"]++;
  }
  return n;
}

function renderMap(root) {
  root.append(el("h2", { text: "Cloudlets" }));
  const cloudlets = rowsOf("Cloudlet");
  // Cloudlets the viewer's objects run on but that belong to another
  // organization: named, without details (as the API shows them).
  const known = new Set(cloudlets.map((c) => c.key));
  for (const r of rows.values()) {
    if (r.kind === "Cloudlet" || !r.cloudlet || known.has(r.cloudlet)) continue;
    known.add(r.cloudlet);
    cloudlets.push({ kind: "Cloudlet", key: r.cloudlet, name: cloudletName(r.cloudlet), state: "", foreign: true });
  }
  cloudlets.sort((a, b) => (a.name || a.key).localeCompare(b.name || b.key));
  const counts = countsByCloudlet();
  const nameOf = (c) => (c.foreign ? el("span", { title: c.key, text: c.name + " (another organization's)" }) : el("a", { href: objectHref("Cloudlet", c.key), text: c.name || c.key }));
  const countText = (c) => { const n = counts.get(c.key) || { clusters: 0, instances: 0 }; return n.clusters + " clusters, " + n.instances + " instances"; };
  const wrap = el("div", { class: "mapwrap" });
  // A plain equirectangular projection: x = longitude, y = -latitude.
  const map = svg("svg", { viewBox: "-180 -90 360 180", id: "map", role: "img", "aria-label": "map of cloudlets" });
  map.append(svg("rect", { x: -180, y: -90, width: 360, height: 180, class: "sea" }));
  for (let lon = -150; lon <= 150; lon += 30) map.append(svg("line", { x1: lon, y1: -90, x2: lon, y2: 90, class: lon === 0 ? "axis" : "grid" }));
  for (let lat = -60; lat <= 60; lat += 30) map.append(svg("line", { x1: -180, y1: -lat, x2: 180, y2: -lat, class: lat === 0 ? "axis" : "grid" }));
  const unplaced = [];
  for (const c of cloudlets) {
    if (!c.location) { unplaced.push(c); continue; }
    const a = svg("a", { href: objectHref("Cloudlet", c.key), "data-key": c.key, class: "site " + stateClass(c.state) });
    const title = svg("title");
    title.textContent = (c.name || c.key) + ": " + c.state + ", " + countText(c);
    a.append(title, svg("circle", { cx: c.location.lon, cy: -c.location.lat, r: 3 }));
    const label = svg("text", { x: c.location.lon + 4, y: -c.location.lat + 1.5 });
    label.textContent = c.name || c.key;
    a.append(label);
    map.append(a);
  }
  wrap.append(map);
  const side = el("div", { class: "side" });
  const legend = el("ul", { class: "legend" });
  for (const c of cloudlets) {
    legend.append(el("li", { dataset: { key: c.key } }, nameOf(c), " ",
      el("span", { class: "state " + stateClass(c.state), text: c.state }), " ", el("span", { class: "counts", text: countText(c) })));
  }
  side.append(el("h3", { text: "All cloudlets (" + cloudlets.length + ")" }), legend);
  const none = el("ul", { id: "unplaced" });
  for (const c of unplaced) none.append(el("li", { dataset: { key: c.key } }, nameOf(c), " ", el("span", { class: "state " + stateClass(c.state), text: c.state })));
  side.append(el("h3", { text: "Without a location (" + unplaced.length + ")" }), unplaced.length ? none : el("p", { class: "empty", text: "none" }));
  const alerts = rowsOf(ALERT_KIND);
  if (alerts.length) side.append(el("h3", { text: "Alerts (" + alerts.length + ")" }), alertList(alerts));
  wrap.append(side);
  root.append(wrap);
}

function alertList(alerts) {
  return el("ul", { class: "alerts" }, ...alerts.map((a) => el("li", { class: "error" }, el("a", { href: objectHref(a.kind, a.key), text: (a.cloudlet ? cloudletName(a.cloudlet) + " " : "") + (a.name || a.key) }),
    ": " + (a.message || a.state || ""))));
}

// ---- usage ----

function usageBars(r) {
  const ul = el("ul", { class: "bars" });
  const instances = rowsOf("AppInst").filter((x) => x.cloudlet === r.key).length;
  const usage = [...(r.usage || [])];
  if (r.kind === "Cloudlet" && !usage.some((u) => u.name === "Instances")) usage.push({ name: "Instances", used: instances });
  for (const u of usage) {
    const cap = u.quota || u.total || 0;
    const pct = cap ? Math.min(100, (100 * u.used) / cap) : 0;
    const bar = el("div", { class: "bar" + (pct >= 90 ? " high" : pct >= 70 ? " mid" : ""), role: "meter",
      "aria-valuemin": "0", "aria-valuemax": String(cap || u.used), "aria-valuenow": String(u.used), "aria-label": u.name });
    const fill = el("div", { class: "fill" });
    fill.style.width = (cap ? pct : 0) + "%";
    bar.append(fill);
    const units = u.units ? " " + u.units : "";
    const against = u.quota ? " of quota " + u.quota + units : u.total ? " of " + u.total + units : " (no quota)";
    ul.append(el("li", { dataset: { resource: u.name } }, el("span", { class: "rname", text: u.name }), bar,
      el("span", { class: "rval", text: u.used + units + against })));
  }
  return ul;
}

function renderUsage(root) {
  root.append(el("h2", { text: "Usage per cloudlet" }));
  const alerts = rowsOf(ALERT_KIND);
  if (alerts.length) root.append(el("h3", { text: "Alerts" }), alertList(alerts));
  const cloudlets = rowsOf("Cloudlet").sort((a, b) => (a.name || a.key).localeCompare(b.name || b.key));
  if (!cloudlets.length) root.append(el("p", { class: "empty", text: "no cloudlet" }));
  for (const c of cloudlets) {
    const sec = el("section", { class: "usage", dataset: { key: c.key } });
    sec.append(el("h3", {}, el("a", { href: objectHref("Cloudlet", c.key), text: c.name || c.key }), " ",
      el("span", { class: "state " + stateClass(c.state), text: c.state })));
    sec.append(usageBars(c));
    root.append(sec);
  }
}

// ---- FLUIDOS ----

function renderFluidos(root) {
  root.append(el("h2", { text: "FLUIDOS" }));
  let any = false;
  for (const kind of fluidosKinds) {
    const list = rowsOf(kind).sort((a, b) => a.key.localeCompare(b.key));
    if (!list.length) continue;
    any = true;
    root.append(el("h3", { text: kind + " (" + list.length + ")" }));
    // The key column is "<node>/<id>": the same id on both sides of a trade.
    const cols = kind === "Solver" ? ["key", "org", "state", "where", "phases", "message", "errors"] : ["key", "org", "state", "where", "message", "errors"];
    root.append(tableOf(kind, list, cols));
  }
  if (!any) root.append(el("p", { class: "empty", id: "no-fluidos", text: "no FLUIDOS node reports to this controller" }));
}

// ---- the event stream ----

// onRowChanged refreshes the open object's page when its row changed; a
// deleted object's page says so without asking the server for it again.
function onRowChanged(id, deleted) {
  const r = route();
  if (r.view === "object" && r.kind + "/" + r.key === id) {
    if (deleted) {
      ++detailSeq;
      detail = { missing: "deleted" };
      detailFor = id;
    } else {
      fetchDetail(r.kind, r.key);
    }
  }
  queueRender();
}

function follow() {
  if (source) source.close();
  source = new EventSource("events");
  source.addEventListener("snapshot", (e) => {
    rows.clear();
    for (const row of JSON.parse(e.data)) rows.set(row.kind + "/" + row.key, row);
    setStatus("live");
    const r = route();
    if (r.view === "object") fetchDetail(r.kind, r.key);
    queueRender();
  });
  source.addEventListener("put", (e) => {
    const row = JSON.parse(e.data);
    rows.set(row.kind + "/" + row.key, row);
    onRowChanged(row.kind + "/" + row.key);
  });
  // Only an object's detail changed (its history grew): refetch it when
  // its page is open.
  source.addEventListener("detail", (e) => {
    const d = JSON.parse(e.data);
    const r = route();
    if (r.view === "object" && r.kind === d.kind && r.key === d.key) fetchDetail(r.kind, r.key);
  });
  source.addEventListener("delete", (e) => {
    const d = JSON.parse(e.data);
    rows.delete(d.kind + "/" + d.key);
    onRowChanged(d.kind + "/" + d.key, true);
  });
  source.onerror = () => {
    setStatus("reconnecting");
    // A stream refused for lack of a session closes for good: log in again.
    if (source.readyState === EventSource.CLOSED) showLogin();
  };
  $("login").hidden = true;
  $("logout").hidden = false;
  $("nav").hidden = false;
}

function showLogin() {
  if (source) source.close();
  source = null;
  setStatus("not connected");
  $("login").hidden = false;
  $("logout").hidden = true;
  $("nav").hidden = true;
  $("view").replaceChildren();
}

$("login").addEventListener("submit", async (e) => {
  e.preventDefault();
  const body = new URLSearchParams({ token: $("token").value });
  $("token").value = "";
  const resp = await fetch("login", { method: "POST", body, credentials: "same-origin" });
  if (!resp.ok) {
    $("login-error").textContent = "Login failed: " + (await resp.text());
    $("login-error").hidden = false;
    return;
  }
  $("login-error").hidden = true;
  follow();
});

$("logout").addEventListener("click", async () => {
  await fetch("logout", { method: "POST", credentials: "same-origin" });
  rows.clear();
  showLogin();
});

window.addEventListener("hashchange", () => {
  const r = route();
  if (r.view === "object") { detailFor = ""; detail = null; }
  render();
  $("view").focus({ preventScroll: true });
});

// Ages move on: refresh the view now and then (not on an object's page,
// whose open sections would close).
setInterval(() => { if (route().view !== "object") queueRender(); }, 30000);

// Try the session cookie first; show the login form when there is none.
fetch("session", { credentials: "same-origin" }).then((r) => r.json()).then((s) => {
  if (s.session) follow(); else showLogin();
}, showLogin);
