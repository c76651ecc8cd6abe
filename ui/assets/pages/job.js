// Job detail: status and task groups, Stop and Purge offered only to a token the server
// would allow (perms.js), versions with their diffs, allocations and evaluations. A refused
// action shows the server's own text. A protected job carries a badge; Protect and Unprotect
// are offered to holders of protect-job; the purge confirmation shows the purge plan.

import { watch, get, request } from "../api.js";
import { h, replace, route, table, errorBox, shortID, fmtNanos } from "../dom.js";

export async function render(main, [ns, id], ctx) {
  const q = "?namespace=" + encodeURIComponent(ns);
  const base = "/v1/job/" + encodeURIComponent(id);
  const head = h("div", { id: "job-head" });
  const protection = h("div", { id: "job-protection" });
  const actions = h("div", { class: "actions", id: "job-actions" });
  const result = h("div", { id: "action-result" });
  const groups = h("div", { id: "job-groups" });
  const versions = h("div", { id: "job-versions" });
  const allocs = h("div", { id: "job-allocs" });
  const evals = h("div", { id: "job-evals" });
  const deployments = h("div", { id: "job-deployments" });
  replace(main, h("h1", {}, "Job ", h("span", { id: "job-id" }, id)), protection, head, actions, result,
    h("h2", {}, "Task groups"), groups, h("h2", {}, "Deployments"), deployments, h("h2", {}, "Allocations"), allocs,
    h("h2", {}, "Evaluations"), evals, h("h2", {}, "Versions"), versions);

  renderActions(actions, result, ns, id, base + q, ctx);
  // Read, not watched: the page's watches already hold most of the browser's connections to
  // the agent, and one more would queue the actions behind them. A change made here redraws.
  const showProtection = () => get(base + "/protection" + q, { signal: ctx.signal })
    .then((p) => replace(protection, protectionView(p, base + "/protection" + q, result, ctx.acl.canProtect(ns), showProtection)))
    .catch(() => replace(protection));
  showProtection();

  watch(base, { namespace: ns }, (j) => {
    replace(head, h("dl", { class: "kv" },
      h("dt", {}, "Namespace"), h("dd", {}, j.Namespace),
      h("dt", {}, "Type"), h("dd", {}, j.Type),
      h("dt", {}, "Status"), h("dd", { id: "job-status", class: "status-" + j.Status }, j.Status + (j.Stop ? " (stopped)" : "")),
      h("dt", {}, "Version"), h("dd", {}, String(j.Version)),
      h("dt", {}, "Priority"), h("dd", {}, String(j.Priority)),
      h("dt", {}, "Datacenters"), h("dd", {}, (j.Datacenters || []).join(", ")),
      Object.entries(j.Meta || {}).map(([k, v]) => [h("dt", {}, "meta." + k), h("dd", {}, v)])));
    get(base + "/summary" + q, { signal: ctx.signal }).then((s) => replace(groups, groupsTable(j, s))).catch((e) => replace(groups, errorBox(e)));
  }, ctx.signal, (e) => {
    replace(head, errorBox(e), e.status === 404 ? h("p", {}, "The job is gone. ", h("a", { href: "#/purged" }, "See the purge history")) : null);
  });
  watch(base + "/allocations", { namespace: ns }, (list) => replace(allocs, allocsTable(list)), ctx.signal, (e) => replace(allocs, errorBox(e)));
  watch(base + "/evaluations", { namespace: ns }, (list) => replace(evals, evalsTable(list)), ctx.signal, (e) => replace(evals, errorBox(e)));
  watch(base + "/deployments", { namespace: ns }, (list) => replace(deployments, deploymentsTable(list)), ctx.signal, (e) => replace(deployments, errorBox(e)));
  watch(base + "/versions", { namespace: ns, diffs: "true" }, (r) => replace(versions, versionsView(r)), ctx.signal, (e) => replace(versions, errorBox(e)));
}

