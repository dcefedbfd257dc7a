// The loop page: follow a retrain over the project's websocket (stage and progress bar), and reload the
// page's state once a new model and ranking are published.
(function () {
  "use strict";
  var root = document.getElementById("loop-state");
  if (!root || !window.deidloopFollow) return;

  function refresh() {
    fetch(root.dataset.refresh, { headers: { "HX-Request": "true" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) { root.innerHTML = html; })
      .catch(function () { /* the next notice tries again */ });
  }

  // A retrain's stages as the page's language names them (the server sends their codes).
  var STAGES = {queued: gettext("Queued"), training: gettext("Training"), scoring: gettext("Scoring"),
    evaluated: gettext("Evaluated"), done: gettext("Done"), failed: gettext("Failed")};

  // The server's sentence is English; the ones built from the message's figures are in the page's language.
  function progressText(message) {
    if (message.stage === "queued") return gettext("A retrain is queued.");
    if (message.stage === "failed") return gettext("The retrain failed; the current model and ranking stay in place.");
    if (message.stage === "scoring" && message.total) {
      return interpolate(gettext("Scored %(done)s of %(total)s pool records…"), {done: message.done, total: message.total}, true);
    }
    if (message.stage === "evaluated" && typeof message.f1 === "number") {
      return interpolate(gettext("Entity F1 of the new model on %(documents)s evaluation records: %(f1)s"),
        {documents: message.documents, f1: message.f1.toFixed(3)}, true);
    }
    return message.text;
  }

  function show(message) {
    var box = root.querySelector("#retrain-progress");
    if (!box) return;
    var bar = box.querySelector("progress");
    box.hidden = false;
    root.querySelector("[data-progress-stage]").textContent =
      STAGES[message.stage] || message.stage.charAt(0).toUpperCase() + message.stage.slice(1);
    root.querySelector("[data-progress-text]").textContent = progressText(message);
    if (message.stage === "queued" || message.stage === "failed") bar.value = 0;
    else if (message.stage === "training") bar.value = 5;
    else if (message.stage === "scoring" && message.total) bar.value = 10 + Math.round(90 * message.done / message.total);
  }

  window.deidloopFollow(root.dataset.socket, {message: function (message) {
    if (message.type !== "notice") return;
    if (message.kind === "retrain_progress") {
      show(message);
      if (message.stage === "failed") refresh();
    } else if (message.kind === "ranking_ready") {
      refresh();
    }
  }});
})();
