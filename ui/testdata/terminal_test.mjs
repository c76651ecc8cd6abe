// Unit tests of the terminal's screen model without a browser: `node --test ui/testdata/`.
// The browser suite (TestUI_ExecTerminal) drives a real shell through it.
import test from "node:test";
import assert from "node:assert/strict";
import { Screen, keySequence } from "../assets/terminal.js";

test("text, carriage return, line feed and wrapping", () => {
  const s = new Screen(10, 3);
  s.write("hello\r\nworld");
  assert.deepEqual(s.text(), ["hello", "world", ""]);
  s.write("\r\n0123456789AB");
  assert.deepEqual(s.text(), ["world", "0123456789", "AB"]);
  assert.deepEqual(s.scrollback.map((l) => l.map((c) => c.ch).join("").trim()), ["hello"]);
});

test("cursor addressing and erase", () => {
  const s = new Screen(10, 3);
  s.write("abcdefghij\r\nklmnop");
  s.write("\x1b[1;3H\x1b[K");
  assert.deepEqual(s.text(), ["ab", "klmnop", ""]);
  s.write("\x1b[2;2H\x1b[1K");
  assert.deepEqual(s.text(), ["ab", "  mnop", ""]);
  s.write("\x1b[2J");
  assert.deepEqual(s.text(), ["", "", ""]);
  s.write("\x1b[3;4Hx\x1b[A\x1b[2Dy");
  assert.deepEqual(s.text(), ["", "  y", "   x"]);
});

test("colours become attributes, reset clears them", () => {
  const s = new Screen(10, 2);
  s.write("\x1b[1;31mR\x1b[0mN\x1b[38;5;46mG\x1b[7mI");
  const row = s.lines[0];
  assert.equal(row[0].attr.fg, 1);
  assert.equal(row[0].attr.bold, true);
  assert.equal(row[1].attr.fg, -1);
  assert.equal(row[1].attr.bold, false);
  assert.equal(row[2].attr.fg, 10);
  assert.equal(row[3].attr.inverse, true);
});

test("the alternate screen keeps the main screen", () => {
  const s = new Screen(10, 2);
  s.write("main");
  s.write("\x1b[?1049h\x1b[Hfull screen");
  assert.equal(s.text()[0], "full scree");
  s.write("\x1b[?1049l");
  assert.deepEqual(s.text(), ["main", ""]);
  assert.equal(s.x, 4);
});

test("scroll region, insert and delete lines", () => {
  const s = new Screen(5, 4);
  s.write("a\r\nb\r\nc\r\nd");
  s.write("\x1b[2;3r\x1b[3;1H\n");
  assert.deepEqual(s.text(), ["a", "c", "", "d"]);
  s.write("\x1b[r\x1b[1;1H\x1b[L");
  assert.deepEqual(s.text(), ["", "a", "c", ""]);
  s.write("\x1b[M");
  assert.deepEqual(s.text(), ["a", "c", "", ""]);
});

test("cursor position report answers through reply", () => {
  const s = new Screen(10, 3);
  let got = "";
  s.reply = (r) => (got += r);
  s.write("\x1b[2;5H\x1b[6n");
  assert.equal(got, "\x1b[2;5R");
});

test("hostile input stays bounded", () => {
  const s = new Screen(10, 3);
  s.write("\x1b[" + "9".repeat(10000) + ";" + "1;".repeat(10000) + "H");
  s.write("\x1b]0;" + "t".repeat(100000));
  s.write("\x07after");
  assert.ok(s.x < 10 && s.y < 3);
  assert.ok(s.text().join("").includes("after"));
  for (let i = 0; i < 5000; i++) s.write("line\r\n");
  assert.ok(s.scrollback.length <= 1000);
});

test("resize keeps the cursor's rows", () => {
  const s = new Screen(10, 4);
  s.write("1\r\n2\r\n3\r\n4");
  assert.equal(s.resize(6, 2), true);
  assert.deepEqual(s.text(), ["3", "4"]);
  assert.equal(s.y, 1);
  assert.equal(s.resize(6, 2), false);
});

test("keys", () => {
  const k = (key, mods = {}) => keySequence({ key, ctrlKey: false, altKey: false, metaKey: false, ...mods }, false);
  assert.equal(k("a"), "a");
  assert.equal(k("c", { ctrlKey: true }), "\x03");
  assert.equal(k("Enter"), "\r");
  assert.equal(k("ArrowUp"), "\x1b[A");
  assert.equal(keySequence({ key: "ArrowUp" }, true), "\x1bOA");
  assert.equal(k("Shift"), "");
});
