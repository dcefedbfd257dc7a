// The workbench's span and offset helpers (static/js/spans.js), with values worked out by hand.
// Run: node --test tests/js/*.test.js (on Node 20 also `node --test tests/js/`); tests/unit/test_js_helpers.py
// runs them under pytest. Node's own runner and assert only: no npm packages.
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");

const Spans = require(path.join(__dirname, "..", "..", "static", "js", "spans.js"));

// "Ana vive en Sevilla, Sevilla." and its tokens, run-length encoded as the server sends them.
//  Ana [0,3) vive [4,8) en [9,11) Sevilla [12,19) , [19,20) Sevilla [21,28) . [28,29)
const TEXT = "Ana vive en Sevilla, Sevilla.";
const RUNS = [0, 3, 1, 4, 1, 2, 1, 7, 0, 1, 1, 7, 0, 1];
const TOKENS = Spans.decodeTokenRuns(RUNS);
const NO_TOKENS = Spans.decodeTokenRuns([]);

function span(id, start, end, label, extra) {
  return Object.assign({ id: id, start: start, end: end, label: label }, extra || {});
}

test("token runs decode to start and end offsets", () => {
  assert.deepEqual(Array.from(TOKENS.start), [0, 4, 9, 12, 19, 21, 28]);
  assert.deepEqual(Array.from(TOKENS.end), [3, 8, 11, 19, 20, 28, 29]);
  assert.equal(TOKENS.count, 7);
  assert.deepEqual(Array.from(TOKENS.start, (s, i) => TEXT.slice(s, TOKENS.end[i])),
    ["Ana", "vive", "en", "Sevilla", ",", "Sevilla", "."]);
  assert.equal(NO_TOKENS.count, 0);
  assert.equal(NO_TOKENS.start.length, 0);
});

test("binary searches honour the length they are given", () => {
  const sorted = [1, 3, 3, 5];
  assert.equal(Spans.upperBound(sorted, 4, 3), 3);
  assert.equal(Spans.lowerBound(sorted, 4, 3), 1);
  assert.equal(Spans.upperBound(sorted, 4, 0), 0);
  assert.equal(Spans.lowerBound(sorted, 4, 6), 4);
  assert.equal(Spans.upperBound(sorted, 2, 10), 2);  // only the first two entries are searched
});

test("tokens at, after and before an offset", () => {
  assert.equal(Spans.tokenAtOrAfter(TOKENS, 0), 0);
  assert.equal(Spans.tokenAtOrAfter(TOKENS, 2), 0);
  assert.equal(Spans.tokenAtOrAfter(TOKENS, 3), 1);    // the space after "Ana": the next token
  assert.equal(Spans.tokenAtOrAfter(TOKENS, 100), 6);  // clamped to the last token
  assert.equal(Spans.tokenBefore(TOKENS, 12), 2);      // "en" is the last token starting before 12
  assert.equal(Spans.tokenBefore(TOKENS, 13), 3);
  assert.equal(Spans.tokenBefore(TOKENS, 0), 0);       // clamped to the first token
  assert.deepEqual([12, 13, 21, 20].map((pos) => Spans.isTokenStart(TOKENS, pos)), [true, false, true, false]);
  assert.deepEqual([19, 20, 18, 29, 30].map((pos) => Spans.isTokenEnd(TOKENS, pos)), [true, true, false, true, false]);
});

test("chunks of tokens and the chunk of an offset", () => {
  const starts = Spans.chunkStarts(TOKENS, TEXT.length, 3);
  assert.deepEqual(starts, [0, 12, 28, 29]);
  assert.deepEqual(Spans.chunkStarts(NO_TOKENS, 5, 3), [0, 5]);
  assert.equal(Spans.chunkOf(starts, 0, false), 0);
  assert.equal(Spans.chunkOf(starts, 12, false), 1);  // a range starting on a boundary: the chunk after
  assert.equal(Spans.chunkOf(starts, 12, true), 0);   // a range ending on it: the chunk before
  assert.equal(Spans.chunkOf(starts, 27, false), 1);
  assert.equal(Spans.chunkOf(starts, 29, false), 2);  // the end of the text stays in the last chunk
  assert.equal(Spans.chunkOf(starts, 0, true), 0);
});

