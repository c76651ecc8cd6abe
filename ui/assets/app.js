// The UI shell: a fragment router (#/jobs, #/jobs/<ns>/<id>, …), the signed-in token's
// permissions, and the sign-in page. Each page module exports render(main, params, ctx);
// ctx.signal aborts when the user navigates away, ending the page's watches and streams.

import * as api from "./api.js";
import { load } from "./perms.js";
import { h, replace, errorBox } from "./dom.js";
import * as jobs from "./pages/jobs.js";
import * as job from "./pages/job.js";
import * as alloc from "./pages/alloc.js";
import * as nodes from "./pages/nodes.js";
import * as namespaces from "./pages/namespaces.js";
import * as aclPage from "./pages/acl.js";
import * as purged from "./pages/purged.js";
import * as events from "./pages/events.js";
import * as variables from "./pages/variables.js";

const routes = [
  [/^\/?$/, () => { location.hash = "#/jobs"; return null; }],
  [/^\/jobs$/, jobs.render],
  [/^\/jobs\/([^/]+)\/([^/]+)$/, job.render],
  [/^\/allocations\/([^/]+)$/, alloc.render],
  [/^\/nodes$/, nodes.render],
  [/^\/namespaces$/, namespaces.render],
  [/^\/acl$/, aclPage.render],
  [/^\/purged$/, purged.render],
  [/^\/events$/, events.render],
  [/^\/variables$/, variables.render],
  [/^\/token$/, renderToken],
];

let current = null;

async function navigate() {
  if (current) current.abort();
  current = new AbortController();
  const signal = current.signal;
  const main = document.getElementById("main");
  const raw = location.hash.replace(/^#/, "");
  const [path, query] = raw.split("?");
  const params = Object.fromEntries(new URLSearchParams(query || ""));
  let ctx;
  try {
    // Permissions are read again on every page so a policy change shows at the next click
    // through; a button left on screen from before still gets the server's answer.
    ctx = await session();
  } catch (e) {
    replace(main, h("h1", {}, "Signed-in token refused"), errorBox(e),
      h("p", {}, h("a", { href: "#/token" }, "Sign in with another token")));
    return;
  }
  if (signal.aborted) return;
  ctx.signal = signal;
  ctx.params = params;
  showWho(ctx);
  for (const [re, fn] of routes) {
    const m = path.match(re);
    if (!m) continue;
    const args = m.slice(1).map(decodeURIComponent);
    try {
      await fn(main, args, ctx);
    } catch (e) {
      if (!signal.aborted) replace(main, errorBox(e));
    }
    return;
  }
  replace(main, h("h1", {}, "Not found"), h("p", {}, "No page at " + path));
}

async function session() {
  const { acl, self } = await load(api.get, api.token() !== "");
  return { acl, self };
}

function showWho(ctx) {
  const who = document.getElementById("whoami");
  if (ctx.self) who.textContent = "Signed in: " + (ctx.self.Name || ctx.self.AccessorID.slice(0, 8));
  else who.textContent = api.token() ? "Signed in" : "Sign in";
  document.getElementById("nav-acl").hidden = !ctx.acl.management;
}

function renderToken(main, _args, ctx) {
  const input = h("input", { type: "password", id: "token-input", size: 40, placeholder: "Secret ID", autocomplete: "off" });
  const msg = h("div", { id: "token-msg" });
  const signIn = async (ev) => {
    ev.preventDefault();
    api.setToken(input.value.trim());
    try {
      const s = await session();
      showWho(s);
      replace(msg, h("div", { class: "ok" }, s.self ? "Signed in as " + (s.self.Name || s.self.AccessorID) : "Token saved"));
      location.hash = "#/jobs";
    } catch (e) {
      api.setToken("");
      replace(msg, errorBox(e));
    }
  };
  const signOut = () => { api.setToken(""); location.hash = "#/jobs"; };
  replace(main,
    h("h1", {}, "Sign in"),
    h("p", { class: "muted" }, "Paste an ACL token's secret ID. It is kept in this browser's local storage and sent only to this agent."),
    ctx.self ? h("p", {}, "Signed in as ", h("strong", {}, ctx.self.Name || ctx.self.AccessorID), " (", ctx.self.Type, ")") : null,
    h("form", { id: "token-form", onsubmit: signIn }, input, " ", h("button", { type: "submit", class: "primary", id: "token-submit" }, "Sign in")),
    api.token() ? h("p", {}, h("button", { id: "token-signout", onclick: signOut }, "Sign out")) : null,
    msg);
}

window.addEventListener("hashchange", navigate);
navigate();
