// API access with the signed-in token. The token lives in localStorage and goes only to the
// page's own origin: every path here is relative, and fetch never follows a redirect to
// another origin with custom headers.

const TOKEN_KEY = "nomad.token";

export function token() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(secret) {
  if (secret) localStorage.setItem(TOKEN_KEY, secret);
  else localStorage.removeItem(TOKEN_KEY);
}

export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function headers(extra = {}) {
  const hdr = { ...extra };
  const t = token();
  if (t) hdr["X-Nomad-Token"] = t;
  return hdr;
}

function checkPath(path) {
  // Relative to our origin only: the token must never travel elsewhere.
  if (!path.startsWith("/v1/")) throw new Error("refusing non-API path " + path);
}

export async function request(method, path, { body, signal, raw } = {}) {
  checkPath(path);
  const init = { method, headers: headers(), signal, credentials: "omit", redirect: "error" };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  const resp = await fetch(path, init);
  if (!resp.ok) {
    const text = (await resp.text()).trim();
    throw new APIError(resp.status, text || resp.statusText);
  }
  if (raw) return resp;
  const index = Number(resp.headers.get("X-Nomad-Index") || 0);
  const data = await resp.json();
  return { data, index };
}

export async function get(path, opts) {
  return (await request("GET", path, opts)).data;
}

export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") u.set(k, v);
  }
  const s = u.toString();
  return s ? "?" + s : "";
}

// watch runs a blocking-query loop on path: fn receives each answer; the loop sends the last
// X-Nomad-Index back so the server answers only on change. It stops when signal aborts.
export async function watch(path, params, fn, signal, onError) {
  let index = 0;
  while (!signal.aborted) {
    try {
      const q = { ...params };
      if (index) { q.index = index; q.wait = "60s"; }
      const r = await request("GET", path + qs(q), { signal });
      if (r.index < index) index = 0; else index = r.index;
      fn(r.data);
    } catch (e) {
      if (signal.aborted) return;
      if (onError) onError(e);
      // Back off on errors so a refused or broken query does not spin.
      await new Promise((res) => setTimeout(res, 2000));
    }
  }
}

// lines reads an NDJSON (or plain text) response body as it arrives, calling fn per chunk of
// text; it ends when the body ends or signal aborts.
export async function stream(path, signal, onText) {
  const resp = await request("GET", path, { signal, raw: true });
  const reader = resp.body.getReader();
  const dec = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    onText(dec.decode(value, { stream: true }));
  }
}

export async function ndjson(path, signal, onObject) {
  let buf = "";
  await stream(path, signal, (text) => {
    buf += text;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (line) onObject(JSON.parse(line));
    }
  });
}
