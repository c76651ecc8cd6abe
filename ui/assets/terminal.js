// A terminal for `alloc exec -t` in the browser: Screen is the VT100/xterm subset that shells,
// editors and pagers use (cursor moves, erases, scroll regions, the alternate screen, SGR
// colours), kept free of the DOM so node tests can drive it; TerminalView draws a Screen with
// textContent and classes only, so task output can never become markup and the strict CSP
// (no inline styles, no eval) holds.
//
// Why not a library: Debian's libjs-xterm ships an entry file whose modules are missing, and
// term.js builds rows as HTML strings with inline style attributes, which our CSP forbids and which
// would render task output as HTML.

const DEFAULT_ATTR = Object.freeze({ fg: -1, bg: -1, bold: false, underline: false, inverse: false });
const MAX_SCROLLBACK = 1000;
const MAX_PARAMS = 16;

function blank(attr) {
  return { ch: " ", attr };
}

export class Screen {
  constructor(cols = 80, rows = 24) {
    this.cols = cols;
    this.rows = rows;
    this.reply = () => {};
    this.scrollback = [];
    this.reset();
  }

  reset() {
    this.attr = DEFAULT_ATTR;
    this.x = 0;
    this.y = 0;
    this.wrapPending = false;
    this.top = 0;
    this.bottom = this.rows - 1;
    this.cursorVisible = true;
    this.appCursor = false;
    this.autowrap = true;
    this.saved = { x: 0, y: 0, attr: DEFAULT_ATTR };
    this.alt = null;
    this.lines = this.emptyLines(this.rows);
    this.state = "ground";
    this.params = [];
    this.param = "";
    this.private = "";
    this.dirty = true;
  }

  emptyLines(n) {
    const out = [];
    for (let i = 0; i < n; i++) out.push(this.emptyLine());
    return out;
  }

  emptyLine(attr = DEFAULT_ATTR) {
    const line = new Array(this.cols);
    for (let i = 0; i < this.cols; i++) line[i] = blank(attr);
    return line;
  }

  // text returns the screen's rows as strings, trailing blanks trimmed (for tests and search).
  text() {
    return this.lines.map((l) => l.map((c) => c.ch).join("").replace(/\s+$/, ""));
  }

  resize(cols, rows) {
    cols = Math.max(2, Math.min(500, cols | 0));
    rows = Math.max(2, Math.min(200, rows | 0));
    if (cols === this.cols && rows === this.rows) return false;
    const fit = (line) => {
      if (line.length > cols) return line.slice(0, cols);
      while (line.length < cols) line.push(blank(DEFAULT_ATTR));
      return line;
    };
    this.cols = cols;
    this.lines = this.lines.map(fit);
    while (this.lines.length > rows) {
      // Keep the rows nearest the cursor: drop from the top while the cursor stays on screen.
      if (this.y > 0) {
        this.pushScrollback(this.lines.shift());
        this.y--;
      } else {
        this.lines.pop();
      }
    }
    while (this.lines.length < rows) this.lines.push(this.emptyLine());
    this.rows = rows;
    this.top = 0;
    this.bottom = rows - 1;
    this.x = Math.min(this.x, cols - 1);
    this.y = Math.min(this.y, rows - 1);
    this.wrapPending = false;
    if (this.alt) this.alt.lines = this.alt.lines.slice(0, rows).map(fit);
    this.dirty = true;
    return true;
  }

  pushScrollback(line) {
    if (this.alt) return;
    this.scrollback.push(line);
    if (this.scrollback.length > MAX_SCROLLBACK) this.scrollback.shift();
  }

  write(data) {
    for (const ch of data) this.feed(ch);
    this.dirty = true;
  }

  feed(ch) {
    const code = ch.codePointAt(0);
    switch (this.state) {
      case "esc":
        return this.escape(ch);
      case "csi":
        return this.csiByte(ch, code);
      case "osc":
        if (ch === "\x07") this.state = "ground";
        else if (ch === "\x1b") this.state = "osc-esc";
        return;
      case "osc-esc":
        this.state = ch === "\\" ? "ground" : "osc";
        return;
      case "charset":
        this.state = "ground";
        return;
    }
    if (code < 0x20 || code === 0x7f) return this.control(ch);
    this.print(ch);
  }

  control(ch) {
    switch (ch) {
      case "\x1b":
        this.state = "esc";
        break;
      case "\r":
        this.x = 0;
        this.wrapPending = false;
        break;
      case "\n":
      case "\v":
      case "\f":
        this.lineFeed();
        break;
      case "\b":
        if (this.x > 0) this.x--;
        this.wrapPending = false;
        break;
      case "\t":
        this.x = Math.min(this.cols - 1, (Math.floor(this.x / 8) + 1) * 8);
        break;
    }
  }

