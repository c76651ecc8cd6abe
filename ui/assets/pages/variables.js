// Variables: their paths and metadata in the namespaces the token may list. Items are never
// fetched here: a list shows where secrets live, not what they are.

import { watch } from "../api.js";
import { h, replace, table, errorBox, fmtNanos } from "../dom.js";

export async function render(main, _args, ctx) {
  const body = h("div", { id: "variables-body" }, h("p", { class: "muted" }, "Loading…"));
  replace(main, h("h1", {}, "Variables"), body);
  watch("/v1/vars", { namespace: "*" }, (list) => {
    if (!list || list.length === 0) {
      replace(body, h("p", { class: "muted", id: "variables-empty" }, "No variables this token may list"));
      return;
    }
    replace(body, table(["Namespace", "Path", "Modified", "Lock"], list.map((v) =>
      h("tr", { "data-variable": v.Namespace + "/" + v.Path },
        h("td", {}, v.Namespace), h("td", { class: "mono" }, v.Path),
        h("td", {}, fmtNanos(v.ModifyTime)), h("td", {}, v.Lock ? "held" : ""))), { id: "variables" }));
  }, ctx.signal, (e) => replace(body, errorBox(e)));
}
