// Jobs list: filters by namespace, status and prefix and the page (kept in the URL), updated
// live by a blocking query on /v1/jobs. A page shows PAGE_SIZE jobs: a browser lays out a table
// of thousands of rows for seconds, a page of a hundred in milliseconds.

import { watch, get } from "../api.js";
import { h, replace, route, table, errorBox } from "../dom.js";

const STATUSES = ["", "pending", "running", "dead"];
export const PAGE_SIZE = 100;

export async function render(main, _args, ctx) {
  const p = ctx.params;
  const namespace = p.namespace || "*";
  const nsSelect = h("select", { id: "filter-namespace" }, h("option", { value: "*" }, "All namespaces"));
  const status = h("select", { id: "filter-status" }, STATUSES.map((s) => h("option", { value: s }, s || "Any status")));
  status.value = p.status || "";
  const prefix = h("input", { id: "filter-prefix", placeholder: "ID prefix", value: p.prefix || "" });
  const count = h("span", { class: "muted", id: "jobs-count" });
  const body = h("div", { id: "jobs-table" }, h("p", { class: "muted" }, "Loading…"));
  const pager = h("div", { class: "actions", id: "jobs-pager" });
  let page = Math.max(1, parseInt(p.page, 10) || 1);
  const apply = (toPage = 1) => {
    const q = new URLSearchParams();
    if (nsSelect.value && nsSelect.value !== "*") q.set("namespace", nsSelect.value);
    if (status.value) q.set("status", status.value);
    if (prefix.value) q.set("prefix", prefix.value);
    if (toPage > 1) q.set("page", String(toPage));
    location.hash = "#/jobs" + (q.toString() ? "?" + q : "");
  };
  for (const c of [nsSelect, status, prefix]) c.addEventListener("change", () => apply());
  replace(main, h("h1", {}, "Jobs"),
    h("div", { class: "filters" }, nsSelect, status, prefix, count), body, pager);

  get("/v1/namespaces").then((list) => {
    for (const ns of list) nsSelect.appendChild(h("option", { value: ns.Name }, ns.Name));
    nsSelect.value = namespace;
  }).catch(() => { nsSelect.value = "*"; });

  watch("/v1/jobs", { namespace, prefix: p.prefix }, (list) => {
    const shown = p.status ? list.filter((j) => j.Status === p.status) : list;
    const pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
    page = Math.min(page, pages);
    const from = (page - 1) * PAGE_SIZE;
    const slice = shown.slice(from, from + PAGE_SIZE);
    count.textContent = shown.length + " of " + list.length + " jobs";
    replace(body, shown.length === 0 ? h("p", { class: "muted", id: "jobs-empty" }, "No jobs") : jobsTable(slice));
    replace(pager, pages === 1 ? null : [
      h("button", { id: "jobs-prev", disabled: page === 1, onclick: () => apply(page - 1) }, "‹ Previous"),
      h("span", { class: "muted", id: "jobs-page" }, `${from + 1}–${from + slice.length} of ${shown.length} (page ${page} of ${pages})`),
      h("button", { id: "jobs-next", disabled: page === pages, onclick: () => apply(page + 1) }, "Next ›")]);
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