test("a selection of units covers whole tokens, or characters in character mode", () => {
  assert.deepEqual(Spans.unitRange(TOKENS, false, TEXT.length, 3, 1), [4, 19]);  // "vive en Sevilla", backwards
  assert.deepEqual(Spans.unitRange(TOKENS, false, TEXT.length, 5, 5), [21, 28]);
  assert.deepEqual(Spans.unitRange(TOKENS, true, TEXT.length, 5, 2), [2, 6]);
  assert.deepEqual(Spans.unitRange(TOKENS, true, TEXT.length, 28, 28), [28, 29]);
  assert.deepEqual(Spans.unitRange(TOKENS, true, TEXT.length, 29, 29), [29, 29]);  // clamped to the text
});

test("characters snap to the tokens they touch", () => {
  assert.deepEqual(Spans.snapToUnits(TOKENS, false, 14, 16), [3, 3]);   // "vi" inside "Sevilla"
  assert.deepEqual(Spans.snapToUnits(TOKENS, false, 5, 14), [1, 3]);    // "ive en Se": vive, en, Sevilla
  assert.deepEqual(Spans.snapToUnits(TOKENS, false, 11, 12), [3, 3]);   // only white space: the next token
  assert.deepEqual(Spans.snapToUnits(TOKENS, false, 19, 29), [4, 6]);   // ", Sevilla."
  assert.deepEqual(Spans.snapToUnits(TOKENS, true, 5, 9), [5, 8]);
  assert.deepEqual(Spans.snapToUnits(TOKENS, true, 5, 5), [5, 5]);      // a caret is one character
});

test("spans sort by start, end, label, then id", () => {
  const spans = [
    span(3, 12, 19, "CITY"), span(2, 0, 3, "NAME"), span(5, 12, 19, "ADDR"), span(1, 12, 19, "CITY"),
    span(4, 12, 28, "CITY"),
  ];
  assert.deepEqual(spans.slice().sort(Spans.compareSpans).map((s) => s.id), [2, 5, 1, 3, 4]);
});

test("overlap is of half-open ranges: touching is not overlapping", () => {
  const sevilla = span(2, 12, 19, "CITY");
  assert.deepEqual([[19, 20], [18, 20], [0, 12], [13, 14], [0, 29]].map(([s, e]) => Spans.overlaps(sevilla, s, e)),
    [false, true, false, true, true]);
  const spans = [span(1, 0, 3, "NAME"), sevilla, span(3, 21, 28, "CITY")];
  assert.deepEqual(Spans.withoutOverlaps(spans, 2, 13).map((s) => s.id), [3]);
  assert.deepEqual(Spans.withoutOverlaps(spans, 3, 12).map((s) => s.id), [1, 2, 3]);
  assert.equal(Spans.firstOverlap(spans, 12, 22, null), sevilla);
  assert.equal(Spans.firstOverlap(spans, 12, 22, sevilla), spans[2]);  // the span being resized does not block itself
  assert.equal(Spans.firstOverlap(spans, 12, 19, sevilla), null);
  assert.equal(Spans.indexOfId(spans, 3), 2);
  assert.equal(Spans.indexOfId(spans, 9), -1);
});

test("moving an edge steps to the neighbouring token's edge, or by one character", () => {
  const sevilla = span(1, 12, 19, "CITY");
  assert.deepEqual(Spans.movedEdge(TOKENS, false, sevilla, "start", -1), [9, 19]);   // takes in "en"
  assert.deepEqual(Spans.movedEdge(TOKENS, false, sevilla, "start", 1), [19, 19]);   // empty: the caller refuses
  assert.deepEqual(Spans.movedEdge(TOKENS, false, sevilla, "end", 1), [12, 20]);     // takes in the comma
  assert.deepEqual(Spans.movedEdge(TOKENS, false, sevilla, "end", -1), [12, 11]);    // inverted: refused too
  assert.deepEqual(Spans.movedEdge(TOKENS, false, span(2, 0, 3, "NAME"), "start", -1), [0, 3]);  // no token before
  assert.deepEqual(Spans.movedEdge(TOKENS, false, span(3, 28, 29, "X"), "end", 1), [28, 29]);     // none after
  assert.deepEqual(Spans.movedEdge(TOKENS, true, sevilla, "start", -1), [11, 19]);
  assert.deepEqual(Spans.movedEdge(TOKENS, true, sevilla, "end", 1), [12, 20]);
  assert.deepEqual(Spans.movedEdge(TOKENS, true, span(2, 0, 3, "NAME"), "start", -1), [-1, 3]);  // past the text
});

