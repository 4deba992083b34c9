// The status page: log in with an API token, then follow the region's
// objects through server-sent events.
"use strict";

const order = ["Cloudlet", "ClusterInst", "AppInst", "Contract", "Allocation"];
const rows = new Map(); // "kind/key" -> row
let source = null;

function $(id) { return document.getElementById(id); }

function setStatus(text) { $("status").textContent = text; }

function stateClass(state) {
  if (state === "READY") return "READY";
  if (/ERROR|FAILED|DEGRADED/.test(state)) return "error";
  if (/REQUESTED|ING$|INIT/.test(state)) return "busy";
  return "";
}

function render() {
  const byKind = new Map();
  for (const row of rows.values()) {
    if (!byKind.has(row.kind)) byKind.set(row.kind, []);
    byKind.get(row.kind).push(row);
  }
  const kinds = [...new Set([...order, ...byKind.keys()])];
  const root = $("tables");
  root.replaceChildren();
  for (const kind of kinds) {
    const list = (byKind.get(kind) || []).sort((a, b) => a.key.localeCompare(b.key));
    if (list.length === 0 && !order.includes(kind)) continue;
    const h = document.createElement("h2");
    h.textContent = kind + (list.length ? " (" + list.length + ")" : "");
    root.append(h);
    if (list.length === 0) {
      const p = document.createElement("p");
      p.className = "empty";
      p.textContent = "none";
      root.append(p);
      continue;
    }
    const table = document.createElement("table");
    table.dataset.kind = kind;
    const head = table.createTHead().insertRow();
    for (const title of ["Key", "Organization", "State", "Where", "Latest message", "Errors"]) {
      const th = document.createElement("th");
      th.textContent = title;
      head.append(th);
    }
    const body = table.createTBody();
    for (const row of list) {
      const tr = body.insertRow();
      tr.dataset.key = row.key;
      const org = row.org === "\u0000admin" ? "(admin only)" : row.org;
      const cells = [row.key, org, row.state, row.where || "", row.message || "", (row.errors || []).join("; ")];
      cells.forEach((text, i) => {
        const td = tr.insertCell();
        td.textContent = text;
        if (i === 2) td.className = "state " + stateClass(row.state);
      });
    }
    root.append(table);
  }
}

function follow() {
  if (source) source.close();
  source = new EventSource("events");
  source.addEventListener("snapshot", (e) => {
    rows.clear();
    for (const row of JSON.parse(e.data)) rows.set(row.kind + "/" + row.key, row);
    setStatus("live");
    render();
  });
  source.addEventListener("put", (e) => {
    const row = JSON.parse(e.data);
    rows.set(row.kind + "/" + row.key, row);
    render();
  });
  source.addEventListener("delete", (e) => {
    const d = JSON.parse(e.data);
    rows.delete(d.kind + "/" + d.key);
    render();
  });
  source.onerror = () => {
    setStatus("reconnecting");
    // A stream refused for lack of a session closes for good: log in again.
    if (source.readyState === EventSource.CLOSED) showLogin();
  };
  $("login").hidden = true;
  $("logout").hidden = false;
}

function showLogin() {
  if (source) source.close();
  source = null;
  setStatus("not connected");
  $("login").hidden = false;
  $("logout").hidden = true;
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
  render();
  showLogin();
});

// Try the session cookie first; show the login form when there is none.
fetch("session", { credentials: "same-origin" }).then((r) => {
  if (r.ok) follow(); else showLogin();
}, showLogin);
