// The adjudication page, by keyboard: move between conflicts, take one annotator's version (or none) for each,
// save with Ctrl+Enter and go on to the next record. The page embeds its record (json_script
// "adjudication-data"); the decision goes to the REST API as one choice per conflict.
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  var page = document.getElementById("adjudicate-page");
  if (!page) return;
  var data = JSON.parse(document.getElementById("adjudication-data").textContent);
  var cards = Array.prototype.slice.call(document.querySelectorAll("#conflict-list .conflict-card"));
  var statusEl = document.getElementById("adjudication-status");
  var choices = data.conflicts.map(function () { return undefined; });  // undefined: not decided yet
  var current = 0, saving = false;
  var textEl = document.getElementById("adjudication-text");
  var added = [];  // spans nobody marked, added here: {start, end, label}
  var rejected = {};  // index in data.agreed → true: a span everybody marked, rejected here
  var pending = null;  // the selection waiting for its label
  var addForm = document.getElementById("add-form"), addLabel = document.getElementById("add-label");

  function csrfToken() {
    var headers = document.body.getAttribute("hx-headers");
    if (headers) {
      try { return JSON.parse(headers)["X-CSRFToken"] || ""; } catch (error) { /* fall back to the cookie */ }
    }
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function textMark(index) { return document.getElementById("conflict-text-" + index); }

  function show() {
    cards.forEach(function (card, index) {
      var choice = choices[index];
      card.classList.toggle("current", index === current);
      card.classList.toggle("decided", choice !== undefined);
      card.querySelector('[data-role="choice"]').textContent =
        choice === undefined ? gettext("undecided") : choice === null ? gettext("no PHI here") :
          interpolate(gettext("taking %s's"), [choice]);
      card.querySelectorAll("li[data-annotator]").forEach(function (row) {
        var name = row.getAttribute("data-annotator");
        row.classList.toggle("chosen", choice !== undefined && (choice === null ? name === "" : name === choice));
      });
      var mark = textMark(index);
      if (mark) {
        mark.classList.toggle("current", index === current);
        mark.classList.toggle("decided", choice !== undefined);
      }
    });
    var left = choices.filter(function (c) { return c === undefined; }).length;
    statusEl.textContent = left ? interpolate(ngettext("%(left)s of %(total)s conflict undecided", "%(left)s of %(total)s conflicts undecided",
      choices.length), { left: left, total: choices.length }, true) : gettext("Every conflict decided");
    var mark = textMark(current);
    if (mark && mark.scrollIntoView) mark.scrollIntoView({block: "nearest"});
  }

  function move(step) {
    if (!choices.length) return;
    current = Math.min(Math.max(current + step, 0), choices.length - 1);
    show();
  }

  function choose(name) {
    if (!choices.length) return;
    choices[current] = name;
    var next = choices.indexOf(undefined, current + 1);
    if (next < 0) next = choices.indexOf(undefined);
    if (next >= 0) current = next;
    show();
  }

  // Character offsets of the selection in the record's text (the marks hold the text as it is).
  function selectedOffsets() {
    var selection = window.getSelection();
    if (!selection || selection.isCollapsed || !selection.rangeCount) return null;
    var range = selection.getRangeAt(0);
    if (!textEl.contains(range.startContainer) || !textEl.contains(range.endContainer)) return null;
    var before = document.createRange();
    before.setStart(textEl, 0);
    before.setEnd(range.startContainer, range.startOffset);
    var start = before.toString().length, end = start + range.toString().length;
    var text = data.document.text;
    var trimmed = {start: start, end: end};
    while (trimmed.start < end && /\s/.test(text[trimmed.start])) trimmed.start++;  // edges may take in a space
    while (trimmed.end > trimmed.start && /\s/.test(text[trimmed.end - 1])) trimmed.end--;
    if (trimmed.end <= trimmed.start) return null;
    // Shown in the text when the selection lies in one piece of plain text (else only in the list).
    var node = range.startContainer;
    if (node === range.endContainer && node.nodeType === Node.TEXT_NODE && node.parentNode === textEl) {
      trimmed.range = document.createRange();
      trimmed.range.setStart(node, range.startOffset + (trimmed.start - start));
      trimmed.range.setEnd(node, range.endOffset - (end - trimmed.end));
    }
    return trimmed;
  }

  function unmark(mark) {
    if (!mark || !mark.parentNode) return;
    mark.parentNode.replaceChild(document.createTextNode(mark.textContent), mark);
    textEl.normalize();
  }

  function showChanges() {
    var list = document.getElementById("added-list");
    list.textContent = "";
    added.forEach(function (span, index) {
      var item = document.createElement("li");
      item.setAttribute("data-added", index);
      item.textContent = interpolate(gettext("added «%(text)s» %(label)s"), { text: data.document.text.slice(span.start, span.end), label: span.label }, true) + " ";
      var remove = document.createElement("button");
      remove.type = "button";
      remove.className = "secondary small";
      remove.textContent = gettext("Remove");
      remove.addEventListener("click", function () {
        unmark(added[index].mark);
        added.splice(index, 1);
        showChanges();
      });
      item.appendChild(remove);
      list.appendChild(item);
    });
    Object.keys(rejected).forEach(function (index) {
      var span = data.agreed[index], item = document.createElement("li");
      item.setAttribute("data-rejected", index);
      item.textContent = interpolate(gettext("rejected «%(text)s» %(label)s"), { text: data.document.text.slice(span.start, span.end), label: span.label }, true);
      list.appendChild(item);
    });
    textEl.querySelectorAll("mark.agreed").forEach(function (mark) {
      mark.classList.toggle("rejected", !!rejected[mark.getAttribute("data-agreed")]);
    });
    document.getElementById("no-changes").hidden = added.length + Object.keys(rejected).length > 0;
  }

  function startAdding() {
    var offsets = selectedOffsets();
    if (!offsets) {
      statusEl.textContent = gettext("Select the text of the span to add first");
      return;
    }
    pending = offsets;
    document.getElementById("add-text").textContent = data.document.text.slice(offsets.start, offsets.end);
    addForm.hidden = false;
    addLabel.focus();
  }

  function finishAdding(keep) {
    if (keep && pending) {
      var span = {start: pending.start, end: pending.end, label: addLabel.value};
      if (pending.range) {
        span.mark = document.createElement("mark");
        span.mark.className = "phi added";
        span.mark.setAttribute("data-label", span.label);
        span.mark.title = span.label + " · " + gettext("added here");
        pending.range.surroundContents(span.mark);
      }
      added.push(span);
    }
    pending = null;
    // Hiding the form moves the focus off its field only at the next rendering; until then the keys typed next
    // (r, j, 1…) would go to the hidden field instead of the page.
    addLabel.blur();
    addForm.hidden = true;
    showChanges();
  }

  function toggleReject() {
    var offsets = selectedOffsets();
    var hit = offsets && data.agreed.findIndex(function (span) {
      return span.start < offsets.end && offsets.start < span.end;
    });
    if (hit === null || hit < 0) {
      statusEl.textContent = gettext("Select (part of) a span everybody marked to reject or restore it");
      return;
    }
    if (rejected[hit]) delete rejected[hit]; else rejected[hit] = true;
    showChanges();
  }

  // The record's gold as decided on this page: the agreed spans kept, the versions taken, the spans added.
  function goldSpans() {
    var gold = data.agreed.filter(function (span, index) { return !rejected[index]; });
    data.conflicts.forEach(function (conflict, index) {
      if (choices[index]) gold = gold.concat(conflict.versions[choices[index]]);
    });
    return gold.concat(added).map(function (s) { return {start: s.start, end: s.end, label: s.label}; });
  }

  function save() {
    if (saving) return;
    var undecided = choices.indexOf(undefined);
    if (undecided >= 0) {
      current = undecided;
      show();
      statusEl.textContent = interpolate(gettext("Decide every conflict first: %s"), [statusEl.textContent]);
      return;
    }
    saving = true;
    statusEl.textContent = gettext("Saving…");
    fetch(page.getAttribute("data-api-url"), {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken()},
      // Choices alone when nothing was added or rejected here: the server then resolves the conflicts itself.
      body: JSON.stringify(added.length || Object.keys(rejected).length ? {spans: goldSpans()} : {choices: choices}),
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (json) {
        if (!response.ok) throw new Error(json.detail || interpolate(gettext("the server answered %s"), [response.status]));
        window.location.assign(json.next_url);
      });
    }).catch(function (error) {
      saving = false;
      statusEl.textContent = interpolate(gettext("Not saved: %s"), [error.message]);
    });
  }

  addLabel.addEventListener("keydown", function (event) {
    if (event.key === "Enter" || event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      finishAdding(event.key === "Enter");
    }
  });

  document.addEventListener("keydown", function (event) {
    if (event.target === addLabel) return;
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault();
      save();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var key = event.key;
    if (key === "j" || key === "ArrowDown") { event.preventDefault(); move(1); }
    else if (key === "k" || key === "ArrowUp") { event.preventDefault(); move(-1); }
    else if (key === "0" || key === "x") { event.preventDefault(); choose(null); }
    else if (key === "a") { event.preventDefault(); startAdding(); }
    else if (key === "r") { event.preventDefault(); toggleReject(); }
    else if (/^[1-9]$/.test(key) && Number(key) <= data.annotators.length) {
      event.preventDefault();
      choose(data.annotators[Number(key) - 1]);
    }
  });
  cards.forEach(function (card, index) {
    card.addEventListener("click", function () { current = index; show(); });
  });
  document.getElementById("save-adjudication").addEventListener("click", save);
  show();
  showChanges();
});