test("other mentions of a span's text", () => {
  const focused = span(1, 12, 19, "CITY");
  assert.deepEqual(Spans.otherMentions(TEXT, TOKENS, [focused], focused, false),
    { mentions: [{ start: 21, end: 28, label: "CITY" }], skipped: 0 });
  // The second Sevilla is already a NAME: skipped unless overlaps are allowed.
  const taken = [focused, span(2, 21, 28, "NAME")];
  assert.deepEqual(Spans.otherMentions(TEXT, TOKENS, taken, focused, false), { mentions: [], skipped: 1 });
  assert.deepEqual(Spans.otherMentions(TEXT, TOKENS, taken, focused, true),
    { mentions: [{ start: 21, end: 28, label: "CITY" }], skipped: 0 });
  // Already a CITY: nothing to do, and nothing counted as skipped.
  const done = [focused, span(2, 21, 28, "CITY")];
  assert.deepEqual(Spans.otherMentions(TEXT, TOKENS, done, focused, false), { mentions: [], skipped: 0 });

  // With tokens a mention must be whole tokens: "Sevilla" inside "Sevillana" is not one.
  // Sevilla [0,7) y [8,9) Sevillana [10,19) , [19,20) Sevilla [21,28)
  const text = "Sevilla y Sevillana, Sevilla";
  const tokens = Spans.decodeTokenRuns([0, 7, 1, 1, 1, 9, 0, 1, 1, 7]);
  const first = span(1, 0, 7, "CITY");
  assert.deepEqual(Spans.otherMentions(text, tokens, [first], first, false).mentions,
    [{ start: 21, end: 28, label: "CITY" }]);
  assert.deepEqual(Spans.otherMentions(text, NO_TOKENS, [first], first, false).mentions,
    [{ start: 10, end: 17, label: "CITY" }, { start: 21, end: 28, label: "CITY" }]);

  // Mentions may overlap one another: one taken blocks the next ("aa" at 3 and at 4 in "aa-aaa").
  const a = span(1, 0, 2, "X");
  assert.deepEqual(Spans.otherMentions("aa-aaa", NO_TOKENS, [a], a, false),
    { mentions: [{ start: 3, end: 5, label: "X" }], skipped: 1 });
  assert.deepEqual(Spans.otherMentions("aa-aaa", NO_TOKENS, [a], a, true),
    { mentions: [{ start: 3, end: 5, label: "X" }, { start: 4, end: 6, label: "X" }], skipped: 0 });
});

test("the neighbouring span wraps round and can be filtered", () => {
  const spans = [span(1, 0, 3, "NAME", { status: "pending" }), span(2, 12, 19, "CITY", { status: "accepted" }),
    span(3, 21, 28, "CITY", { status: "pending" })];
  const pending = (s) => s.status === "pending";
  assert.equal(Spans.neighbour(spans, spans[1], 1).id, 3);
  assert.equal(Spans.neighbour(spans, spans[2], 1).id, 1);   // past the last: the first
  assert.equal(Spans.neighbour(spans, spans[0], -1).id, 3);  // before the first: the last
  assert.equal(Spans.neighbour(spans, spans[1], -1).id, 1);
  assert.equal(Spans.neighbour(spans, spans[0], 1, pending).id, 3);  // skips the accepted one
  assert.equal(Spans.neighbour(spans, spans[2], 1, (s) => s.id === 3), null);  // only itself passes
  assert.equal(Spans.neighbour([spans[0]], spans[0], 1), null);
});

test("Tab from the caret reaches the first span at or after it, Shift+Tab the last one before it", () => {
  const spans = [span(1, 0, 3, "NAME"), span(2, 12, 19, "CITY"), span(3, 21, 28, "CITY")];
  assert.equal(Spans.spanFromCaret(spans, 12, 1).id, 2);
  assert.equal(Spans.spanFromCaret(spans, 13, 1).id, 3);
  assert.equal(Spans.spanFromCaret(spans, 22, 1).id, 1);   // none after: wraps to the first
  assert.equal(Spans.spanFromCaret(spans, 12, -1).id, 1);
  assert.equal(Spans.spanFromCaret(spans, 29, -1).id, 3);
  assert.equal(Spans.spanFromCaret(spans, 0, -1).id, 3);   // none before: wraps to the last
  assert.equal(Spans.spanFromCaret([], 0, 1), null);
});

