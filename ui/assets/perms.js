// The one place the UI decides what a token may do. It mirrors the server's acl package
// (acl/capabilities.go and acl/acl.go): the capability table with what each disposition
// grants and what each capability implies, deny winning within a namespace rule, the exact
// rule before the closest glob, management allowing everything. The browser tests compare
// its answers with the Go package's for every capability, so the two cannot drift apart
// silently. It is pure: no DOM, no network (load() takes the fetch function).

const READ = ["read", "write"];
const WRITE = ["write"];
const READ_SCALE = ["read", "write", "scale"];
const SCALE = ["write", "scale"];
const DENY = ["deny"];

// submit-job keeps unlocking what it did before the fine-grained job capabilities; purge-job
// is deliberately not among them.
const SUBMIT_IMPLIES = [
  "register-job", "revert-job", "deregister-job", "evaluate-job", "plan-job",
  "tag-job-version", "stable-job", "fail-deployment", "pause-deployment",
  "promote-deployment", "unblock-deployment", "cancel-deployment",
  "set-alloc-health-deployment", "gc-allocation", "pause-allocation",
  "force-periodic-job", "delete-service-registration",
];

// [name, grantedBy, implies] in the order of acl/capabilities.go.
export const NAMESPACE_CAPABILITIES = [
  ["deny", DENY],
  ["list-jobs", READ],
  ["parse-job", READ],
  ["read-job", READ_SCALE],
  ["submit-job", WRITE, SUBMIT_IMPLIES],
  ["dispatch-job", WRITE],
  ["read-logs", WRITE],
  ["read-fs", WRITE],
  ["alloc-exec", WRITE],
  ["alloc-node-exec"],
  ["alloc-lifecycle", WRITE],
  ["csi-register-plugin"],
  ["csi-write-volume", WRITE],
  ["csi-read-volume", READ],
  ["csi-list-volume", READ],
  ["csi-mount-volume", WRITE],
  ["host-volume-create", WRITE, ["host-volume-read"]],
  ["host-volume-register", [], ["host-volume-create", "host-volume-read"]],
  ["host-volume-read", READ],
  ["host-volume-write", [], ["host-volume-register", "host-volume-create", "host-volume-delete", "host-volume-read"]],
  ["host-volume-delete"],
  ["list-scaling-policies", READ_SCALE],
  ["read-scaling-policy", READ_SCALE],
  ["read-job-scaling", READ_SCALE],
  ["scale-job", SCALE],
  ["sentinel-override"],
  ["submit-recommendation", SCALE],
  ["register-job"],
  ["revert-job"],
  ["deregister-job", WRITE],
  ["purge-job", WRITE, ["deregister-job"]],
  // In no shorthand: only a policy naming it (or management) lifts deletion protection.
  ["protect-job"],
  ["evaluate-job"],
  ["plan-job"],
  ["tag-job-version"],
  ["stable-job"],
  ["fail-deployment"],
  ["pause-deployment"],
  ["promote-deployment"],
  ["unblock-deployment"],
  ["cancel-deployment"],
  ["set-alloc-health-deployment"],
  ["gc-allocation"],
  ["pause-allocation"],
  ["force-periodic-job"],
  ["delete-service-registration"],
];

const IMPLIES = new Map(NAMESPACE_CAPABILITIES.map(([n, , imp]) => [n, imp || []]));

// closure adds every transitively implied capability; a set holding deny is only {deny}.
function closure(caps) {
  const seen = new Set();
  const walk = (c) => {
    if (seen.has(c)) return;
    seen.add(c);
    for (const i of IMPLIES.get(c) || []) walk(i);
  };
  caps.forEach(walk);
  return seen.has("deny") ? new Set(["deny"]) : seen;
}

// What a disposition grants; an unknown one grants nothing.
const DISPOSITIONS = new Map();
for (const disp of ["deny", "read", "write", "scale"]) {
  const granted = NAMESPACE_CAPABILITIES.filter(([, by]) => (by || []).includes(disp)).map(([n]) => n);
  DISPOSITIONS.set(disp, closure(granted));
}