function renderActions(actions, result, ns, id, path, ctx) {
  const act = async (label, purge) => {
    replace(result, h("p", { class: "muted" }, label + "…"));
    try {
      await request("DELETE", path + (purge ? "&purge=true" : ""));
      replace(result, h("div", { class: "ok", id: "action-ok" }, purge ? "Job purged" : "Job stopped"));
    } catch (e) {
      replace(result, errorBox(e));
    }
  };
  const buttons = [];
  if (ctx.acl.canStop(ns)) buttons.push(h("button", { id: "job-stop", class: "primary", onclick: () => act("Stopping", false) }, "Stop"));
  if (ctx.acl.canPurge(ns)) {
    // Two clicks: purging removes the job and its history from the cluster.
    const confirm = h("button", { id: "job-purge-confirm", class: "danger", hidden: true, onclick: () => act("Purging", true) }, "Confirm purge of " + id);
    const plan = h("div", { id: "job-purge-plan" });
    const showPlan = async () => {
      confirm.hidden = false;
      try {
        replace(plan, purgePlanView(await get("/v1/job/" + encodeURIComponent(id) + "/purge-plan?namespace=" + encodeURIComponent(ns), { signal: ctx.signal })));
      } catch (e) {
        replace(plan, errorBox(e));
      }
    };
    buttons.push(h("button", { id: "job-purge", class: "danger", onclick: showPlan }, "Purge"), confirm, plan);
  }
  if (buttons.length === 0) buttons.push(h("span", { class: "muted", id: "job-no-actions" }, "This token may not stop or purge this job."));
  replace(actions, buttons);
}

function groupsTable(job, summary) {
  const sum = (summary && summary.Summary) || {};
  const rows = (job.TaskGroups || []).map((g) => {
    const s = sum[g.Name] || {};
    return h("tr", {},
      h("td", {}, g.Name), h("td", {}, String(g.Count)),
      h("td", {}, (g.Tasks || []).map((t) => t.Name + " (" + t.Driver + ")").join(", ")),
      ["Queued", "Starting", "Running", "Complete", "Failed", "Lost"].map((k) => h("td", {}, String(s[k] || 0))));
  });
  return table(["Group", "Count", "Tasks", "Queued", "Starting", "Running", "Complete", "Failed", "Lost"], rows, { id: "groups" });
}

export function allocsTable(list) {
  if (!list || list.length === 0) return h("p", { class: "muted" }, "No allocations");
  const rows = list.map((a) => h("tr", {},
    h("td", {}, h("a", { href: route("allocations", a.ID), class: "mono" }, shortID(a.ID))),
    h("td", {}, a.Name), h("td", {}, a.TaskGroup), h("td", { class: "mono" }, shortID(a.NodeID)),
    h("td", {}, a.DesiredStatus), h("td", {}, a.ClientStatus), h("td", {}, String(a.JobVersion ?? ""))));
  return table(["ID", "Name", "Group", "Node", "Desired", "Status", "Version"], rows, { id: "allocs" });
}

function evalsTable(list) {
  if (!list || list.length === 0) return h("p", { class: "muted" }, "No evaluations");
  const rows = list.map((e) => h("tr", {},
    h("td", { class: "mono" }, shortID(e.ID)), h("td", {}, e.TriggeredBy), h("td", {}, e.Status),
    h("td", {}, e.StatusDescription || ""), h("td", {}, fmtNanos(e.CreateTime))));
  return table(["ID", "Triggered by", "Status", "Description", "Created"], rows, { id: "evals" });
}

function versionsView(r) {
  const versions = r.Versions || [];
  const diffs = r.Diffs || [];
  return h("div", { id: "versions" }, versions.map((v, i) => h("details", { open: i === 0 },
    h("summary", {}, "Version " + v.Version + (v.Stable ? " (stable)" : "") + " — submitted " + fmtNanos(v.SubmitTime)),
    diffs[i] ? diffView(diffs[i]) : h("p", { class: "muted" }, "First version"))));
}

// diffView renders a JobDiff as nested lists of text.
export function diffView(d) {
  const fields = (fs) => (fs || []).filter((f) => f.Type !== "None").map((f) => h("li", { class: "diff-" + f.Type },
    f.Name + ": ", f.Type === "Added" ? f.New : f.Type === "Deleted" ? f.Old : f.Old + " → " + f.New));
  const objects = (os) => (os || []).filter((o) => o.Type !== "None").map((o) => h("li", { class: "diff-" + o.Type },
    o.Name + " (" + o.Type + ")", h("ul", {}, fields(o.Fields), objects(o.Objects))));
  const tasks = (ts) => (ts || []).filter((t) => t.Type !== "None").map((t) => h("li", { class: "diff-" + t.Type },
    "task " + t.Name + " (" + t.Type + ")", h("ul", {}, fields(t.Fields), objects(t.Objects))));
  const groups = (d.TaskGroups || []).filter((g) => g.Type !== "None").map((g) => h("li", { class: "diff-" + g.Type },
    "group " + g.Name + " (" + g.Type + ")", h("ul", {}, fields(g.Fields), objects(g.Objects), tasks(g.Tasks))));
  const items = [fields(d.Fields), objects(d.Objects), groups].flat();
  if (items.length === 0) return h("p", { class: "muted" }, "No changes");
  return h("div", { class: "diff" }, h("ul", {}, items));
}

