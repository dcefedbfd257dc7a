/* The annotation workbench: correct a record's PHI spans with the keyboard (or the mouse), autosave drafts,
 * submit and move on to the next record.
 *
 * The page embeds everything this script needs as JSON (#workbench-data). The text is rendered once, in
 * chunks of CHUNK_TOKENS tokens; an edit re-renders only the chunks whose spans changed. Spans are immutable
 * objects: an edit builds a new sorted array, so the history is a stack of arrays and "what changed" is the
 * set difference of two of them (by identity). The selection is kept as units (tokens, or characters in
 * character mode) and shown with the browser's own selection, so no element per token is needed.
 *
 * The offset arithmetic (tokens, chunks, snapping, overlaps, nesting) is in spans.js, loaded before this
 * script; the websocket is socket.js's. When the server is away, a write is kept in this browser
 * (localStorage) and tried again with back-off until it is back; the record kept, the schedule and the choice
 * between saving, dropping and showing a conflict are drafts.js's.
 */
(function () {
  "use strict";

  var Spans = window.deidloopSpans;
  var Drafts = window.deidloopDrafts;
  var dataElement = document.getElementById("workbench-data");
  var root = document.getElementById("wb");
  if (!dataElement || !root) return;

  var CHUNK_TOKENS = 128;
  var SAVE_DELAY_MS = 800;
  var RETRY_DELAY_MS = 5000;
  var IDLE_AFTER_MS = 30000;
  var HISTORY_LIMIT = 500;
  // Numbers as the page's language writes them (<html lang>, set from the user's choice).
  var pageLanguage = document.documentElement.lang || "en";
  function formatNumber(value, digits) {
    var options = digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits };
    return Number(value).toLocaleString(pageLanguage, options);
  }
  var STALE_TEXT = gettext("This record was changed in another tab or by someone else. Reload to see the current version.");

  var t0 = performance.now();
  var data = JSON.parse(dataElement.textContent);
  var text = data.document.text;
  var labels = data.project.labels.slice();
  var allowOverlap = !!data.project.allow_overlap;
  var urls = data.urls;

  var docEl = document.getElementById("wb-doc");
  var saveEl = document.getElementById("wb-save");
  var messageEl = document.getElementById("wb-message");
  var staleEl = document.getElementById("wb-stale");
  var offlineEl = document.getElementById("wb-offline");
  var offlineTextEl = document.getElementById("wb-offline-text");
  var offlineWhenEl = document.getElementById("wb-offline-when");
  var conflictEl = document.getElementById("wb-conflict");
  var helpEl = document.getElementById("wb-help");
  var filterEl = document.getElementById("wb-filter");
  var filterInput = document.getElementById("wb-filter-input");
  var filterList = document.getElementById("wb-filter-list");
  var modeEl = document.getElementById("wb-mode");
  var countsEl = document.getElementById("wb-counts");
  var focusInfoEl = document.getElementById("wb-focus-info");
  var toastsEl = document.getElementById("wb-toasts");
  var submitButton = document.getElementById("wb-submit");

  /* ---------------------------------------------------------------- labels and their colours */

  // Hand-picked hues for the first labels, then the golden angle so any number of labels stay apart.
  var HUES = [211, 4, 135, 32, 279, 176, 330, 55, 96, 250];
  var labelIndex = new Map();
  labels.forEach(function (label, i) { labelIndex.set(label, i); });
  // The project's colour (a hue) and shortcut key of each label (annotator.schemas.label_styles).
  var styles = data.project.label_styles || [];
  var labelByKey = new Map();
  var keyOfLabel = new Map();
  styles.forEach(function (style) {
    if (style.key) { labelByKey.set(style.key, style.label); keyOfLabel.set(style.label, style.key); }
  });

  function labelClass(label) {
    var i = labelIndex.get(label);
    if (i === undefined) {  // a label the model knows but the project does not list: still gets a colour
      i = labelIndex.size;
      labelIndex.set(label, i);
      addLabelRule(i);
    }
    return "L" + i;
  }

  var labelStyle = document.createElement("style");
  document.head.appendChild(labelStyle);
  function hueOf(i) {
    if (i < styles.length) return styles[i].hue;
    return i < HUES.length ? HUES[i] : Math.round((i * 137.508) % 360);
  }
  function addLabelRule(i) {
    labelStyle.sheet.insertRule(".L" + i + "{--h:" + hueOf(i) + "}", labelStyle.sheet.cssRules.length);
  }
  labelStyle.textContent = labels.map(function (_, i) { return ".L" + i + "{--h:" + hueOf(i) + "}"; }).join("\n");

  /* ---------------------------------------------------------------- tokens */

  var tokens = Spans.decodeTokenRuns(data.token_runs);
  var nTokens = tokens.count;

  var possibleMissed = Spans.possibleMissedRows(data.possible_missed);
  var pmStarts = possibleMissed.map(function (row) { return row.start; });

  /* ---------------------------------------------------------------- spans and history */

  var nextSpanId = 1;
  function makeSpan(fields) {
    return {
      id: fields.id || nextSpanId++, start: fields.start, end: fields.end, label: fields.label,
      origin: fields.origin || "human",
      confidence: fields.confidence === undefined || fields.confidence === null ? null : Number(fields.confidence),
      status: fields.status || (fields.origin === "model" ? "pending" : "accepted"),
    };
  }
  function withChanges(span, changes) {
    var copy = makeSpan(span);
    for (var key in changes) copy[key] = changes[key];
    return copy;
  }
  
  var spans = (data.annotation.spans || []).map(makeSpan).sort(Spans.compareSpans);
  var focusId = null;
  var undoStack = [];
  var redoStack = [];

  // The spans with `target` replaced by a copy carrying `changes` (same id, so focus stays on it).
  function replaced(target, changes) {
    return spans.map(function (s) { return s === target ? withChanges(s, changes) : s; });
  }

  function spanById(id) {
    var i = Spans.indexOfId(spans, id);
    return i === -1 ? null : spans[i];
  }

  /* ---------------------------------------------------------------- rendering */

  var chunkStart = Spans.chunkStarts(tokens, text.length, CHUNK_TOKENS);  // chunkStart[nChunks] = text.length
  var nChunks = chunkStart.length - 1;
  var chunkEls = [];

  // preferEarlier: a position on a chunk boundary belongs to the chunk that ends there (for range ends).
  function chunkOf(pos, preferEarlier) { return Spans.chunkOf(chunkStart, pos, preferEarlier); }

  var ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
  function escapeHtml(value) { return value.replace(/[&<>"]/g, function (ch) { return ESCAPES[ch]; }); }

  function spanTitle(span) {
    var parts = [span.label];
    if (span.origin === "model") {
      parts.push(span.confidence === null ? gettext("model") :
        interpolate(gettext("model, confidence %(confidence)s"), { confidence: formatNumber(span.confidence, 2) }, true));
      parts.push(span.status === "pending" ? gettext("suggestion (Enter accepts)") : gettext("accepted"));
    } else {
      parts.push(span.origin);
    }
    return parts.join(" · ");
  }

  function openTagHtml(range, pieceStart, pieceEnd) {
    if (range.kind === 1) {
      return '<u class="pm" title="' +
        escapeHtml(interpolate(gettext("possible missed PHI (p=%(p)s)"), { p: formatNumber(range.p, 2) }, true)) + '">';
    }
    var span = range.span;
    var cls = labelClass(span.label) + (span.origin === "model" ? " m" : " h");
    var style = "";
    if (span.status === "pending") {
      cls += " p";
      var confidence = span.confidence === null ? 0.5 : span.confidence;
      style = ' style="--a:' + (0.12 + 0.5 * confidence).toFixed(2) + '"';
    }
    if (pieceStart > span.start) cls += " cl";
    if (pieceEnd < span.end) cls += " cr";
    if (span.id === focusId) cls += " f";
    var labelAttr = "";
    if (pieceEnd === span.end) { cls += " e"; labelAttr = ' data-l="' + escapeHtml(span.label) + '"'; }
    return '<mark class="' + cls + '" data-s="' + span.id + '"' + labelAttr + style +
      ' title="' + escapeHtml(spanTitle(span)) + '">';
  }

  // HTML of the text between cs and ce with its spans and possible-missed tokens. Ranges that cross one
  // another (overlapping spans, or a chunk edge) are closed and reopened, so every element nests properly.
  // An open tag describes its piece (cut left or right), so it is written once the piece's end is known.
  function chunkHtml(cs, ce) {
    var ranges = [];
    for (var i = 0; i < spans.length; i++) {
      var span = spans[i];
      if (span.start >= ce) break;
      if (span.end > cs) ranges.push({ s: Math.max(span.start, cs), e: Math.min(span.end, ce), kind: 0, span: span });
    }
    for (var j = Math.max(0, Spans.upperBound(pmStarts, pmStarts.length, cs) - 1); j < possibleMissed.length; j++) {
      var pm = possibleMissed[j];
      if (pm.start >= ce) break;
      if (pm.end > cs) ranges.push({ s: Math.max(pm.start, cs), e: Math.min(pm.end, ce), kind: 1, p: pm.p });
    }
    if (!ranges.length) return escapeHtml(text.slice(cs, ce));
    ranges.sort(function (a, b) { return a.s - b.s || b.e - a.e || a.kind - b.kind; });

    var pieces = Spans.nestRanges(ranges, cs, ce);
    var html = new Array(pieces.length);
    for (var p = 0; p < pieces.length; p++) {
      var piece = pieces[p];
      if (piece.type === "text") html[p] = escapeHtml(text.slice(piece.start, piece.end));
      else if (piece.type === "open") html[p] = openTagHtml(piece.range, piece.start, piece.end);
      else html[p] = piece.range.kind === 0 ? "</mark>" : "</u>";
    }
    return html.join("");
  }

  function renderAll() {
    var parts = new Array(nChunks);
    for (var i = 0; i < nChunks; i++) {
      parts[i] = '<span class="ck" data-c="' + i + '">' + chunkHtml(chunkStart[i], chunkStart[i + 1]) + "</span>";
    }
    docEl.innerHTML = parts.join("");
    chunkEls = Array.prototype.slice.call(docEl.children);
  }

  var lastEditChunks = null;  // how many chunks of the text the last edit rebuilt (shown to the tests)

  function renderRange(lo, hi) {
    var first = chunkOf(lo, false), last = chunkOf(Math.max(lo + 1, hi), true);
    for (var i = first; i <= last; i++) chunkEls[i].innerHTML = chunkHtml(chunkStart[i], chunkStart[i + 1]);
    lastEditChunks = last - first + 1;
  }

  function markFocus() {
    var old = docEl.querySelectorAll("mark.f");
    for (var i = 0; i < old.length; i++) old[i].classList.remove("f");
    var span = focusId === null ? null : spanById(focusId);
    if (!span) { focusId = null; return; }
    for (var ci = chunkOf(span.start, false); ci <= chunkOf(span.end, true); ci++) {
      var pieces = chunkEls[ci].querySelectorAll('mark[data-s="' + span.id + '"]');
      for (var j = 0; j < pieces.length; j++) pieces[j].classList.add("f");
    }
  }

  /* ---------------------------------------------------------------- selection (units: tokens or characters) */

  var charMode = nTokens === 0;
  var anchor = 0, focusUnit = 0;
  var unitCount = function () { return charMode ? text.length : nTokens; };

  function selectionRange() { return Spans.unitRange(tokens, charMode, text.length, anchor, focusUnit); }

  function setSelectionUnits(a, f) {
    var n = unitCount();
    if (!n) return;
    anchor = Math.max(0, Math.min(a, n - 1));
    focusUnit = Math.max(0, Math.min(f, n - 1));
  }

  // Select the characters [start, end) snapped to units; direction follows `backwards`.
  function selectChars(start, end, backwards) {
    var units = Spans.snapToUnits(tokens, charMode, start, end);
    if (backwards) setSelectionUnits(units[1], units[0]); else setSelectionUnits(units[0], units[1]);
  }

  function nodeAt(pos, isEnd) {
    var ci = chunkOf(pos, isEnd);
    var el = chunkEls[ci];
    var offset = chunkStart[ci];
    var walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    var node;
    while ((node = walker.nextNode())) {
      var len = node.data.length;
      if (isEnd ? pos <= offset + len : pos < offset + len) return [node, pos - offset];
      offset += len;
    }
    return [el, el.childNodes.length];
  }

  function offsetOf(node, offset) {
    if (!node) return null;
    if (node === docEl) return offset >= nChunks ? text.length : chunkStart[offset];
    var element = node.nodeType === 1 ? node : node.parentNode;
    var chunk = element && element.closest ? element.closest(".ck") : null;
    if (!chunk || !docEl.contains(chunk)) return null;
    var range = document.createRange();
    range.setStart(chunk, 0);
    range.setEnd(node, offset);
    return chunkStart[+chunk.getAttribute("data-c")] + range.toString().length;
  }

  function showSelection(scroll) {
    if (!text.length || !chunkEls.length) return;
    var range = selectionRange();
    var startNode = nodeAt(range[0], false), endNode = nodeAt(range[1], true);
    var selection = window.getSelection();
    if (focusUnit < anchor) selection.setBaseAndExtent(endNode[0], endNode[1], startNode[0], startNode[1]);
    else selection.setBaseAndExtent(startNode[0], startNode[1], endNode[0], endNode[1]);
    if (scroll) scrollToRange(startNode, endNode, focusUnit < anchor);
  }

  function scrollToRange(startNode, endNode, towardsStart) {
    var range = document.createRange();
    if (towardsStart) { range.setStart(startNode[0], startNode[1]); range.setEnd(startNode[0], startNode[1]); }
    else { range.setStart(endNode[0], endNode[1]); range.setEnd(endNode[0], endNode[1]); }
    var rect = range.getBoundingClientRect();
    var box = docEl.getBoundingClientRect();
    if (!rect || (rect.top === 0 && rect.bottom === 0)) return;
    var margin = 40;
    if (rect.top < box.top + margin) docEl.scrollTop -= box.top + margin - rect.top;
    else if (rect.bottom > box.bottom - margin) docEl.scrollTop += rect.bottom - box.bottom + margin;
  }

  function moveCaret(direction, extend) {
    var n = unitCount();
    if (!n) return;
    if (extend) {
      setSelectionUnits(anchor, focusUnit + direction);
    } else {
      // Step off the selection on the side of the arrow, as a text editor collapses a selection.
      var to = direction < 0 ? Math.min(anchor, focusUnit) - 1 : Math.max(anchor, focusUnit) + 1;
      to = Math.max(0, Math.min(to, n - 1));
      setSelectionUnits(to, to);
    }
    setFocus(null, false);
    showSelection(true);
  }

  function toggleCharMode() {
    if (!nTokens) { say(gettext("This record has no tokens: character mode only.")); return; }
    var range = selectionRange();
    charMode = !charMode;
    selectChars(range[0], range[1], focusUnit < anchor);
    modeEl.textContent = charMode ? gettext("Characters") : gettext("Tokens");
    root.classList.toggle("wb-charmode", charMode);
    showSelection(false);
    say(charMode ? gettext("Character mode: selection and resizing by characters (c returns to tokens).") : gettext("Token mode."));
  }

  /* ---------------------------------------------------------------- focus of a span */

  function setFocus(id, scroll) {
    if (id === focusId) { if (scroll) revealFocused(); return; }
    focusId = id;
    markFocus();
    describeFocus();
    if (scroll) revealFocused();
  }

  function revealFocused() {
    var span = spanById(focusId);
    if (!span) return;
    selectChars(span.start, span.end, false);
    showSelection(true);
  }

  function describeFocus() {
    var span = focusId === null ? null : spanById(focusId);
    if (!span) {
      focusInfoEl.innerHTML = '<span class="muted">' + escapeHtml(gettext("No span focused (Tab moves to the next one).")) + "</span>";
      return;
    }
    var excerpt = text.slice(span.start, span.end);
    if (excerpt.length > 80) excerpt = excerpt.slice(0, 77) + "…";
    focusInfoEl.innerHTML =
      '<span class="wb-swatch ' + labelClass(span.label) + '"></span> <b>' + escapeHtml(span.label) + "</b> " +
      "<q>" + escapeHtml(excerpt) + '</q><br><span class="muted">' +
      escapeHtml(spanTitle(span).split(" · ").slice(1).join(" · ")) + " · " + span.start + "–" + span.end +
      "</span>";
  }

  function updateCounts() {
    var pending = 0;
    for (var i = 0; i < spans.length; i++) if (spans[i].status === "pending") pending++;
    countsEl.textContent = interpolate(ngettext("%s span", "%s spans", spans.length), [formatNumber(spans.length)]) + " · " +
      interpolate(ngettext("%s suggestion to review", "%s suggestions to review", pending), [formatNumber(pending)]);
  }

  /* ---------------------------------------------------------------- edits */

  // Replace the spans with `next` (any order), record the previous state for undo, re-render what changed.
  function commit(next, nextFocus) {
    if (stale) { showStale(); return false; }
    if (submitted) { say(SUBMITTED_TEXT); return false; }
    undoStack.push({ spans: spans, focus: focusId });
    if (undoStack.length > HISTORY_LIMIT) undoStack.shift();
    redoStack = [];
    applyState(next.slice().sort(Spans.compareSpans), nextFocus);
    scheduleSave();
    return true;
  }

  var lastEditMs = null;  // how long the last edit took to apply and re-render (shown to the tests)

  function applyState(next, nextFocus) {
    var started = performance.now();
    var before = new Set(spans), after = new Set(next);
    var lo = Infinity, hi = -Infinity;
    spans.forEach(function (s) { if (!after.has(s)) { lo = Math.min(lo, s.start); hi = Math.max(hi, s.end); } });
    next.forEach(function (s) { if (!before.has(s)) { lo = Math.min(lo, s.start); hi = Math.max(hi, s.end); } });
    spans = next;
    focusId = nextFocus !== null && spanById(nextFocus) ? nextFocus : null;
    lastEditChunks = 0;
    if (lo <= hi) renderRange(lo, hi);
    markFocus();
    describeFocus();
    updateCounts();
    showSelection(false);
    lastEditMs = performance.now() - started;
  }

  function undo() {
    if (submitted) { say(SUBMITTED_TEXT); return; }
    if (!undoStack.length) { say(gettext("Nothing to undo.")); return; }
    if (stale) { showStale(); return; }
    var state = undoStack.pop();
    redoStack.push({ spans: spans, focus: focusId });
    applyState(state.spans, state.focus);
    revealFocused();
    scheduleSave();
    say(gettext("Undone."));
  }

  function redo() {
    if (submitted) { say(SUBMITTED_TEXT); return; }
    if (!redoStack.length) { say(gettext("Nothing to redo.")); return; }
    if (stale) { showStale(); return; }
    var state = redoStack.pop();
    undoStack.push({ spans: spans, focus: focusId });
    applyState(state.spans, state.focus);
    revealFocused();
    scheduleSave();
    say(gettext("Redone."));
  }

  function applyLabel(label) {
    var focused = focusId === null ? null : spanById(focusId);
    if (focused) {
      if (focused.label === label && focused.status === "accepted") return;
      commit(replaced(focused, { label: label, status: "accepted" }), focused.id);
      say(focused.label === label ? interpolate(gettext("Accepted %(label)s."), { label: label }, true) :
        interpolate(gettext("Relabelled %(old)s → %(label)s."), { old: focused.label, label: label }, true));
      return;
    }
    if (!text.length) return;
    var range = selectionRange();
    var start = range[0], end = range[1];
    var same = spans.filter(function (s) { return s.start === start && s.end === end && s.label === label; });
    if (same.length) { setFocus(same[0].id, true); say(gettext("That span exists already.")); return; }
    var kept = allowOverlap ? spans : Spans.withoutOverlaps(spans, start, end);
    var created = makeSpan({ start: start, end: end, label: label, origin: "human", status: "accepted" });
    commit(kept.concat([created]), created.id);
    var gone = spans.length - kept.length;
    say(gone ? interpolate(ngettext("Labelled %(label)s (replaced %(count)s overlapping span).",
      "Labelled %(label)s (replaced %(count)s overlapping spans).", gone), { label: label, count: formatNumber(gone) }, true) :
      interpolate(gettext("Labelled %(label)s."), { label: label }, true));
  }

  function acceptFocused() {
    var focused = spanById(focusId);
    if (!focused) { say(gettext("Tab to a span first, then Enter accepts it.")); return; }
    var following = neighbour(focused, 1, function (s) { return s.status === "pending"; });
    if (focused.status === "pending") {
      commit(spans.map(function (s) { return s === focused ? withChanges(s, { status: "accepted" }) : s; }),
        following ? following.id : focused.id);
      say(interpolate(gettext("Accepted %(label)s."), { label: focused.label }, true));
    } else {
      if (following) setFocus(following.id, true);
      say(gettext("Already accepted."));
    }
    revealFocused();
  }

  function acceptAll() {
    var pending = spans.filter(function (s) { return s.status === "pending"; }).length;
    if (!pending) { say(gettext("No suggestions to accept.")); return; }
    var accepted = spans.map(function (s) {
      return s.status === "pending" ? withChanges(s, { status: "accepted" }) : s;
    });
    commit(accepted, focusId);
    say(interpolate(ngettext("Accepted %s suggestion.", "Accepted %s suggestions.", pending), [formatNumber(pending)]));
  }

  function deleteFocused() {
    var focused = spanById(focusId);
    if (!focused) { say(gettext("Tab to a span first, then x (or Delete) removes it.")); return; }
    var at = Spans.indexOfId(spans, focused.id);
    var following = spans[at + 1] || spans[at - 1] || null;
    commit(spans.filter(function (s) { return s !== focused; }), following ? following.id : null);
    say(interpolate(focused.origin === "model" && focused.status === "pending" ? gettext("Rejected %(label)s.") : gettext("Deleted %(label)s."),
      { label: focused.label }, true));
    if (following) revealFocused();
    else { selectChars(focused.start, focused.end, false); showSelection(false); }
  }

  // Move one edge of the focused span by one unit: edge "start"|"end", direction -1|+1.
  function resizeFocused(edge, direction) {
    var focused = spanById(focusId);
    if (!focused) { say(gettext("Tab to a span first, then [ ] move its start and { } its end.")); return; }
    var moved = Spans.movedEdge(tokens, charMode, focused, edge, direction);
    var start = moved[0], end = moved[1];
    if (start < 0 || end > text.length || (start === focused.start && end === focused.end)) {
      say(gettext("Cannot move further."));
      return;
    }
    if (start >= end) {
      say(charMode ? gettext("A span keeps at least one character (x deletes it).") : gettext("A span keeps at least one token (x deletes it)."));
      return;
    }
    if (!allowOverlap) {
      var blocker = Spans.firstOverlap(spans, start, end, focused);
      if (blocker) {
        say(interpolate(gettext("That would overlap the %(label)s span “%(text)s”."),
          { label: blocker.label, text: text.slice(blocker.start, blocker.end) }, true));
        return;
      }
    }
    commit(replaced(focused, { start: start, end: end, status: "accepted" }), focused.id);
    revealFocused();
    say(focused.label + ": “" + text.slice(start, end) + "”.");
  }

  // Give the focused span's label to every other token-aligned mention of the same text.
  function labelMentions() {
    var focused = spanById(focusId);
    if (!focused) { say(gettext("Tab to a span first, then m labels every other mention of its text.")); return; }
    var needle = text.slice(focused.start, focused.end);
    var found = Spans.otherMentions(text, tokens, spans, focused, allowOverlap);
    var added = found.mentions.map(function (m) {
      return makeSpan({ start: m.start, end: m.end, label: m.label, origin: "human", status: "accepted" });
    });
    var skippedNote = found.skipped ? " " + interpolate(gettext("(%s skipped: they overlap other spans)"), [formatNumber(found.skipped)]) : "";
    if (!added.length) { say(interpolate(gettext("No other mention of “%(text)s” to label%(skipped)s."), { text: needle, skipped: skippedNote }, true)); return; }
    commit(spans.concat(added), focused.id);
    say(interpolate(ngettext("Labelled %(count)s more mention of “%(text)s” as %(label)s%(skipped)s.",
      "Labelled %(count)s more mentions of “%(text)s” as %(label)s%(skipped)s.", added.length),
      { count: formatNumber(added.length), text: needle, label: focused.label, skipped: skippedNote }, true));
  }

  // The span after (direction 1) or before (-1) `span` in document order that passes `test`, wrapping round.
  function neighbour(span, direction, test) { return Spans.neighbour(spans, span, direction, test); }

  function focusNextSpan(direction) {
    if (!spans.length) { say(gettext("No spans yet: select tokens and press a number to add one.")); return; }
    var current = spanById(focusId);
    var target = current ? neighbour(current, direction) || current
      : Spans.spanFromCaret(spans, selectionRange()[0], direction);
    setFocus(target.id, true);
  }

  function jumpToPossibleMissed() {
    if (!possibleMissed.length) { say(gettext("No possible missed PHI in this record.")); return; }
    var target = Spans.nextStartingFrom(possibleMissed, selectionRange()[1]);
    setFocus(null, false);
    selectChars(target.start, target.end, false);
    showSelection(true);
    say(interpolate(gettext("Possible missed PHI (p=%(p)s): press a number to label it."), { p: formatNumber(target.p, 2) }, true));
  }

  /* ---------------------------------------------------------------- saving and submitting */

  var version = data.annotation.version;
  // A submitted annotation is final here; Ctrl+Enter just moves on to the next record.
  var submitted = data.annotation.state === "submitted";
  var SUBMITTED_TEXT =
    gettext("This record has been submitted and can no longer be changed here (Ctrl+Enter opens the next one).");
  var OFFLINE_TEXT =
    gettext("Connection lost — your draft is kept in this browser and will be saved when the server is back.");
  var OFFLINE_UNKEPT_TEXT =
    gettext("Connection lost — this browser could not keep a copy of your draft: leave this tab open, it will be saved when the server is back.");
  var NEXT_OFFLINE_TEXT = gettext("Connection lost — your record is submitted; the next one opens when the server is back.");
  var stale = false, dirty = false, submitting = false;
  var saveTimer = null, inflight = null, inflightActive = 0;
  // While the server is away: tries on a back-off schedule (drafts.js), the next one at retryAt.
  var offline = false, attempt = 0, retryTimer = null, retryAt = 0, countdownTimer = null, nextPending = false;
  // The draft kept in this browser (localStorage) while it is not safely on the server.
  var draftKey = Drafts.draftKey(data.annotation.id);
  var hasLocal = false, localFailed = false;
  // Writes sent without an answer since the last one answered: one may have reached the server (drafts.js).
  var unconfirmed = [];
  // A kept draft that the record's newer version on the server conflicts with: {local, server, restore}.
  var conflict = null;

  function csrfToken() {
    var headers = document.body.getAttribute("hx-headers");
    if (headers) {
      try {
        var token = JSON.parse(headers)["X-CSRFToken"];
        if (token) return token;
      } catch (error) { /* not JSON: use the cookie */ }
    }
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function wireSpans() {
    return spans.map(function (s) {
      return { start: s.start, end: s.end, label: s.label, origin: s.origin, status: s.status };
    });
  }

  // The save states, shown in the page's language; the data-state attribute names them for the style sheet.
  var SAVED = gettext("Saved"), NOT_SAVED = gettext("Not saved"), KEPT = gettext("Kept in this browser"),
    SAVING = gettext("Saving…"), SUBMITTING = gettext("Submitting…"), SUBMITTED = gettext("Submitted");
  var SAVE_STATES = {};
  SAVE_STATES[SAVED] = "saved"; SAVE_STATES[NOT_SAVED] = "error"; SAVE_STATES[KEPT] = "offline";
  function setSaveStatus(state, detail) {
    saveEl.textContent = state;
    saveEl.setAttribute("data-state", SAVE_STATES[state] || "busy");
    saveEl.title = detail || "";
  }

  // Resolves to {status, ok, json}; rejects only when no answer came (the server or the network is away).
  function request(method, url, body, keepalive) {
    var init = {
      method: method, credentials: "same-origin", keepalive: !!keepalive,
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken() },
    };
    if (body !== undefined) init.body = JSON.stringify(body);
    return fetch(url, init).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (json) {
        return { status: response.status, ok: response.ok, json: json };
      });
    });
  }

  /* The draft kept in this browser: written when a write fails for want of a server, on every edit while it
   * is away, and when the page is left with edits not yet saved; removed once the server has them all. */
  function keepLocal() {
    noteActivity();
    var record = Drafts.draftRecord({
      annotation: data.annotation.id, version: version, spans: wireSpans(),
      activeSeconds: activeSeconds + inflightActive, unconfirmed: unconfirmed, savedAt: Date.now(),
    });
    try {
      window.localStorage.setItem(draftKey, JSON.stringify(record));
      hasLocal = true;
      localFailed = false;
    } catch (error) {  // storage full or disabled: say so rather than pretend
      localFailed = true;
    }
  }

  function dropLocal() {
    hasLocal = false;
    try { window.localStorage.removeItem(draftKey); } catch (error) { /* nothing kept */ }
  }

  function readLocal() {
    try { return Drafts.parseDraft(window.localStorage.getItem(draftKey), data.annotation.id); }
    catch (error) { return null; }
  }

  function scheduleSave() {
    if (stale || submitting) return;
    dirty = true;
    if (conflict) {
      // Not sent until a person chooses; edits to the kept draft shown in the page are kept with it.
      if (!conflict.restore) keepLocal();
      setSaveStatus(NOT_SAVED, gettext("Choose which version to keep first."));
      return;
    }
    if (offline) { keepLocal(); showOffline(localFailed ? OFFLINE_UNKEPT_TEXT : null); return; }  // next try sends it
    setSaveStatus(SAVING);
    clearTimeout(saveTimer);
    saveTimer = setTimeout(saveDraft, SAVE_DELAY_MS);
  }

  function saveDraft(keepalive) {
    saveTimer = null;
    if (stale || submitting || conflict || !dirty) return inflight || Promise.resolve();
    if (inflight) return inflight;  // the save after it is scheduled when it finishes
    dirty = false;
    var active = inflightActive = takeActiveSeconds();
    var sent = { version: version, spans: wireSpans() };
    setSaveStatus(offline ? KEPT : SAVING);
    inflight = request("PUT", urls.draft, { version: sent.version, spans: sent.spans, active_seconds: active },
      keepalive === true)
      .then(function (result) {
        inflightActive = 0;
        if (result.ok) {
          version = result.json.version;
          unconfirmed = [];
          connectionBack(gettext("The server is back: your draft is saved."));
          if (dirty) { if (hasLocal) keepLocal(); }
          else { dropLocal(); setSaveStatus(SAVED); }
          return null;
        }
        giveBackActiveSeconds(active);
        dirty = true;
        if (result.status === 409) return refused();
        if (Drafts.isOutage(result.status)) {
          unconfirmed = Drafts.withUnconfirmed(unconfirmed, sent);
          connectionLost(OFFLINE_TEXT);
        } else {
          setSaveStatus(NOT_SAVED, errorText(result));
          if (result.status === 429) retryLater();
          else say(interpolate(gettext("Not saved: %s"), [errorText(result)]));
        }
        return null;
      }, function () {
        inflightActive = 0;
        giveBackActiveSeconds(active);
        dirty = true;
        unconfirmed = Drafts.withUnconfirmed(unconfirmed, sent);  // it may have arrived before the break
        connectionLost(OFFLINE_TEXT);
      })
      .then(function () {
        inflight = null;
        var failed = saveEl.getAttribute("data-state") === "error";
        if (dirty && !saveTimer && !stale && !submitting && !conflict && !offline && !failed) {
          saveTimer = setTimeout(saveDraft, SAVE_DELAY_MS);
        }
      });
    return inflight;
  }

  function retryLater() { clearTimeout(saveTimer); saveTimer = setTimeout(saveDraft, RETRY_DELAY_MS); }

  function errorText(result) {
    var json = result.json || {};
    if (json.detail) return String(json.detail);
    var keys = Object.keys(json);
    if (keys.length) return keys.map(function (key) { return key + ": " + [].concat(json[key]).join(" "); }).join("; ");
    return interpolate(gettext("the server answered %s"), [result.status]);
  }

  /* ---------------------------------------------------------------- the server away, and back */

  function connectionLost(message) {
    if (message === OFFLINE_TEXT) {
      keepLocal();
      if (localFailed) message = OFFLINE_UNKEPT_TEXT;
      setSaveStatus(localFailed ? NOT_SAVED : KEPT, message);
    }
    offline = true;
    showOffline(message);
    clearTimeout(saveTimer);
    saveTimer = null;
    clearTimeout(retryTimer);
    var delay = Drafts.retryDelayMs(attempt++, Math.random());
    retryAt = Date.now() + delay;
    retryTimer = setTimeout(retryNow, delay);
    showCountdown();
  }

  function connectionBack(message) {
    if (!offline) return;
    offline = false;
    attempt = 0;
    clearTimeout(retryTimer);
    retryTimer = null;
    clearInterval(countdownTimer);
    countdownTimer = null;
    offlineEl.hidden = true;
    root.classList.remove("wb-is-offline");
    if (message) say(message);
  }

  // Try again now (the back-off timer, "Try now", the browser or the websocket saying the network is back).
  function retryNow() {
    if (!offline) return;
    clearTimeout(retryTimer);
    retryTimer = null;
    if (nextPending) { goNext(); return; }
    if (inflight || submitting) return;
    dirty = true;
    saveDraft();
  }

  function showOffline(message) {
    if (message) offlineTextEl.textContent = message;
    offlineEl.hidden = false;
    root.classList.add("wb-is-offline");
  }

  function showCountdown() {
    function tick() {
      var seconds = Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
      offlineWhenEl.textContent = retryTimer === null ? gettext("Trying again…") :
        interpolate(gettext("Next try in %s s."), [formatNumber(seconds)]);
    }
    tick();
    clearInterval(countdownTimer);
    countdownTimer = setInterval(tick, 1000);
  }

  /* A write refused with 409: the annotation moved on since `version`. Without a draft kept here the page is
   * simply stale. With one (the server was away), the newer version may be this browser's own write whose
   * answer was lost: the server's current annotation decides (drafts.js), and a real conflict is shown. */
  function refused() {
    if (!hasLocal && !unconfirmed.length) { becomeStale(); return null; }
    return request("GET", urls.current).then(function (result) {
      if (!result.ok) {
        if (Drafts.isOutage(result.status)) connectionLost(OFFLINE_TEXT); else becomeStale();
        return;
      }
      var annotation = result.json.annotation;
      var server = { id: annotation.id, version: annotation.version, state: annotation.state, spans: annotation.spans };
      var local = Drafts.draftRecord({
        annotation: data.annotation.id, version: version, spans: wireSpans(), activeSeconds: activeSeconds,
        unconfirmed: unconfirmed, savedAt: Date.now(),
      });
      var action = Drafts.recoveryAction(local, server);
      connectionBack();
      unconfirmed = [];
      if (server.state === "submitted" && action === "discard") {
        // Our own submission got through before the connection broke: move on as after a submission.
        dropLocal();
        finishSubmission(server.version);
      } else if (action === "discard" || action === "rebase" || action === "save") {
        version = server.version;
        dirty = action !== "discard" || activeSeconds > 0;
        if (dirty) { keepLocal(); saveDraft(); } else { dropLocal(); setSaveStatus(SAVED); }
      } else {
        keepLocal();
        showConflict(local, server, false);
      }
    }, function () { connectionLost(OFFLINE_TEXT); });
  }

  /* ---------------------------------------------------------------- a kept draft against the server's version */

  function showConflict(local, server, restore) {
    conflict = { local: local, server: server, restore: restore };
    clearTimeout(saveTimer);
    saveTimer = null;
    setSaveStatus(NOT_SAVED, gettext("Choose which version to keep."));
    conflictEl.querySelector("p").textContent = Drafts.conflictText(local, server);
    conflictEl.querySelector('[data-action="use-local"]').hidden = server.state === "submitted";
    conflictEl.hidden = false;
    root.classList.add("wb-is-conflict");
  }

  function hideConflict() {
    conflict = null;
    conflictEl.hidden = true;
    root.classList.remove("wb-is-conflict");
    docEl.focus({ preventScroll: true });
  }

  // Put the kept draft's spans on the page (undo goes back to the server's) and count its active time.
  function restoreLocal(local) {
    undoStack.push({ spans: spans, focus: focusId });
    redoStack = [];
    applyState(local.spans.map(makeSpan).sort(Spans.compareSpans), null);
    activeSeconds += local.activeSeconds;
  }

  // "Save the draft from this browser": it replaces the server's newer version, by a person's choice.
  function useLocal() {
    if (!conflict || conflict.server.state === "submitted") return;
    var chosen = conflict;
    hideConflict();
    if (chosen.restore) restoreLocal(chosen.local);
    version = chosen.server.version;
    dirty = true;
    keepLocal();
    say(interpolate(gettext("Saving the draft from this browser over version %s."), [chosen.server.version]));
    saveDraft();
  }

  // "Keep the version on the server": drop the kept draft and show the server's version.
  function discardLocal() {
    if (!conflict) return;
    var chosen = conflict;
    hideConflict();
    dropLocal();
    if (!chosen.restore) { window.location.assign(urls.reload); return; }  // the page shows our edits
    say(gettext("The draft kept in this browser was discarded."));
    if (dirty) scheduleSave(); else setSaveStatus(submitted ? SUBMITTED : SAVED);
  }

  // On opening the record: a draft kept here that never reached the server is saved, dropped or shown.
  function recoverKeptDraft() {
    var local = readLocal();
    var server = { id: data.annotation.id, version: version, state: data.annotation.state, spans: data.annotation.spans || [] };
    var action = Drafts.recoveryAction(local, server);
    if (action === "none") return;
    if (action === "discard") { dropLocal(); return; }
    hasLocal = true;
    if (action === "conflict") { showConflict(local, server, true); return; }
    restoreLocal(local);  // "save" or "rebase": the kept draft is newer than the server's version
    dirty = true;
    say(gettext("Restored the draft this browser kept while the server was away; saving it."));
    saveDraft();
  }

  /* ---------------------------------------------------------------- submitting, and the next record */

  function submit() {
    if (submitting) return;
    if (submitted) { goNext(); return; }
    if (stale) { showStale(); return; }
    if (conflict) { conflictEl.querySelector("button:not([hidden])").focus(); return; }
    submitting = true;
    submitButton.disabled = true;
    clearTimeout(saveTimer);
    saveTimer = null;
    setSaveStatus(SUBMITTING);
    (inflight || Promise.resolve()).then(function () {
      if (stale || conflict) { submitting = false; submitButton.disabled = false; return null; }
      var active = takeActiveSeconds();
      var sent = { version: version, spans: wireSpans(), submit: true };
      var body = { version: sent.version, spans: sent.spans, active_seconds: active };
      return request("POST", urls.submit, body).then(function (result) {
        if (result.ok) {
          dirty = false;
          unconfirmed = [];
          dropLocal();
          finishSubmission(result.json.version);
          return null;
        }
        giveBackActiveSeconds(active);
        submitting = false;
        submitButton.disabled = false;
        if (result.status === 409) { dirty = true; return refused(); }
        if (Drafts.isOutage(result.status)) { submitLost(sent); return null; }
        setSaveStatus(NOT_SAVED, errorText(result));
        say(interpolate(gettext("Not submitted: %s"), [errorText(result)]));
        return null;
      }, function () {
        giveBackActiveSeconds(active);
        submitting = false;
        submitButton.disabled = false;
        submitLost(sent);
      });
    });
  }

  // A submission that found no server (or a 5xx): it may have got through, so it is remembered; the draft is
  // kept and saved when the server is back, and the annotator submits again then.
  function submitLost(sent) {
    dirty = true;
    unconfirmed = Drafts.withUnconfirmed(unconfirmed, sent);
    connectionLost(OFFLINE_TEXT);
    say(gettext("Not submitted: the server could not be reached. Your draft is kept; submit again when it is back."));
  }

  function finishSubmission(newVersion) {
    version = newVersion;
    submitted = true;
    connectionBack();
    setSaveStatus(SUBMITTED);
    root.setAttribute("data-submitted", "true");
    goNext();
  }

  // The next record is handed out over the API first, so that a server away shows here, not as an error page.
  function goNext() {
    nextPending = true;
    request("POST", urls.next_api).then(function (result) {
      if (result.ok && result.json && result.json.urls) window.location.assign(result.json.urls.reload);
      else if (Drafts.isOutage(result.status)) connectionLost(NEXT_OFFLINE_TEXT);
      else window.location.assign(urls.next);  // 204, the pool is empty (or a refusal): the page says which
    }, function () { connectionLost(NEXT_OFFLINE_TEXT); });
  }

  function becomeStale() {
    stale = true;
    dirty = false;
    clearTimeout(saveTimer);
    setSaveStatus(NOT_SAVED, STALE_TEXT);
    root.classList.add("wb-is-stale");
    showStale();
  }

  function showStale() {
    staleEl.hidden = false;
    var button = staleEl.querySelector("button");
    if (button) button.focus();
  }

  // Leaving the page (or hiding it) with edits not yet saved: keep them here, then send them (a request that
  // outlives the page when it is left; its body is limited to 64 KB, hence the copy kept here first).
  function flushOnLeave(leaving) {
    if (!dirty || stale || submitting || conflict) return;
    keepLocal();
    if (offline) return;
    clearTimeout(saveTimer);
    saveDraft(leaving);
  }

  /* ---------------------------------------------------------------- active time */

  var activeSeconds = 0, lastActivity = performance.now();
  function noteActivity() {
    var now = performance.now();
    if (lastActivity !== null && now - lastActivity <= IDLE_AFTER_MS && document.visibilityState === "visible") {
      activeSeconds += (now - lastActivity) / 1000;
    }
    lastActivity = now;
  }
  function takeActiveSeconds() {
    noteActivity();
    var delta = Math.round(activeSeconds * 10) / 10;
    activeSeconds -= delta;
    return delta;
  }
  function giveBackActiveSeconds(delta) { activeSeconds += delta; }

  /* ---------------------------------------------------------------- messages, help, label filter */

  var messageTimer = null;
  function say(message) {
    messageEl.textContent = message;
    clearTimeout(messageTimer);
    messageTimer = setTimeout(function () { messageEl.textContent = ""; }, 6000);
  }

  function toast(message, kind) {
    var item = document.createElement("div");
    item.className = "wb-toast" + (kind ? " wb-toast-" + kind.replace(/[^a-z_]/g, "") : "");
    item.setAttribute("role", "status");
    item.textContent = message;
    var close = document.createElement("button");
    close.type = "button";
    close.className = "link";
    close.setAttribute("aria-label", gettext("Dismiss"));
    close.textContent = "×";
    close.addEventListener("click", function () { item.remove(); });
    item.appendChild(close);
    toastsEl.appendChild(item);
    setTimeout(function () { item.remove(); }, 10000);
  }

  function toggleHelp(show) {
    helpEl.hidden = show === undefined ? !helpEl.hidden : !show;
    if (helpEl.hidden) docEl.focus({ preventScroll: true });
  }

  var filterTarget = null, filterChoice = 0, filterMatches = [];
  function openFilter() {
    filterTarget = focusId;
    filterEl.hidden = false;
    filterInput.value = "";
    renderFilter();
    filterInput.focus();
  }
  function closeFilter() {
    filterEl.hidden = true;
    docEl.focus({ preventScroll: true });
    showSelection(false);
  }
  function renderFilter() {
    var query = filterInput.value.trim().toLowerCase();
    filterMatches = labels.filter(function (label) { return label.toLowerCase().indexOf(query) !== -1; });
    filterChoice = Math.min(filterChoice, Math.max(0, filterMatches.length - 1));
    filterList.innerHTML = filterMatches.map(function (label, i) {
      var key = keyOfLabel.has(label) ? "<kbd>" + escapeHtml(keyOfLabel.get(label)) + "</kbd>" : "";
      var selected = i === filterChoice ? ' aria-selected="true"' : "";
      return '<li role="option" data-label="' + escapeHtml(label) + '"' + selected +
        '><span class="wb-swatch ' + labelClass(label) + '"></span>' + escapeHtml(label) + key + "</li>";
    }).join("") || '<li class="muted">' + escapeHtml(gettext("No label matches.")) + "</li>";
  }
  function chooseFromFilter(label) {
    closeFilter();
    if (filterTarget !== null && spanById(filterTarget)) setFocus(filterTarget, false);
    applyLabel(label);
  }
  filterInput.addEventListener("input", function () { filterChoice = 0; renderFilter(); });
  filterInput.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { event.preventDefault(); closeFilter(); }
    else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      var n = filterMatches.length;
      if (n) filterChoice = (filterChoice + (event.key === "ArrowDown" ? 1 : -1) + n) % n;
      renderFilter();
    } else if (event.key === "Enter") {
      event.preventDefault();
      if (filterMatches.length) chooseFromFilter(filterMatches[filterChoice]);
    }
    event.stopPropagation();
  });
  filterList.addEventListener("mousedown", function (event) {
    var item = event.target.closest("li[data-label]");
    if (item) { event.preventDefault(); chooseFromFilter(item.getAttribute("data-label")); }
  });
  filterEl.addEventListener("click", function (event) { if (event.target === filterEl) closeFilter(); });
  helpEl.addEventListener("click", function (event) {
    if (event.target === helpEl || event.target.closest("[data-close]")) toggleHelp(false);
  });

  /* ---------------------------------------------------------------- keyboard */

  function isTyping(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }

  document.addEventListener("keydown", function (event) {
    noteActivity();
    var target = event.target;
    if (event.isComposing || isTyping(target)) return;
    var key = event.key;
    if (!helpEl.hidden) {
      if (key === "?" || key === "Escape") { event.preventDefault(); toggleHelp(false); }
      return;
    }
    var ctrl = event.ctrlKey || event.metaKey;
    if (ctrl && key === "Enter") { event.preventDefault(); submit(); return; }
    if (ctrl && !event.altKey) {
      var lower = key.toLowerCase();
      if (lower === "z" && !event.shiftKey) { event.preventDefault(); undo(); }
      else if ((lower === "z" && event.shiftKey) || lower === "y") { event.preventDefault(); redo(); }
      return;
    }
    if (event.altKey) return;
    var onControl = target && target !== docEl && /^(BUTTON|A|SUMMARY)$/.test(target.tagName);
    if (onControl && (key === "Enter" || key === " " || key === "Tab")) return;

    var handled = true;
    if (labelByKey.has(key)) {
      applyLabel(labelByKey.get(key));
    } else if (/^[0-9]$/.test(key)) {
      say(interpolate(gettext("No label on key %s (l opens the label filter)."), [key]));
    } else {
      switch (key) {
        case "ArrowLeft": moveCaret(-1, event.shiftKey); break;
        case "ArrowRight": moveCaret(1, event.shiftKey); break;
        case "Tab": focusNextSpan(event.shiftKey ? -1 : 1); break;
        case "Enter": acceptFocused(); break;
        case "Delete": case "Backspace": case "x": deleteFocused(); break;
        case "[": resizeFocused("start", -1); break;
        case "]": resizeFocused("start", 1); break;
        case "{": resizeFocused("end", -1); break;
        case "}": resizeFocused("end", 1); break;
        case "A": acceptAll(); break;
        case "m": labelMentions(); break;
        case "c": toggleCharMode(); break;
        case "l": openFilter(); break;
        case "p": jumpToPossibleMissed(); break;
        case "?": toggleHelp(true); break;
        case "Escape":
          if (!staleEl.hidden && stale) { handled = false; break; }
          setFocus(null, false); showSelection(false); break;
        default: handled = false;
      }
    }
    if (handled) event.preventDefault();
  });

  /* ---------------------------------------------------------------- mouse */

  // A drag that starts in the text may end anywhere on the page; it is snapped to units when it ends.
  var dragging = false;
  docEl.addEventListener("mousedown", function (event) { if (event.button === 0) dragging = true; });
  document.addEventListener("mouseup", function (event) {
    noteActivity();
    if (event.button !== 0 || !dragging) return;
    dragging = false;
    var selection = window.getSelection();
    var start = offsetOf(selection.anchorNode, selection.anchorOffset);
    var end = offsetOf(selection.focusNode, selection.focusOffset);
    if (start === null || end === null) return;
    if (start === end) {
      var mark = event.target.closest && event.target.closest("mark[data-s]");
      if (mark) { setFocus(+mark.getAttribute("data-s"), false); revealFocused(); return; }
      setFocus(null, false);
      selectChars(start, Math.min(start + 1, text.length), false);
    } else {
      setFocus(null, false);
      selectChars(Math.min(start, end), Math.max(start, end), end < start);
    }
    showSelection(false);
  });

  root.addEventListener("mousedown", function (event) {
    // Palette clicks must not take the selection away from the text.
    var button = event.target.closest("[data-label-key]");
    if (button) { event.preventDefault(); applyLabel(button.getAttribute("data-label-key")); }
  });
  root.addEventListener("click", function (event) {
    var action = event.target.closest("[data-action]");
    if (!action) return;
    var name = action.getAttribute("data-action");
    if (name === "submit") submit();
    else if (name === "reload") window.location.assign(urls.reload);
    else if (name === "retry") retryNow();
    else if (name === "use-local") useLocal();
    else if (name === "discard-local") discardLocal();
    else if (name === "help") toggleHelp(true);
    else if (name === "filter") openFilter();
    else if (name === "undo") undo();
    else if (name === "redo") redo();
    else if (name === "accept-all") acceptAll();
  });
  document.addEventListener("mousemove", noteActivity, { passive: true });
  document.addEventListener("wheel", noteActivity, { passive: true });
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") { noteActivity(); lastActivity = null; flushOnLeave(false); }
    else lastActivity = performance.now();
  });
  window.addEventListener("pagehide", function () { flushOnLeave(true); });
  window.addEventListener("online", retryNow);

  /* ---------------------------------------------------------------- live notices */

  // Over the project's websocket (socket.js): tell the server which record is open, on every (re)connection,
  // so its leads see who annotates what; show its notices (a new model, a new ranking) as toasts.
  function followNotices() {
    if (!data.ws || !window.deidloopFollow) return;
    window.deidloopFollow(data.ws, {
      open: function (send) {
        send({ type: "presence", document_id: data.document.id });
        retryNow();  // a websocket that connects again is a server that is back: do not wait for the next try
      },
      message: function (message) {
        if (message && message.type === "notice" && message.text) toast(String(message.text), message.kind);
      },
    });
  }

  /* ---------------------------------------------------------------- start */

  renderAll();
  updateCounts();
  describeFocus();
  modeEl.textContent = charMode ? gettext("Characters") : gettext("Tokens");
  if (text.length) {
    setSelectionUnits(0, 0);
    docEl.focus({ preventScroll: true });
    showSelection(false);
  }
  setSaveStatus(submitted ? SUBMITTED : SAVED);
  if (submitted) {
    root.classList.add("wb-is-submitted");
    submitButton.textContent = gettext("Next record");
    say(SUBMITTED_TEXT);
  }
  staleEl.querySelector("p").textContent = STALE_TEXT;
  offlineTextEl.textContent = OFFLINE_TEXT;
  recoverKeptDraft();
  root.setAttribute("data-ready", "true");
  // Timings and state for the browser tests and for anyone profiling the page from the console.
  var api = window.deidloopWorkbench = {
    scriptMs: performance.now() - t0,
    readyAt: performance.now(),
    paintedAt: null,
    state: function () {
      return {
        version: version, spans: wireSpans(), focus: focusId, dirty: dirty, stale: stale, charMode: charMode,
        selection: selectionRange(), lastEditMs: lastEditMs, lastEditChunks: lastEditChunks, offline: offline, conflict: conflict !== null,
        keptLocally: hasLocal,
      };
    },
    saveNow: function () { clearTimeout(saveTimer); return saveDraft(); },
  };
  requestAnimationFrame(function () { setTimeout(function () { api.paintedAt = performance.now(); }, 0); });
  followNotices();
})();
