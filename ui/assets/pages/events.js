// Live events: follows /v1/event/stream (NDJSON over a streaming fetch) and highlights job
// purges with who did them.

import { ndjson } from "../api.js";
import { h, replace, errorBox } from "../dom.js";
import { actorLabel } from "./purged.js";

const KEEP = 500; // rows kept on screen; older ones are dropped

export async function render(main, _args, ctx) {
  const p = ctx.params;
  // The stream checks read-job in the namespace asked for, "*" included, so only a token
  // that may read everything starts on all namespaces.
  const namespace = p.namespace || (ctx.acl.management || ctx.acl.disabled ? "*" : "default");
  const topic = h("input", { id: "events-topic", placeholder: "topic, e.g. Job or Job:web", value: p.topic || "" });
  const ns = h("input", { id: "events-namespace", placeholder: "namespace", value: namespace });
  const status = h("div", { id: "events-status", class: "muted" }, "Connecting…");
  const tbody = h("tbody", {});
  const apply = () => {
    const q = new URLSearchParams();
    if (topic.value) q.set("topic", topic.value);
    if (ns.value) q.set("namespace", ns.value);
    location.hash = "#/events" + (q.toString() ? "?" + q : "");
  };
  topic.addEventListener("change", apply);
  ns.addEventListener("change", apply);
  replace(main, h("h1", {}, "Live events"), h("div", { class: "filters" }, topic, ns), status,
    h("table", { id: "events" }, h("thead", {}, h("tr", {}, ["Index", "Topic", "Type", "Key", "Namespace", "Actor", ""].map((x) => h("th", {}, x)))), tbody));

  const q = new URLSearchParams({ namespace });
  if (p.topic) q.set("topic", p.topic);
  try {
    await ndjson("/v1/event/stream?" + q, ctx.signal, (batch) => {
      if (batch.Error) { status.replaceChildren(errorBox({ message: batch.Error })); return; }
      if (!batch.Events) { status.textContent = "Connected"; return; }
      status.textContent = "Connected, last index " + batch.Index;
      for (const ev of batch.Events) {
        tbody.insertBefore(eventRow(ev), tbody.firstChild);
        while (tbody.childNodes.length > KEEP) tbody.removeChild(tbody.lastChild);
      }
    });
    if (!ctx.signal.aborted) status.textContent = "Stream ended";
  } catch (e) {
    if (!ctx.signal.aborted) replace(status, errorBox(e));
  }
}

function eventRow(ev) {
  const payload = ev.Payload || {};
  const purge = ev.Topic === "Job" && payload.Purge === true;
  const actor = payload.Actor;
  return h("tr", { class: purge ? "purge" : null, "data-type": ev.Type, "data-key": ev.Key },
    h("td", {}, String(ev.Index)), h("td", {}, ev.Topic), h("td", {}, ev.Type), h("td", {}, ev.Key),
    h("td", {}, ev.Namespace || ""), h("td", { class: "actor" }, actorLabel(actor) + (payload.ForcedBy ? ", forced by " + actorLabel(payload.ForcedBy) : "")),
    h("td", {}, purge ? h("strong", { class: "purge-mark" }, "PURGED") : null));
}