// globMatch: '*' matches any run of characters, '/' included.
export function globMatch(pattern, name) {
  let p = 0, n = 0, star = -1, mark = 0;
  while (n < name.length) {
    if (p < pattern.length && pattern[p] === "*") {
      star = p; mark = n; p++;
    } else if (p < pattern.length && pattern[p] === name[n]) {
      p++; n++;
    } else if (star >= 0) {
      p = star + 1; mark++; n = mark;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === "*") p++;
  return p === pattern.length;
}

function byteOrder(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ACL answers questions about one token. kind is "management", "disabled" (the cluster runs
// without ACLs) or "client"; policies are the RulesJSON documents the token holds.
export class ACL {
  constructor(kind, policies = []) {
    this.kind = kind;
    const raw = new Map();
    for (const p of policies || []) {
      for (const ns of (p && p.Namespaces) || []) {
        const set = raw.get(ns.Name) || new Set();
        for (const c of DISPOSITIONS.get(ns.Policy) || []) set.add(c);
        for (const c of ns.Capabilities || []) set.add(c);
        raw.set(ns.Name, set);
      }
    }
    this.exact = new Map();
    this.globs = [];
    for (const [label, set] of raw) {
      const closed = closure([...set]);
      if (label.includes("*")) {
        this.globs.push({ pattern: label, literal: label.length - label.split("*").length + 1, set: closed });
      } else {
        this.exact.set(label, closed);
      }
    }
    this.globs.sort((a, b) => byteOrder(a.pattern, b.pattern));
  }

  get management() { return this.kind === "management"; }
  get disabled() { return this.kind === "disabled"; }

  lookup(ns) {
    if (this.exact.has(ns)) return this.exact.get(ns);
    let best = null;
    for (const g of this.globs) {
      if (globMatch(g.pattern, ns) && (best === null || g.literal > best.literal)) best = g;
    }
    return best ? best.set : new Set();
  }

  allowNamespaceOperation(ns, capability) {
    if (this.management || this.disabled) return true;
    const set = this.lookup(ns);
    return capability !== "deny" && !set.has("deny") && set.has(capability);
  }

  // The server's rules for the job actions the UI offers (nomad/job_endpoint.go and
  // nomad/purge_history_endpoint.go).
  canStop(ns) {
    return ["submit-job", "deregister-job", "purge-job"].some((c) => this.allowNamespaceOperation(ns, c));
  }
  canPurge(ns) { return this.allowNamespaceOperation(ns, "purge-job"); }
  canProtect(ns) { return this.allowNamespaceOperation(ns, "protect-job"); }
  canRestore(ns) { return this.allowNamespaceOperation(ns, "submit-job"); }
  canExec(ns) { return this.allowNamespaceOperation(ns, "alloc-exec"); }
  canReadLogs(ns) { return this.allowNamespaceOperation(ns, "read-logs"); }
}

// load builds the ACL of the token that get(path) sends: get returns the decoded JSON or
// throws an error with .status and .message (the server's text).
export async function load(get, hasToken) {
  let self = null;
  if (hasToken) {
    try {
      self = await get("/v1/acl/token/self");
    } catch (e) {
      if (e.status === 400 && /ACL support disabled/.test(e.message)) return { acl: new ACL("disabled"), self: null };
      throw e;
    }
    if (self.Type === "management") return { acl: new ACL("management"), self };
  } else {
    // Without a token the server applies the anonymous policy, or nothing when ACLs are off.
    try {
      await get("/v1/acl/token/self");
    } catch (e) {
      if (e.status === 400 && /ACL support disabled/.test(e.message)) return { acl: new ACL("disabled"), self: null };
    }
  }
  const names = new Set(self ? self.Policies || [] : ["anonymous"]);
  for (const link of (self && self.Roles) || []) {
    try {
      const role = await get("/v1/acl/role/" + encodeURIComponent(link.ID));
      for (const p of role.Policies || []) names.add(p.Name);
    } catch (e) {
      // A role deleted since the token was made grants nothing, on the server as here.
    }
  }
  const policies = [];
  for (const name of names) {
    try {
      const p = await get("/v1/acl/policy/" + encodeURIComponent(name));
      if (p.RulesJSON) policies.push(p.RulesJSON);
    } catch (e) {
      // A missing policy grants nothing.
    }
  }
  return { acl: new ACL("client", policies), self };
}
