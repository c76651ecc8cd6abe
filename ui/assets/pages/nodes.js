// Nodes: status, drain and scheduling eligibility, updated live.

import { watch } from "../api.js";
import { h, replace, table, errorBox, shortID } from "../dom.js";

export async function render(main, _args, ctx) {
  const body = h("div", { id: "nodes-table" }, h("p", { class: "muted" }, "Loading…"));
  replace(main, h("h1", {}, "Nodes"), body);
  watch("/v1/nodes", {}, (list) => {
    if (list.length === 0) { replace(body, h("p", { class: "muted" }, "No nodes")); return; }
    replace(body, table(["ID", "Name", "Datacenter", "Pool", "Status", "Drain", "Eligibility", "Address"],
      list.map((n) => h("tr", {},
        h("td", { class: "mono" }, shortID(n.ID)), h("td", {}, n.Name), h("td", {}, n.Datacenter),
        h("td", {}, n.NodePool || ""), h("td", {}, n.Status), h("td", {}, n.Drain ? "draining" : "no"),
        h("td", {}, n.SchedulingEligibility), h("td", {}, n.Address || ""))), { id: "nodes" }));
  }, ctx.signal, (e) => replace(body, errorBox(e)));
}
