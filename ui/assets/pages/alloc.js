// Allocation detail: task states and their events, a task's logs (with follow), and exec over
// the WebSocket in a terminal (terminal.js) or, without a TTY, a line-mode console.

import { watch, stream, token } from "../api.js";
import { h, replace, route, table, errorBox, fmtNanos } from "../dom.js";
import { TerminalView } from "../terminal.js";

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
  const tty = h("input", { id: "exec-tty", type: "checkbox", checked: true });
  const startBtn = h("button", { id: "exec-start" }, "Start");
  const body = h("div", { id: "exec-body" });
  let ws = null;
  let onResize = null;
  const stop = () => {
    if (ws) ws.close();
    ws = null;
    if (onResize) window.removeEventListener("resize", onResize);
    onResize = null;
  };
  ctx.signal.addEventListener("abort", stop);
  startBtn.addEventListener("click", () => {
    stop();
    const withTTY = tty.checked;
    const q = new URLSearchParams({ task: task.value, command: JSON.stringify([cmd.value]), tty: String(withTTY), ws_handshake: "true", namespace: alloc.Namespace });
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const sock = new WebSocket(proto + "//" + location.host + "/v1/client/allocation/" + encodeURIComponent(alloc.ID) + "/exec?" + q);
    ws = sock;
    const send = (frame) => { if (sock.readyState === WebSocket.OPEN) sock.send(JSON.stringify(frame)); };
    const sendStdin = (text) => send({ stdin: { data: b64(text) } });
    const io = withTTY ? terminalIO(body, sendStdin, (size) => send({ tty_size: size })) : lineIO(body, sendStdin);
    if (withTTY) {
      onResize = () => io.resized();
      window.addEventListener("resize", onResize);
    }
    const dec = new TextDecoder();
    // Browsers cannot set headers on a WebSocket: the token goes in the first frame.
    sock.onopen = () => { send({ version: 1, auth_token: token() }); io.opened(); };
    sock.onmessage = (m) => {
      const f = JSON.parse(m.data);
      if (f.stdout && f.stdout.data) io.print(dec.decode(unb64(f.stdout.data), { stream: true }));
      if (f.stderr && f.stderr.data) io.print(dec.decode(unb64(f.stderr.data), { stream: true }));
      if (f.exited) io.ended("exited with code " + ((f.result && f.result.exit_code) || 0));
    };
    sock.onclose = (ev) => io.ended(ev.reason ? "closed: " + ev.reason : "");
  });
  replace(el, h("div", { class: "filters" }, task, cmd, h("label", {}, tty, " terminal"), startBtn), body);
}

// terminalIO runs the session in a terminal: keys go to the task as typed, the task's own
// echo and escape sequences draw the screen, and size changes are sent as tty_size frames.
function terminalIO(body, sendStdin, sendSize) {
  const box = h("div", { id: "exec-terminal" });
  replace(body, box);
  const view = new TerminalView(box, sendStdin);
  const size = () => ({ height: view.screen.rows, width: view.screen.cols });
  let open = false;
  return {
    opened() { open = true; view.fit(); sendSize(size()); view.focus(); },
    resized() { if (open && view.fit()) sendSize(size()); },
    print(text) { view.write(text); },
    ended(why) { if (open && why) view.write("\r\n[" + why + "]\r\n"); open = false; },
  };
}

// lineIO is the console without a terminal: a line is sent when Enter is pressed.
function lineIO(body, sendStdin) {
  const out = h("pre", { class: "console", id: "exec-output" });
  const line = h("input", { id: "exec-input", size: 60, placeholder: "type a line, Enter sends it", disabled: true });
  const print = (text) => { out.appendChild(document.createTextNode(text)); out.scrollTop = out.scrollHeight; };
  line.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter") return;
    sendStdin(line.value + "\n");
    print("$ " + line.value + "\n");
    line.value = "";
  });
  replace(body, out, line);
  let open = false;
  return {
    opened() { open = true; line.disabled = false; line.focus(); },
    resized() {},
    print,
    ended(why) { if (open && why) print("\n[" + why + "]\n"); open = false; line.disabled = true; },
  };
}
