// Allocation detail: task states and their events, a task's logs (with follow), and a
// line-mode console over the exec WebSocket.

import { watch, stream, token } from "../api.js";
import { h, replace, route, table, errorBox, fmtNanos } from "../dom.js";

export async function render(main, [id], ctx) {
  const head = h("div", { id: "alloc-head" });
  const tasks = h("div", { id: "alloc-tasks" });
  const logs = h("div", { id: "alloc-logs" });
  const exec = h("div", { id: "alloc-exec" });
  replace(main, h("h1", {}, "Allocation ", h("span", { class: "mono" }, id)), head,
    h("h2", {}, "Tasks"), tasks, h("h2", {}, "Logs"), logs, h("h2", {}, "Exec"), exec);
  let built = false;
  watch("/v1/allocation/" + encodeURIComponent(id), {}, (a) => {
    replace(head, h("dl", { class: "kv" },
      h("dt", {}, "Job"), h("dd", {}, h("a", { href: route("jobs", a.Namespace, a.JobID) }, a.JobID)),
      h("dt", {}, "Name"), h("dd", {}, a.Name),
      h("dt", {}, "Node"), h("dd", { class: "mono" }, a.NodeID),
      h("dt", {}, "Desired"), h("dd", {}, a.DesiredStatus),
      h("dt", {}, "Status"), h("dd", { id: "alloc-status" }, a.ClientStatus + (a.ClientDescription ? " — " + a.ClientDescription : ""))));
    replace(tasks, taskStates(a.TaskStates || {}));
    if (!built) {
      built = true;
      const names = Object.keys(a.TaskStates || {});
      if (names.length === 0 && a.Job) for (const g of a.Job.TaskGroups || []) if (g.Name === a.TaskGroup) names.push(...g.Tasks.map((t) => t.Name));
      logsView(logs, a, names, ctx);
      execView(exec, a, names, ctx);
    }
  }, ctx.signal, (e) => replace(head, errorBox(e)));
}

function taskStates(states) {
  const names = Object.keys(states).sort();
  if (names.length === 0) return h("p", { class: "muted" }, "No task has started");
  return names.map((n) => {
    const s = states[n];
    const events = (s.Events || []).map((e) => h("tr", {},
      h("td", {}, fmtNanos(e.Time)), h("td", {}, e.Type), h("td", {}, e.DisplayMessage || e.Message || "")));
    return h("div", { class: "task", "data-task": n },
      h("h3", {}, n + " — " + s.State + (s.Failed ? " (failed)" : "") + (s.Restarts ? ", " + s.Restarts + " restarts" : "")),
      table(["Time", "Type", "Message"], events, { class: "events" }));
  });
}

function logsView(el, alloc, names, ctx) {
  const task = h("select", { id: "logs-task" }, names.map((n) => h("option", { value: n }, n)));
  const type = h("select", { id: "logs-type" }, h("option", { value: "stdout" }, "stdout"), h("option", { value: "stderr" }, "stderr"));
  const follow = h("input", { type: "checkbox", id: "logs-follow", checked: true });
  const out = h("pre", { class: "log", id: "logs-output" });
  let ctl = null;
  const start = () => {
    if (ctl) ctl.abort();
    ctl = new AbortController();
    ctx.signal.addEventListener("abort", () => ctl.abort());
    out.textContent = "";
    const q = new URLSearchParams({ task: task.value, type: type.value, plain: "true", follow: String(follow.checked), origin: "end", offset: "65536", namespace: alloc.Namespace });
    const signal = ctl.signal;
    stream("/v1/client/fs/logs/" + encodeURIComponent(alloc.ID) + "?" + q, signal, (text) => {
      // Text nodes only: task output is attacker-controlled.
      out.appendChild(document.createTextNode(text));
      out.scrollTop = out.scrollHeight;
    }).catch((e) => { if (!signal.aborted) out.appendChild(errorBox(e)); });
  };
  for (const c of [task, type, follow]) c.addEventListener("change", start);
  replace(el, h("div", { class: "filters" }, task, type, h("label", {}, follow, " follow")), out);
  if (names.length > 0 && ctx.acl.canReadLogs(alloc.Namespace)) start();
  else if (names.length > 0) out.textContent = "This token may not read logs in namespace " + alloc.Namespace + ".";
}

// b64 encodes text as UTF-8 base64 (the frames carry bytes).
function b64(text) {
  let bin = "";
  for (const b of new TextEncoder().encode(text)) bin += String.fromCharCode(b);
  return btoa(bin);
}

function unb64(data) {
  const bin = atob(data);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

function execView(el, alloc, names, ctx) {
  if (!ctx.acl.canExec(alloc.Namespace)) {
    replace(el, h("p", { class: "muted", id: "exec-denied" }, "This token may not exec in namespace " + alloc.Namespace + "."));
    return;
  }
  const task = h("select", { id: "exec-task" }, names.map((n) => h("option", { value: n }, n)));
  const cmd = h("input", { id: "exec-command", value: "/bin/sh", size: 30 });
  const out = h("pre", { class: "console", id: "exec-output" });
  const line = h("input", { id: "exec-input", size: 60, placeholder: "type a line, Enter sends it", disabled: true });
  const startBtn = h("button", { id: "exec-start" }, "Start");
  let ws = null;
  const dec = new TextDecoder();
  const print = (text) => { out.appendChild(document.createTextNode(text)); out.scrollTop = out.scrollHeight; };
  startBtn.addEventListener("click", () => {
    if (ws) ws.close();
    out.textContent = "";
    const q = new URLSearchParams({ task: task.value, command: JSON.stringify([cmd.value]), tty: "false", ws_handshake: "true", namespace: alloc.Namespace });
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(proto + "//" + location.host + "/v1/client/allocation/" + encodeURIComponent(alloc.ID) + "/exec?" + q);
    // Browsers cannot set headers on a WebSocket: the token goes in the first frame.
    ws.onopen = () => { ws.send(JSON.stringify({ version: 1, auth_token: token() })); line.disabled = false; line.focus(); };
    ws.onmessage = (m) => {
      const f = JSON.parse(m.data);
      if (f.stdout && f.stdout.data) print(dec.decode(unb64(f.stdout.data), { stream: true }));
      if (f.stderr && f.stderr.data) print(dec.decode(unb64(f.stderr.data), { stream: true }));
      if (f.exited) print("\n[exited with code " + ((f.result && f.result.exit_code) || 0) + "]\n");
    };
    ws.onclose = (ev) => { line.disabled = true; if (ev.reason) print("\n[closed: " + ev.reason + "]\n"); };
    ctx.signal.addEventListener("abort", () => ws && ws.close());
  });
  line.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" || !ws) return;
    ws.send(JSON.stringify({ stdin: { data: b64(line.value + "\n") } }));
    print("$ " + line.value + "\n");
    line.value = "";
  });
  replace(el, h("div", { class: "filters" }, task, cmd, startBtn), out, line);
}
