/* The span and offset arithmetic of the annotation workbench: token boundaries, snapping a selection to
 * tokens, chunk lookup, span order and overlap, moving a span's edge, other mentions of a text, and splitting
 * ranges that cross one another so their markup nests. Nothing here touches the DOM or the page's state:
 * every function takes what it needs and returns a new value, so Node can test it (tests/js/spans.test.js).
 *
 * Offsets are JavaScript string indices into the record's text, as the server sends them; a range is
 * [start, end). `tokens` is what decodeTokenRuns returns: { start: Int32Array, end: Int32Array, count }.
 * A span is any object with start, end and label (the workbench's also carry id, origin, status, confidence).
 *
 * In the page this is a plain script loaded before workbench.js, as window.deidloopSpans; Node require()s it.
 */
(function (root) {
  "use strict";

  /* ---------------------------------------------------------------- sorted arrays and tokens */

  // Smallest i in [0, n] with array[i] > value (array ascending).
  function upperBound(array, n, value) {
    var lo = 0, hi = n;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (array[mid] > value) hi = mid; else lo = mid + 1; }
    return lo;
  }

  // Smallest i in [0, n] with array[i] >= value (array ascending).
  function lowerBound(array, n, value) {
    var lo = 0, hi = n;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (array[mid] >= value) hi = mid; else lo = mid + 1; }
    return lo;
  }

  // The server sends tokens run-length encoded: [gap, length, gap, length, …], each gap counted from the end
  // of the previous token (from 0 for the first).
  function decodeTokenRuns(runs) {
    var count = runs.length >> 1;
    var start = new Int32Array(count), end = new Int32Array(count);
    for (var k = 0, at = 0; k < count; k++) {
      start[k] = at + runs[2 * k];
      at = end[k] = start[k] + runs[2 * k + 1];
    }
    return { start: start, end: end, count: count };
  }

  // The token holding character `pos`, else the next one (clamped to the last token).
  function tokenAtOrAfter(tokens, pos) { return Math.min(upperBound(tokens.end, tokens.count, pos), tokens.count - 1); }

  // The last token starting before `pos` (clamped to the first token).
  function tokenBefore(tokens, pos) { return Math.max(lowerBound(tokens.start, tokens.count, pos) - 1, 0); }

  function isTokenStart(tokens, pos) {
    var i = lowerBound(tokens.start, tokens.count, pos);
    return i < tokens.count && tokens.start[i] === pos;
  }

  function isTokenEnd(tokens, pos) {
    var i = lowerBound(tokens.end, tokens.count, pos);
    return i < tokens.count && tokens.end[i] === pos;
  }

  /* ---------------------------------------------------------------- chunks (the text is rendered in pieces) */

  // Where each chunk of `chunkTokens` tokens begins, then the text's length: chunk i is [starts[i], starts[i + 1]).
  // A text without tokens is one chunk.
  function chunkStarts(tokens, textLength, chunkTokens) {
    var starts = [];
    if (tokens.count === 0) starts.push(0);
    for (var c = 0; c < tokens.count; c += chunkTokens) starts.push(c === 0 ? 0 : tokens.start[c]);
    starts.push(textLength);
    return starts;
  }

  // The chunk holding `pos`. preferEarlier: a position on a chunk boundary belongs to the chunk that ends
  // there (for the end of a range).
  function chunkOf(starts, pos, preferEarlier) {
    var n = starts.length - 1;
    var i = upperBound(starts, n, preferEarlier ? pos - 1 : pos) - 1;
    return Math.max(0, Math.min(i, n - 1));
  }

  /* ---------------------------------------------------------------- selection units (tokens, or characters) */

  // The characters a selection from unit `anchor` to unit `focus` (either order, both included) covers.
  function unitRange(tokens, charMode, textLength, anchor, focus) {
    var lo = Math.min(anchor, focus), hi = Math.max(anchor, focus);
    if (charMode) return [lo, Math.min(hi + 1, textLength)];
    return [tokens.start[lo], tokens.end[hi]];
  }

  // The first and last unit of the characters [start, end): every token they touch, or the next token when
  // they touch none (a drag over white space); in character mode, the characters themselves.
  function snapToUnits(tokens, charMode, start, end) {
    if (charMode) return [start, Math.max(start, end - 1)];
    var first = tokenAtOrAfter(tokens, start);
    return [first, Math.max(first, tokenBefore(tokens, end))];
  }

  /* ---------------------------------------------------------------- spans */

  // Document order: by start, then end, then label, then id (so equal spans still sort the same way).
  function compareSpans(a, b) {
    return a.start - b.start || a.end - b.end || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0) || a.id - b.id;
  }

  function overlaps(span, start, end) { return span.start < end && start < span.end; }

  // The spans that do not overlap [start, end).
  function withoutOverlaps(spans, start, end) {
    return spans.filter(function (s) { return !overlaps(s, start, end); });
  }

  // The first span other than `except` that overlaps [start, end), else null.
  function firstOverlap(spans, start, end, except) {
    for (var i = 0; i < spans.length; i++) if (spans[i] !== except && overlaps(spans[i], start, end)) return spans[i];
    return null;
  }

  function indexOfId(spans, id) {
    for (var i = 0; i < spans.length; i++) if (spans[i].id === id) return i;
    return -1;
  }

  // [start, end] of `span` with one edge moved by one unit: edge "start"|"end", direction -1|+1. In token
  // mode an edge jumps to the neighbouring token's edge, and stays put when there is none. The result may be
  // empty or reach past the text: the caller refuses those.
  function movedEdge(tokens, charMode, span, edge, direction) {
    var start = span.start, end = span.end, n = tokens.count, i;
    if (edge === "start") {
      if (charMode) start += direction;
      else if (direction < 0) { i = lowerBound(tokens.start, n, start) - 1; if (i >= 0) start = tokens.start[i]; }
      else { i = upperBound(tokens.start, n, start); if (i < n) start = tokens.start[i]; }
    } else {
      if (charMode) end += direction;
      else if (direction < 0) { i = lowerBound(tokens.end, n, end) - 1; if (i >= 0) end = tokens.end[i]; }
      else { i = upperBound(tokens.end, n, end); if (i < n) end = tokens.end[i]; }
    }
    return [start, end];
  }

  // The other mentions of `focused`'s text that can take its label: {mentions: [{start, end, label}] in text
  // order, skipped: how many overlap a span when overlaps are not allowed}. With tokens, a mention must begin
  // and end on token edges; one that already has the label is left out. Mentions may overlap one another
  // ("aa" twice in "aaa"), so each one taken counts as a span for the next.
  function otherMentions(text, tokens, spans, focused, allowOverlap) {
    var needle = text.slice(focused.start, focused.end);
    var mentions = [], skipped = 0, all = spans.slice();
    for (var at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
      var stop = at + needle.length;
      if (at === focused.start) continue;
      if (tokens.count && (!isTokenStart(tokens, at) || !isTokenEnd(tokens, stop))) continue;
      var labelled = false, clashes = 0;
      for (var i = 0; i < all.length; i++) {
        if (!overlaps(all[i], at, stop)) continue;
        clashes++;
        if (all[i].start === at && all[i].end === stop && all[i].label === focused.label) labelled = true;
      }
      if (labelled) continue;
      if (clashes && !allowOverlap) { skipped++; continue; }
      var mention = { start: at, end: stop, label: focused.label };
      mentions.push(mention);
      all.push(mention);
    }
    return { mentions: mentions, skipped: skipped };
  }

  // The span after (direction 1) or before (-1) `span` in `spans` (document order) that passes `test` (any,
  // without one), wrapping round; null when no other span does.
  function neighbour(spans, span, direction, test) {
    var i = indexOfId(spans, span.id);
    for (var step = 1; step < spans.length; step++) {
      var candidate = spans[(i + direction * step + spans.length * step) % spans.length];
      if (!test || test(candidate)) return candidate;
    }
    return null;
  }

  // The span Tab (direction 1) or Shift+Tab (-1) reaches from the caret when none is focused: the first one
  // starting at or after it, or the last one starting before it, wrapping round; null when there are none.
  function spanFromCaret(spans, caret, direction) {
    if (!spans.length) return null;
    var i;
    if (direction > 0) {
      for (i = 0; i < spans.length; i++) if (spans[i].start >= caret) return spans[i];
      return spans[0];
    }
    for (i = spans.length - 1; i >= 0; i--) if (spans[i].start < caret) return spans[i];
    return spans[spans.length - 1];
  }

  /* ---------------------------------------------------------------- possible missed PHI */

  // The server's [start, end, p] rows as {start, end, p} in text order, empty ones dropped.
  function possibleMissedRows(rows) {
    return (rows || []).map(function (row) { return { start: row[0], end: row[1], p: row[2] }; })
      .filter(function (row) { return row.end > row.start; })
      .sort(function (a, b) { return a.start - b.start; });
  }

  // The first row starting at or after `from`, wrapping round to the first; null when there are none.
  function nextStartingFrom(rows, from) {
    for (var i = 0; i < rows.length; i++) if (rows[i].start >= from) return rows[i];
    return rows.length ? rows[0] : null;
  }

  /* ---------------------------------------------------------------- nesting ranges for markup */

  // Ranges that cross one another (overlapping spans, or one cut by the edge of [from, to)) cannot each be one
  // element: this splits them into pieces that nest. `ranges` ({s, e, …}, inside [from, to], none empty) must
  // be sorted by start, longer first at equal starts. Returns, in text order:
  //   {type: "text", start, end}          text between two boundaries,
  //   {type: "open", range, start, end}   a piece of `range` begins; it covers [start, end),
  //   {type: "close", range}              that piece ends.
  // At a boundary where a range ends, the ranges opened inside it are closed with it and reopened after.
  function nestRanges(ranges, from, to) {
    var points = [to];
    ranges.forEach(function (r) { points.push(r.s, r.e); });
    points.sort(function (a, b) { return a - b; });

    var out = [], stack = [], pos = from, next = 0;
    function open(range, at) {
      var piece = { type: "open", range: range, start: at, end: at };
      out.push(piece);
      stack.push(piece);
    }
    function endsAt(at) {
      for (var q = 0; q < stack.length; q++) if (stack[q].range.e === at) return true;
      return false;
    }

    for (var pi = 0; pi < points.length; pi++) {
      var at = points[pi];
      if (pi > 0 && at === points[pi - 1]) continue;
      if (at > pos) { out.push({ type: "text", start: pos, end: at }); pos = at; }
      if (endsAt(at)) {
        var reopen = [];
        while (stack.length && endsAt(at)) {
          var top = stack.pop();
          top.end = at;
          out.push({ type: "close", range: top.range });
          if (top.range.e !== at) reopen.push(top.range);
        }
        for (var r = reopen.length - 1; r >= 0; r--) open(reopen[r], at);
      }
      while (next < ranges.length && ranges[next].s === at) open(ranges[next++], at);
    }
    return out;
  }

  var api = {
    upperBound: upperBound, lowerBound: lowerBound, decodeTokenRuns: decodeTokenRuns,
    tokenAtOrAfter: tokenAtOrAfter, tokenBefore: tokenBefore, isTokenStart: isTokenStart, isTokenEnd: isTokenEnd,
    chunkStarts: chunkStarts, chunkOf: chunkOf, unitRange: unitRange, snapToUnits: snapToUnits,
    compareSpans: compareSpans, overlaps: overlaps, withoutOverlaps: withoutOverlaps, firstOverlap: firstOverlap,
    indexOfId: indexOfId, movedEdge: movedEdge, otherMentions: otherMentions, neighbour: neighbour,
    spanFromCaret: spanFromCaret, possibleMissedRows: possibleMissedRows, nextStartingFrom: nextStartingFrom,
    nestRanges: nestRanges,
  };
  if (root) root.deidloopSpans = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof window !== "undefined" ? window : null);