  print(ch) {
    if (this.wrapPending) {
      this.x = 0;
      this.lineFeed();
    }
    this.lines[this.y][this.x] = { ch, attr: this.attr };
    if (this.x === this.cols - 1) {
      this.wrapPending = this.autowrap;
    } else {
      this.x++;
    }
  }

  lineFeed() {
    this.wrapPending = false;
    if (this.y === this.bottom) this.scrollUp(1);
    else if (this.y < this.rows - 1) this.y++;
  }

  scrollUp(n) {
    for (let i = 0; i < n; i++) {
      const gone = this.lines.splice(this.top, 1)[0];
      if (this.top === 0) this.pushScrollback(gone);
      this.lines.splice(this.bottom, 0, this.emptyLine(this.attr));
    }
  }

  scrollDown(n) {
    for (let i = 0; i < n; i++) {
      this.lines.splice(this.bottom, 1);
      this.lines.splice(this.top, 0, this.emptyLine(this.attr));
    }
  }

  escape(ch) {
    this.state = "ground";
    switch (ch) {
      case "[":
        this.state = "csi";
        this.params = [];
        this.param = "";
        this.private = "";
        break;
      case "]":
        this.state = "osc";
        break;
      case "(":
      case ")":
        this.state = "charset";
        break;
      case "7":
        this.saveCursor();
        break;
      case "8":
        this.restoreCursor();
        break;
      case "D":
        this.lineFeed();
        break;
      case "E":
        this.x = 0;
        this.lineFeed();
        break;
      case "M":
        if (this.y === this.top) this.scrollDown(1);
        else if (this.y > 0) this.y--;
        break;
      case "c":
        this.reset();
        break;
    }
  }

  csiByte(ch, code) {
    if (ch >= "0" && ch <= "9") {
      if (this.param.length < 6) this.param += ch;
      return;
    }
    if (ch === ";" || ch === ":") {
      if (this.params.length < MAX_PARAMS) this.params.push(this.param === "" ? -1 : Number(this.param));
      this.param = "";
      return;
    }
    if (ch === "?" || ch === ">" || ch === "=" || ch === "!") {
      this.private = ch;
      return;
    }
    if (code >= 0x20 && code <= 0x2f) return; // intermediate bytes: ignored
    if (this.params.length < MAX_PARAMS) this.params.push(this.param === "" ? -1 : Number(this.param));
    this.state = "ground";
    if (code >= 0x40 && code <= 0x7e) this.csi(ch, this.params, this.private);
  }

  csi(final, p, priv) {
    const n = (i, def = 1) => (p[i] === undefined || p[i] <= 0 ? def : p[i]);
    const clampY = (y) => Math.max(0, Math.min(this.rows - 1, y));
    const clampX = (x) => Math.max(0, Math.min(this.cols - 1, x));
    this.wrapPending = false;
    if (priv === "?") {
      if (final === "h" || final === "l") this.mode(p, final === "h");
      return;
    }
    if (priv) return;
    switch (final) {
      case "A": this.y = Math.max(this.y < this.top ? 0 : this.top, this.y - n(0)); break;
      case "B": this.y = Math.min(this.y > this.bottom ? this.rows - 1 : this.bottom, this.y + n(0)); break;
      case "C": this.x = clampX(this.x + n(0)); break;
      case "D": this.x = clampX(this.x - n(0)); break;
      case "E": this.x = 0; this.y = clampY(this.y + n(0)); break;
      case "F": this.x = 0; this.y = clampY(this.y - n(0)); break;
      case "G": case "`": this.x = clampX(n(0) - 1); break;
      case "d": this.y = clampY(n(0) - 1); break;
      case "H": case "f": this.y = clampY(n(0) - 1); this.x = clampX(n(1) - 1); break;
      case "J": this.eraseDisplay(p[0] > 0 ? p[0] : 0); break;
      case "K": this.eraseLine(p[0] > 0 ? p[0] : 0); break;
      case "L": if (this.y >= this.top && this.y <= this.bottom) this.withRegion(this.y, () => this.scrollDown(n(0))); break;
      case "M": if (this.y >= this.top && this.y <= this.bottom) this.withRegion(this.y, () => this.scrollUp(n(0))); break;
      case "P": this.deleteChars(n(0)); break;
      case "@": this.insertChars(n(0)); break;
      case "X": for (let i = 0; i < n(0) && this.x + i < this.cols; i++) this.lines[this.y][this.x + i] = blank(this.attr); break;
      case "S": this.scrollUp(n(0)); break;
      case "T": this.scrollDown(n(0)); break;
      case "m": this.sgr(p); break;
      case "r": {
        const top = n(0) - 1, bottom = n(1, this.rows) - 1;
        if (top < bottom && bottom < this.rows) { this.top = top; this.bottom = bottom; this.x = 0; this.y = 0; }
        break;
      }
      case "s": this.saveCursor(); break;
      case "u": this.restoreCursor(); break;
      case "n":
        if (p[0] === 6) this.reply(`\x1b[${this.y + 1};${this.x + 1}R`);
        else if (p[0] === 5) this.reply("\x1b[0n");
        break;
      case "c": this.reply("\x1b[?1;2c"); break;
    }
  }

