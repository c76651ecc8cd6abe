// Namespaces, and what the signed-in token may do with jobs in each.

import { watch } from "../api.js";
import { h, replace, table, errorBox } from "../dom.js";

export async function render(main, _args, ctx) {
  const body = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  replace(main, h("h1", {}, "Namespaces"), body);
  watch("/v1/namespaces", {}, (list) => {
    replace(body, table(["Name", "Description", "Task drivers", "Network modes", "May stop jobs", "May purge jobs", "May restore"],
      list.map((ns) => h("tr", { "data-namespace": ns.Name },
        h("td", {}, ns.Name), h("td", {}, ns.Description || ""),
        h("td", { class: "drivers" }, allowedText(ns.Capabilities?.EnabledTaskDrivers, ns.Capabilities?.DisabledTaskDrivers)),
        h("td", { class: "network-modes" }, allowedText(ns.Capabilities?.EnabledNetworkModes, ns.Capabilities?.DisabledNetworkModes)),
        h("td", {}, ctx.acl.canStop(ns.Name) ? "yes" : "no"),
        h("td", {}, ctx.acl.canPurge(ns.Name) ? "yes" : "no"),
        h("td", {}, ctx.acl.canRestore(ns.Name) ? "yes" : "no"))), { id: "namespaces" }));
  }, ctx.signal, (e) => replace(body, errorBox(e)));
}

// allowedText shows a namespace's allow and deny lists the way the server applies them: an
// empty allow list admits everything, and the deny list wins over it.
function allowedText(enabled, disabled) {
  const parts = [];
  parts.push(enabled && enabled.length ? "only " + enabled.join(", ") : "any");
  if (disabled && disabled.length) parts.push("not " + disabled.join(", "));
  return parts.join("; ");
}
