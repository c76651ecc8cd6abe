// The namespaces page without a browser: `node --test ui/testdata/`, and in `make security`
// through TestSecurity_UINamespacesShowDriverSettings. A namespace that keeps raw_exec out is
// a security control, so the page must show it as the server applies it: an empty allow list
// admits everything, and the deny list wins over the allow list.
import test from "node:test";
import assert from "node:assert/strict";

// A DOM just large enough for dom.js: elements with attributes and children, text nodes.
class Node {
  constructor() { this.childNodes = []; }
  appendChild(c) { this.childNodes.push(c); return c; }
  replaceChildren(...c) { this.childNodes = c; }
  get textContent() { return this.childNodes.map((c) => c.textContent).join(""); }
}
class Element extends Node {
  constructor(tag) { super(); this.tagName = tag.toUpperCase(); this.attrs = {}; }
  setAttribute(k, v) { this.attrs[k] = v; }
  getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; }
  addEventListener() {}
}
class Text extends Node {
  constructor(s) { super(); this.text = s; }
  get textContent() { return this.text; }
}
globalThis.Node = Node;
globalThis.document = { createElement: (tag) => new Element(tag), createTextNode: (s) => new Text(s) };
globalThis.localStorage = { getItem: () => null, setItem() {}, removeItem() {} };

const { render } = await import("../assets/pages/namespaces.js");

function findAll(node, pred, out = []) {
  if (pred(node)) out.push(node);
  for (const c of node.childNodes || []) findAll(c, pred, out);
  return out;
}

// renderWith draws the page for the namespaces the API answers, and returns each row's
// cells by namespace name.
async function renderWith(namespaces) {
  const ctrl = new AbortController();
  let calls = 0;
  globalThis.fetch = async (path) => {
    calls++;
    assert.equal(path.split("?")[0], "/v1/namespaces");
    if (calls > 1) {
      ctrl.abort();
      throw new Error("aborted");
    }
    return { ok: true, headers: { get: () => "7" }, json: async () => namespaces };
  };
  const allowAll = { canStop: () => true, canPurge: () => false, canRestore: () => false };
  const main = new Element("main");
  await render(main, [], { acl: allowAll, signal: ctrl.signal });
  for (let i = 0; i < 50 && !ctrl.signal.aborted; i++) await new Promise((r) => setTimeout(r, 1));
  const headers = findAll(main, (n) => n.tagName === "TH").map((n) => n.textContent);
  const rows = {};
  for (const tr of findAll(main, (n) => n.tagName === "TR" && n.getAttribute("data-namespace") !== null)) {
    const cells = findAll(tr, (n) => n.tagName === "TD").map((n) => n.textContent);
    rows[tr.getAttribute("data-namespace")] = Object.fromEntries(headers.map((h, i) => [h, cells[i]]));
  }
  return rows;
}

test("task drivers and network modes are shown as the server applies them", async () => {
  const rows = await renderWith([
    { Name: "default", Capabilities: null },
    { Name: "dev", Capabilities: { EnabledTaskDrivers: ["docker", "exec"], DisabledTaskDrivers: ["raw_exec"],
      DisabledNetworkModes: ["host"] } },
    { Name: "ops", Capabilities: { EnabledNetworkModes: ["bridge"] } },
  ]);
  assert.deepEqual(Object.keys(rows), ["default", "dev", "ops"]);
  assert.equal(rows.default["Task drivers"], "any");
  assert.equal(rows.default["Network modes"], "any");
  assert.equal(rows.dev["Task drivers"], "only docker, exec; not raw_exec");
  assert.equal(rows.dev["Network modes"], "any; not host");
  assert.equal(rows.ops["Task drivers"], "any");
  assert.equal(rows.ops["Network modes"], "only bridge");
});
