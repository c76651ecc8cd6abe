// ACL tokens, policies and roles, for management tokens (the server refuses anyone else;
// its 403 text is shown then).

import { get } from "../api.js";
import { h, replace, table, errorBox, fmtTime } from "../dom.js";

export async function render(main, _args, ctx) {
  const tokens = h("div", { id: "acl-tokens" });
  const policies = h("div", { id: "acl-policies" });
  const roles = h("div", { id: "acl-roles" });
  replace(main, h("h1", {}, "Access control"),
    ctx.acl.management ? null : h("p", { class: "muted" }, "Only management tokens may list tokens and policies."),
    h("h2", {}, "Tokens"), tokens, h("h2", {}, "Policies"), policies, h("h2", {}, "Roles"), roles);
  const load = async (el, path, headers, row) => {
    try {
      const list = await get(path, { signal: ctx.signal });
      replace(el, table(headers, list.map(row)));
    } catch (e) {
      replace(el, errorBox(e));
    }
  };
  load(tokens, "/v1/acl/tokens", ["Name", "Accessor", "Type", "Policies", "Roles", "Expires"], (t) => h("tr", {},
    h("td", {}, t.Name), h("td", { class: "mono" }, t.AccessorID), h("td", {}, t.Type),
    h("td", {}, (t.Policies || []).join(", ")), h("td", {}, (t.Roles || []).map((r) => r.Name || r.ID).join(", ")),
    h("td", {}, fmtTime(t.ExpirationTime))));
  load(policies, "/v1/acl/policies", ["Name", "Description", "Rules"], (p) => {
    const rules = h("pre", { class: "mono" });
    const btn = h("button", { onclick: async () => {
      try { rules.textContent = (await get("/v1/acl/policy/" + encodeURIComponent(p.Name))).Rules; } catch (e) { rules.replaceChildren(errorBox(e)); }
    } }, "Show rules");
    return h("tr", {}, h("td", {}, p.Name), h("td", {}, p.Description || ""), h("td", {}, btn, rules));
  });
  load(roles, "/v1/acl/roles", ["Name", "Description", "Policies"], (r) => h("tr", {},
    h("td", {}, r.Name), h("td", {}, r.Description || ""), h("td", {}, (r.Policies || []).map((p) => p.Name).join(", "))));
}
