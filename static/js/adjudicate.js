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
        choice === undefined ? "undecided" : choice === null ? "no PHI here" : "taking " + choice + "'s";
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
    statusEl.textContent = left ? left + " of " + choices.length + " conflicts undecided" : "Every conflict decided";
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

  function save() {
    if (saving) return;
    var undecided = choices.indexOf(undefined);
    if (undecided >= 0) {
      current = undecided;
      show();
      statusEl.textContent = "Decide every conflict first: " + statusEl.textContent;
      return;
    }
    saving = true;
    statusEl.textContent = "Saving…";
    fetch(page.getAttribute("data-api-url"), {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken()},
      body: JSON.stringify({choices: choices}),
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (json) {
        if (!response.ok) throw new Error(json.detail || ("the server answered " + response.status));
        window.location.assign(json.next_url);
      });
    }).catch(function (error) {
      saving = false;
      statusEl.textContent = "Not saved: " + error.message;
    });
  }

  document.addEventListener("keydown", function (event) {
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
});
