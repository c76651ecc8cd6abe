// DOM helpers. Everything the API returns is untrusted (job names, meta, task output and
// events are chosen by whoever can submit a job), so text only ever reaches the page through
// textContent or attribute setters here, never through an HTML parser.

// h builds an element. attrs: "class", "href", "data-*", other attributes, or on* handlers
// given as functions. children: nodes, strings (as text), arrays, null/false (skipped).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") {
      el.addEventListener(k.slice(2), v);
    } else if (k === "href") {
      el.setAttribute("href", safeHref(String(v)));
    } else if (k === "value") {
      el.value = v;
    } else if (v === true) {
      el.setAttribute(k, "");
    } else {
      el.setAttribute(k, String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// safeHref keeps links inside the UI: fragments and same-origin paths only, so a value
// built from API data can never become a script URL.
export function safeHref(v) {
  return v.startsWith("#") || (v.startsWith("/") && !v.startsWith("//")) ? v : "#";
}

// link builds a UI route link; parts are encoded so names with / or ? stay one segment.
export function route(...parts) {
  return "#/" + parts.map((p) => encodeURIComponent(p)).join("/");
}

export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function table(headers, rows, attrs = {}) {
  return h("table", attrs,
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", {}, x)))),
    h("tbody", {}, rows));
}

export function fmtNanos(ns) {
  if (!ns) return "";
  return new Date(Number(ns) / 1e6).toISOString().replace(".000Z", "Z");
}

export function fmtTime(t) {
  if (!t || String(t).startsWith("0001-")) return "";
  return String(t);
}

export function errorBox(e) {
  const status = e && e.status ? e.status + " " : "";
  return h("div", { class: "error", role: "alert" }, status + (e && e.message ? e.message : String(e)));
}

export function shortID(id) {
  return id ? String(id).slice(0, 8) : "";
}
