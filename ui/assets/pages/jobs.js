// Jobs list: filters by namespace, status and prefix (kept in the URL), updated live by a
// blocking query on /v1/jobs.

import { watch, get } from "../api.js";
import { h, replace, route, table, errorBox } from "../dom.js";

const STATUSES = ["", "pending", "running", "dead"];

export async function render(main, _args, ctx) {
  const p = ctx.params;
  const namespace = p.namespace || "*";
  const nsSelect = h("select", { id: "filter-namespace" }, h("option", { value: "*" }, "All namespaces"));
  const status = h("select", { id: "filter-status" }, STATUSES.map((s) => h("option", { value: s }, s || "Any status")));
  status.value = p.status || "";
  const prefix = h("input", { id: "filter-prefix", placeholder: "ID prefix", value: p.prefix || "" });
  const count = h("span", { class: "muted", id: "jobs-count" });
  const body = h("div", { id: "jobs-table" }, h("p", { class: "muted" }, "Loading…"));
  const apply = () => {
    const q = new URLSearchParams();
    if (nsSelect.value && nsSelect.value !== "*") q.set("namespace", nsSelect.value);
    if (status.value) q.set("status", status.value);
    if (prefix.value) q.set("prefix", prefix.value);
    location.hash = "#/jobs" + (q.toString() ? "?" + q : "");
  };
  nsSelect.addEventListener("change", apply);
  status.addEventListener("change", apply);
  prefix.addEventListener("change", apply);
  replace(main, h("h1", {}, "Jobs"),
    h("div", { class: "filters" }, nsSelect, status, prefix, count), body);

  get("/v1/namespaces").then((list) => {
    for (const ns of list) nsSelect.appendChild(h("option", { value: ns.Name }, ns.Name));
    nsSelect.value = namespace;
  }).catch(() => { nsSelect.value = "*"; });

  watch("/v1/jobs", { namespace, prefix: p.prefix }, (list) => {
    const shown = p.status ? list.filter((j) => j.Status === p.status) : list;
    count.textContent = shown.length + " of " + list.length + " jobs";
    replace(body, shown.length === 0 ? h("p", { class: "muted", id: "jobs-empty" }, "No jobs") : jobsTable(shown));
  }, ctx.signal, (e) => replace(body, errorBox(e)));
}

function jobsTable(list) {
  const rows = list.map((j) => {
    const sum = (j.JobSummary && j.JobSummary.Summary) || {};
    let running = 0, queued = 0, failed = 0;
    for (const g of Object.values(sum)) { running += g.Running || 0; queued += (g.Queued || 0) + (g.Starting || 0); failed += g.Failed || 0; }
    return h("tr", { "data-job": j.ID },
      h("td", {}, h("a", { href: route("jobs", j.Namespace, j.ID) }, j.ID)),
      h("td", {}, j.Namespace),
      h("td", {}, j.Type),
      h("td", { class: "status-" + j.Status }, j.Status + (j.Stop ? " (stopped)" : "")),
      h("td", {}, String(j.Priority)),
      h("td", {}, `${running} running, ${queued} queued, ${failed} failed`));
  });
  return table(["ID", "Namespace", "Type", "Status", "Priority", "Allocations"], rows, { id: "jobs" });
}