// deploymentsTable lists the job's deployments, newest first, with each group's progress.
function deploymentsTable(list) {
  if (!list || list.length === 0) return h("p", { class: "muted", id: "deployments-empty" }, "No deployments");
  const rows = list.map((d) => {
    const groups = Object.entries(d.TaskGroups || {}).map(([name, g]) =>
      `${name}: ${g.HealthyAllocs || 0}/${g.DesiredTotal || 0} healthy` +
      (g.DesiredCanaries ? `, ${g.PlacedCanaries ? g.PlacedCanaries.length : 0}/${g.DesiredCanaries} canaries${g.Promoted ? " (promoted)" : ""}` : ""));
    return h("tr", { "data-deployment": d.ID },
      h("td", { class: "mono" }, shortID(d.ID)),
      h("td", {}, String(d.JobVersion)),
      h("td", { class: "status-" + d.Status }, d.Status),
      h("td", {}, d.StatusDescription || ""),
      h("td", {}, groups.join("; ")));
  });
  return table(["ID", "Version", "Status", "Description", "Groups"], rows, { id: "deployments" });
}

// protectionView is the badge of a protected job and, for holders of protect-job, the button
// that protects or unprotects it (a reason is asked for when protecting).
function protectionView(p, path, result, canProtect, redraw) {
  const badge = p.Protected
    ? h("span", { class: "badge danger", id: "job-protected" }, "Protected: " + p.Reason + (p.Actor && p.Actor.Name ? " (by " + p.Actor.Name + ")" : ""))
    : null;
  if (!canProtect) return badge;
  const set = async (body) => {
    try {
      await request("PUT", path, { body });
      replace(result, h("div", { class: "ok", id: "protect-ok" }, body.Protected ? "Job protected" : "Job unprotected"));
      redraw();
    } catch (e) {
      replace(result, errorBox(e));
    }
  };
  if (p.Protected) {
    return [badge, " ", h("button", { id: "job-unprotect", onclick: () => set({ Protected: false }) }, "Unprotect")];
  }
  const reason = h("input", { id: "job-protect-reason", placeholder: "Reason (required)", maxlength: "256" });
  return [reason, " ", h("button", { id: "job-protect", onclick: () => set({ Protected: true, Reason: reason.value }) }, "Protect")];
}

// purgePlanView says what the purge would remove and leave (GET /v1/job/:id/purge-plan).
function purgePlanView(p) {
  const r = p.Removes || {};
  const k = p.Keeps || {};
  const allocs = Object.entries(r.Allocations || {}).map(([s, n]) => s + " " + n).join(", ");
  const tagged = (r.Versions || []).filter((v) => v.Tag).map((v) => v.Version + " \u201c" + v.Tag + "\u201d").join(", ");
  const item = (label, value) => [h("dt", {}, label), h("dd", {}, value)];
  return h("div", { class: "purge-plan" },
    p.Protected ? h("p", { class: "error", id: "purge-plan-protected" }, "Protected: " + p.ProtectionReason + ". The purge will be refused.") : null,
    h("p", {}, "The purge removes:"),
    h("dl", { class: "kv", id: "purge-plan-removes" },
      item("Versions", String((r.Versions || []).length) + (tagged ? " (tagged: " + tagged + ")" : "")),
      item("Allocations", allocs || "0"),
      item("Deployments", String((r.Deployments || []).length)),
      item("Service registrations", String((r.Services || []).length)),
      item("Scaling policies", String((r.ScalingPolicies || []).length))),
    h("p", {}, "and leaves in place:"),
    h("dl", { class: "kv", id: "purge-plan-keeps" },
      item("Evaluations", (k.Evaluations || 0) + " (" + (k.CanceledEvaluations || 0) + " pending canceled)"),
      item("Variables under nomad/jobs", (k.Variables || []).join(", ") || "none"),
      item("Children", (k.Children || []).join(", ") || "none")));
}
