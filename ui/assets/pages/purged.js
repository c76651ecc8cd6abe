// Purge history: who removed which job, when, at what version and why (an explicit purge,
// or the job GC, with ForcedBy naming the token that forced a GC). Restore is offered to
// tokens holding submit-job in the record's namespace.

import { watch, request } from "../api.js";
import { h, replace, route, table, errorBox, fmtNanos, shortID } from "../dom.js";

export async function render(main, _args, ctx) {
  const p = ctx.params;
  const ns = h("input", { id: "purged-namespace", placeholder: "namespace (* for all)", value: p.namespace || "*" });
  const reason = h("select", { id: "purged-reason" }, ["", "purge", "gc"].map((r) => h("option", { value: r }, r || "Any reason")));
  reason.value = p.reason || "";
  const job = h("input", { id: "purged-job", placeholder: "job ID prefix", value: p.prefix || "" });
  const actor = h("input", { id: "purged-actor", placeholder: "actor name", value: p.actor || "" });
  const result = h("div", { id: "purged-result" });
  const body = h("div", { id: "purged-table" }, h("p", { class: "muted" }, "Loading…"));
  const apply = () => {
    const q = new URLSearchParams();
    if (ns.value && ns.value !== "*") q.set("namespace", ns.value);
    for (const [k, el] of [["reason", reason], ["prefix", job], ["actor", actor]]) if (el.value) q.set(k, el.value);
    location.hash = "#/purged" + (q.toString() ? "?" + q : "");
  };
  for (const el of [ns, reason, job, actor]) el.addEventListener("change", apply);
  replace(main, h("h1", {}, "Purge history"), h("div", { class: "filters" }, ns, reason, job, actor), result, body);

  watch("/v1/jobs/purged", { namespace: p.namespace || "*", prefix: p.prefix }, (list) => {
    const shown = list.filter((r) => (!p.reason || r.Reason === p.reason) &&
      (!p.actor || actorName(r.Actor).includes(p.actor) || actorName(r.ForcedBy).includes(p.actor)));
    if (shown.length === 0) { replace(body, h("p", { class: "muted", id: "purged-empty" }, "No purge records")); return; }
    replace(body, table(["When", "Job", "Namespace", "Version", "Type", "Reason", "Actor", "Forced by", ""],
      shown.map((r) => h("tr", { "data-record": r.ID, "data-job": r.JobID },
        h("td", {}, fmtNanos(r.PurgeTime)),
        h("td", {}, h("a", { href: route("jobs", r.Namespace, r.JobID) }, r.JobID)),
        h("td", {}, r.Namespace), h("td", {}, String(r.JobVersion)), h("td", {}, r.JobType || ""),
        h("td", {}, r.Reason), h("td", { class: "actor" }, actorLabel(r.Actor)), h("td", {}, actorLabel(r.ForcedBy)),
        h("td", {}, ctx.acl.canRestore(r.Namespace)
          ? h("button", { class: "primary restore", onclick: () => restore(r, result) }, "Restore")
          : null))), { id: "purged" }));
  }, ctx.signal, (e) => replace(body, errorBox(e)));
}

async function restore(rec, result) {
  try {
    await request("POST", "/v1/jobs/purged/" + encodeURIComponent(rec.ID) + "/restore");
    replace(result, h("div", { class: "ok", id: "restore-ok" }, "Restored job ", h("a", { href: route("jobs", rec.Namespace, rec.JobID) }, rec.JobID)));
  } catch (e) {
    replace(result, errorBox(e));
  }
}

// actorName is what the actor filter matches: the actor's name, and for a workload identity
// also the token it acted on behalf of, so filtering by a person finds what their jobs did.
function actorName(a) {
  if (!a) return "";
  const name = a.Name || a.AccessorID || "";
  const behalf = a.OnBehalfOf ? a.OnBehalfOf.Name || a.OnBehalfOf.AccessorID || "" : "";
  return behalf ? name + " " + behalf : name;
}

// actorLabel names who acted; for a workload identity, its allocation and the token that
// registered the job version it ran, since an identity only borrows its power from that
// person and an audit must reach them.
export function actorLabel(a) {
  if (!a) return "";
  const who = a.Name || (a.AccessorID ? shortID(a.AccessorID) : "");
  let label = who + (a.Type ? " (" + a.Type + ")" : "");
  if (a.AllocID) label += ", alloc " + shortID(a.AllocID);
  const b = a.OnBehalfOf;
  if (b) label += ", on behalf of " + (b.Name || shortID(b.AccessorID) || "?");
  return label;
}