  // withRegion runs fn with the scroll region's top moved to y (insert/delete lines).
  withRegion(y, fn) {
    const top = this.top;
    this.top = y;
    fn();
    this.top = top;
    this.x = 0;
  }

  mode(p, on) {
    for (const m of p) {
      switch (m) {
        case 1: this.appCursor = on; break;
        case 7: this.autowrap = on; break;
        case 25: this.cursorVisible = on; break;
        case 47: case 1047: case 1049:
          if (on && !this.alt) {
            if (m === 1049) this.saveCursor();
            this.alt = { lines: this.lines };
            this.lines = this.emptyLines(this.rows);
          } else if (!on && this.alt) {
            this.lines = this.alt.lines;
            this.alt = null;
            if (m === 1049) this.restoreCursor();
          }
          break;
      }
    }
  }

  saveCursor() {
    this.saved = { x: this.x, y: this.y, attr: this.attr };
  }

  restoreCursor() {
    this.x = Math.min(this.saved.x, this.cols - 1);
    this.y = Math.min(this.saved.y, this.rows - 1);
    this.attr = this.saved.attr;
    this.wrapPending = false;
  }

  eraseLine(how) {
    const line = this.lines[this.y];
    const [from, to] = how === 0 ? [this.x, this.cols] : how === 1 ? [0, this.x + 1] : [0, this.cols];
    for (let i = from; i < to; i++) line[i] = blank(this.attr);
  }

  eraseDisplay(how) {
    if (how === 3) {
      this.scrollback = [];
      return;
    }
    this.eraseLine(how === 2 ? 2 : how);
    const [from, to] = how === 0 ? [this.y + 1, this.rows] : how === 1 ? [0, this.y] : [0, this.rows];
    for (let y = from; y < to; y++) this.lines[y] = this.emptyLine(this.attr);
  }

  deleteChars(n) {
    const line = this.lines[this.y];
    line.splice(this.x, Math.min(n, this.cols - this.x));
    while (line.length < this.cols) line.push(blank(this.attr));
  }

  insertChars(n) {
    const line = this.lines[this.y];
    for (let i = 0; i < n && this.x < this.cols; i++) line.splice(this.x, 0, blank(this.attr));
    line.length = this.cols;
  }

  sgr(p) {
    if (p.length === 0) p = [0];
    let a = { ...this.attr };
    for (let i = 0; i < p.length; i++) {
      const v = p[i] < 0 ? 0 : p[i];
      if (v === 0) a = { ...DEFAULT_ATTR };
      else if (v === 1) a.bold = true;
      else if (v === 4) a.underline = true;
      else if (v === 7) a.inverse = true;
      else if (v === 22) a.bold = false;
      else if (v === 24) a.underline = false;
      else if (v === 27) a.inverse = false;
      else if (v >= 30 && v <= 37) a.fg = v - 30;
      else if (v >= 90 && v <= 97) a.fg = v - 90 + 8;
      else if (v === 39) a.fg = -1;
      else if (v >= 40 && v <= 47) a.bg = v - 40;
      else if (v >= 100 && v <= 107) a.bg = v - 100 + 8;
      else if (v === 49) a.bg = -1;
      else if ((v === 38 || v === 48) && p[i + 1] === 5) {
        // 256 colours are drawn with the nearest of the 16 the stylesheet defines.
        const c = nearest16(p[i + 2]);
        if (v === 38) a.fg = c; else a.bg = c;
        i += 2;
      } else if ((v === 38 || v === 48) && p[i + 1] === 2) {
        const c = nearest16(rgbTo256(p[i + 2], p[i + 3], p[i + 4]));
        if (v === 38) a.fg = c; else a.bg = c;
        i += 4;
      }
    }
    this.attr = Object.freeze(a);
  }
}

function rgbTo256(r, g, b) {
  const q = (v) => Math.round((Math.max(0, Math.min(255, v | 0)) / 255) * 5);
  return 16 + 36 * q(r) + 6 * q(g) + q(b);
}

function nearest16(c) {
  c = c | 0;
  if (c < 0) return -1;
  if (c < 16) return c;
  if (c >= 232) return c < 244 ? 8 : 7;
  c -= 16;
  const r = Math.floor(c / 36), g = Math.floor(c / 6) % 6, b = c % 6;
  const bright = Math.max(r, g, b) >= 4 ? 8 : 0;
  const bit = (v) => (v >= 2 ? 1 : 0);
  return bright + bit(r) + 2 * bit(g) + 4 * bit(b);
}

