// Actor labels of the purge history and events pages without a browser: `node --test
// ui/testdata/`, and in `make security` through TestSecurity_UIActorNamesOnBehalfOf. A purge
// made with a workload identity must name the person behind it, not only the identity.
import test from "node:test";
import assert from "node:assert/strict";

globalThis.localStorage = { getItem: () => null, setItem() {}, removeItem() {} };
const { actorLabel } = await import("../assets/pages/purged.js");

test("a token is named with its type", () => {
  assert.equal(actorLabel({ Name: "ops-bob", AccessorID: "7c1c2a3e-aaaa", Type: "client" }), "ops-bob (client)");
  assert.equal(actorLabel({ AccessorID: "7c1c2a3e-aaaa-bbbb", Type: "client" }), "7c1c2a3e (client)");
  assert.equal(actorLabel(null), "");
});

test("a workload identity names its allocation and on whose behalf it acted", () => {
  const a = { Name: "global:default:janitor:g:t:default", Type: "workload-identity",
    AllocID: "e1000000-0000-0000-0000-000000000001", OnBehalfOf: { AccessorID: "7c1c2a3e-aaaa", Name: "alice" } };
  assert.equal(actorLabel(a), "global:default:janitor:g:t:default (workload-identity), alloc e1000000, on behalf of alice");
  const unnamed = { ...a, OnBehalfOf: { AccessorID: "9d9d9d9d-cccc" } };
  assert.equal(actorLabel(unnamed), "global:default:janitor:g:t:default (workload-identity), alloc e1000000, on behalf of 9d9d9d9d");
});