test("possible missed PHI rows are cleaned, sorted and found from an offset", () => {
  const rows = Spans.possibleMissedRows([[21, 28, 0.45], [5, 5, 0.9], [0, 3, 0.2]]);
  assert.deepEqual(rows, [{ start: 0, end: 3, p: 0.2 }, { start: 21, end: 28, p: 0.45 }]);
  assert.deepEqual(Spans.possibleMissedRows(null), []);
  assert.deepEqual(Spans.nextStartingFrom(rows, 4), { start: 21, end: 28, p: 0.45 });
  assert.deepEqual(Spans.nextStartingFrom(rows, 0), { start: 0, end: 3, p: 0.2 });
  assert.deepEqual(Spans.nextStartingFrom(rows, 29), { start: 0, end: 3, p: 0.2 });  // wraps round
  assert.equal(Spans.nextStartingFrom([], 0), null);
});

// Markup of nestRanges' pieces over "0123456789": <A> opens a piece of range A, </A> closes it.
function markup(pieces) {
  return pieces.map((p) => p.type === "text" ? "0123456789".slice(p.start, p.end)
    : p.type === "open" ? "<" + p.range.id + ">" : "</" + p.range.id + ">").join("");
}
function openPieces(pieces) {
  return pieces.filter((p) => p.type === "open").map((p) => [p.range.id, p.start, p.end]);
}

test("ranges that do not cross come out as they are", () => {
  const pieces = Spans.nestRanges([{ s: 2, e: 5, id: "A" }], 0, 10);
  assert.equal(markup(pieces), "01<A>234</A>56789");
  assert.deepEqual(pieces.map((p) => [p.type, p.start, p.end]),
    [["text", 0, 2], ["open", 2, 5], ["text", 2, 5], ["close", undefined, undefined], ["text", 5, 10]]);
  assert.equal(markup(Spans.nestRanges([], 0, 10)), "0123456789");
});

test("crossing ranges are split where one ends inside the other", () => {
  const a = { s: 2, e: 6, id: "A" }, b = { s: 4, e: 8, id: "B" };
  const pieces = Spans.nestRanges([a, b], 0, 10);
  assert.equal(markup(pieces), "01<A>23<B>45</B></A><B>67</B>89");
  assert.deepEqual(openPieces(pieces), [["A", 2, 6], ["B", 4, 6], ["B", 6, 8]]);
});

test("ranges starting together nest the longer outside, and the edge of the chunk closes what is open", () => {
  const pieces = Spans.nestRanges([{ s: 2, e: 8, id: "A" }, { s: 2, e: 4, id: "B" }], 0, 10);
  assert.equal(markup(pieces), "01<A><B>23</B>4567</A>89");
  assert.deepEqual(openPieces(pieces), [["A", 2, 8], ["B", 2, 4]]);
  // A span running past the chunk arrives clipped to it; nothing is left open at the chunk's end.
  const clipped = Spans.nestRanges([{ s: 3, e: 5, id: "A" }], 0, 5);
  assert.equal(markup(clipped), "012<A>34</A>");
  // Three ranges: C inside B, B crossing out of A; both inner ones reopen after A closes.
  const three = Spans.nestRanges([{ s: 1, e: 5, id: "A" }, { s: 3, e: 9, id: "B" }, { s: 4, e: 7, id: "C" }], 0, 10);
  assert.equal(markup(three), "0<A>12<B>3<C>4</C></B></A><B><C>56</C>78</B>9");
  assert.deepEqual(openPieces(three), [["A", 1, 5], ["B", 3, 5], ["C", 4, 5], ["B", 5, 9], ["C", 5, 7]]);
});

test("the browser build attaches the same functions to window.deidloopSpans", () => {
  const fs = require("node:fs");
  const vm = require("node:vm");
  const source = fs.readFileSync(path.join(__dirname, "..", "..", "static", "js", "spans.js"), "utf8");
  const window = {};
  vm.runInNewContext(source, { window: window });  // no `module` here, as in a page
  assert.deepEqual(Object.keys(window.deidloopSpans).sort(), Object.keys(Spans).sort());
  // Arrays made in the page's realm: copied here, so the comparison is of values, not prototypes.
  assert.deepEqual(Array.from(window.deidloopSpans.snapToUnits(TOKENS, false, 5, 14)), [1, 3]);
});
