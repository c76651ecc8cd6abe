// Unit tests of perms.js without a browser: `node --test ui/testdata/`. The browser suite
// (TestUI_PermissionsAgreeWithServerACL) also checks every answer against the Go acl package.
import test from "node:test";
import assert from "node:assert/strict";
import { ACL, globMatch, load } from "../assets/perms.js";

const ns = (Name, Policy, Capabilities) => ({ Namespaces: [{ Name, Policy, Capabilities }] });

test("write grants stop and purge, submit-job only stop", () => {
  const op = new ACL("client", [ns("default", "write")]);
  assert.equal(op.canStop("default"), true);
  assert.equal(op.canPurge("default"), true);
  const dev = new ACL("client", [ns("default", "read", ["submit-job"])]);
  assert.equal(dev.canStop("default"), true);
  assert.equal(dev.canPurge("default"), false);
  assert.equal(dev.canStop("other"), false);
});

test("deny wins across policies", () => {
  const a = new ACL("client", [ns("default", "write"), ns("default", "", ["deny"])]);
  assert.equal(a.canStop("default"), false);
  assert.equal(a.allowNamespaceOperation("default", "read-job"), false);
});

test("exact label before the closest glob", () => {
  const a = new ACL("client", [{ Namespaces: [
    { Name: "*", Policy: "read" }, { Name: "prod-*", Policy: "write" }, { Name: "prod-web", Policy: "deny" }] }]);
  assert.equal(a.canPurge("prod-api"), true);
  assert.equal(a.canPurge("prod-web"), false);
  assert.equal(a.canPurge("dev"), false);
  assert.equal(a.allowNamespaceOperation("dev", "read-job"), true);
});

test("management and disabled allow everything", () => {
  for (const kind of ["management", "disabled"]) assert.equal(new ACL(kind).canPurge("x"), true);
});

test("globMatch", () => {
  assert.equal(globMatch("a*b*c", "aXbYc"), true);
  assert.equal(globMatch("a*b", "ab/x"), false);
  assert.equal(globMatch("*", ""), true);
});

test("load follows roles and policies, and treats a disabled ACL system as allow-all", async () => {
  const data = {
    "/v1/acl/token/self": { Type: "client", Policies: ["p1"], Roles: [{ ID: "r1" }] },
    "/v1/acl/role/r1": { Policies: [{ Name: "p2" }] },
    "/v1/acl/policy/p1": { RulesJSON: ns("default", "read") },
    "/v1/acl/policy/p2": { RulesJSON: ns("default", "", ["purge-job"]) },
  };
  const get = async (p) => { if (p in data) return data[p]; const e = new Error("not found"); e.status = 404; throw e; };
  const { acl } = await load(get, true);
  assert.equal(acl.canPurge("default"), true);
  const off = async () => { const e = new Error("ACL support disabled"); e.status = 400; throw e; };
  assert.equal((await load(off, true)).acl.disabled, true);
});