// keySequence is what a key press sends to the task, "" when the browser should handle it.
export function keySequence(ev, appCursor) {
  if (ev.metaKey) return "";
  const csiOrSs3 = (c) => (appCursor ? "\x1bO" + c : "\x1b[" + c);
  switch (ev.key) {
    case "Enter": return "\r";
    case "Backspace": return "\x7f";
    case "Tab": return "\t";
    case "Escape": return "\x1b";
    case "ArrowUp": return csiOrSs3("A");
    case "ArrowDown": return csiOrSs3("B");
    case "ArrowRight": return csiOrSs3("C");
    case "ArrowLeft": return csiOrSs3("D");
    case "Home": return csiOrSs3("H");
    case "End": return csiOrSs3("F");
    case "Delete": return "\x1b[3~";
    case "Insert": return "\x1b[2~";
    case "PageUp": return "\x1b[5~";
    case "PageDown": return "\x1b[6~";
  }
  if (ev.key.length !== 1) return "";
  if (ev.ctrlKey && !ev.altKey) {
    const c = ev.key.toUpperCase().charCodeAt(0);
    if (c >= 0x40 && c <= 0x5f) return String.fromCharCode(c - 0x40);
    if (ev.key === " ") return "\x00";
    return "";
  }
  return (ev.altKey ? "\x1b" : "") + ev.key;
}

// TerminalView draws a Screen into el and turns key presses and pastes into onData calls.
export class TerminalView {
  constructor(el, onData) {
    this.el = el;
    this.onData = onData;
    this.screen = new Screen(80, 24);
    this.screen.reply = (s) => this.onData(s);
    el.classList.add("terminal");
    el.tabIndex = 0;
    this.back = document.createElement("div");
    this.rowsEl = document.createElement("div");
    el.replaceChildren(this.back, this.rowsEl);
    this.drawnBack = 0;
    this.frame = 0;
    el.addEventListener("keydown", (ev) => {
      const seq = keySequence(ev, this.screen.appCursor);
      if (seq === "") return;
      ev.preventDefault();
      this.onData(seq);
    });
    el.addEventListener("paste", (ev) => {
      const text = ev.clipboardData ? ev.clipboardData.getData("text") : "";
      if (text) this.onData(text.replace(/\r?\n/g, "\r"));
      ev.preventDefault();
    });
  }

  focus() {
    this.el.focus();
  }

  write(text) {
    this.screen.write(text);
    this.schedule();
  }

  // fit sizes the screen to the element and reports whether the size changed.
  fit() {
    const probe = document.createElement("span");
    probe.textContent = "MMMMMMMMMM";
    this.rowsEl.appendChild(probe);
    const box = probe.getBoundingClientRect();
    probe.remove();
    const cw = box.width / 10 || 8, ch = box.height || 16;
    const cols = Math.floor((this.el.clientWidth - 8) / cw);
    const rows = Math.floor((this.el.clientHeight - 8) / ch);
    const changed = this.screen.resize(cols, rows);
    this.schedule();
    return changed;
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  draw() {
    const s = this.screen;
    if (this.drawnBack > s.scrollback.length) {
      this.back.replaceChildren();
      this.drawnBack = 0;
    }
    for (; this.drawnBack < s.scrollback.length; this.drawnBack++) this.back.appendChild(this.row(s.scrollback[this.drawnBack], -1));
    while (this.back.childElementCount > s.scrollback.length) this.back.firstChild.remove();
    const rows = s.lines.map((line, y) => this.row(line, y === s.y && s.cursorVisible ? s.x : -1));
    this.rowsEl.replaceChildren(...rows);
    this.el.scrollTop = this.el.scrollHeight;
  }

  row(line, cursorX) {
    const div = document.createElement("div");
    div.className = "trow";
    let run = "", cls = null;
    const flush = () => {
      if (run === "") return;
      const span = document.createElement("span");
      if (cls) span.className = cls;
      span.textContent = run;
      div.appendChild(span);
      run = "";
    };
    for (let x = 0; x < line.length; x++) {
      const c = line[x];
      let k = classes(c.attr);
      if (x === cursorX) k = (k ? k + " " : "") + "tcursor";
      if (k !== cls) {
        flush();
        cls = k;
      }
      run += c.ch;
    }
    flush();
    return div;
  }
}

function classes(a) {
  let fg = a.fg, bg = a.bg;
  if (a.inverse) [fg, bg] = [bg < 0 ? 16 : bg, fg < 0 ? 17 : fg];
  const out = [];
  if (fg >= 0) out.push("tf" + fg);
  if (bg >= 0) out.push("tb" + bg);
  if (a.bold) out.push("tbold");
  if (a.underline) out.push("tul");
  return out.length ? out.join(" ") : null;
}
