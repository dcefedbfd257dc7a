// The import job page: follow the worker's progress over the project's websocket (notices of kind
// "import_progress" for this job), and poll the status once a second while the socket is down.
(function () {
  "use strict";
  var root = document.getElementById("import-follow");
  if (!root) return;
  var jobId = Number(root.dataset.job);
  var live = false;
  var timer = null;

  function finished() {
    var box = root.querySelector("#import-job");
    return box && box.dataset.status !== "queued" && box.dataset.status !== "running";
  }

  function refresh() {
    return fetch(root.dataset.refresh, { headers: { "HX-Request": "true" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) { root.innerHTML = html; })
      .catch(function () { /* the next poll or notice tries again */ });
  }

  function poll() {
    timer = null;
    if (live || finished()) return;
    refresh().then(function () { if (!live && !finished()) timer = setTimeout(poll, 1000); });
  }

  function startPolling() {
    if (timer === null && !finished()) timer = setTimeout(poll, 1000);
  }

  function show(message) {
    var box = root.querySelector("#import-job");
    var bar = box && box.querySelector("progress");
    if (!bar) return;
    var total = Math.max(1, Number(message.total) || 0);
    var done = Math.min(total, Number(message.done) || 0);
    bar.max = total;
    bar.value = done;
    box.dataset.status = "running";
    var percent = box.querySelector("[data-percent]");
    if (percent) percent.textContent = Math.round(100 * done / total) + " %";
    var files = box.querySelector("[data-files]");
    if (files) files.textContent = done + " of " + total + " files read";
  }

  startPolling();
  if (!window.deidloopFollow) return;
  window.deidloopFollow(root.dataset.socket, {
    open: function () {
      live = true;
      refresh();  // what happened while the socket was down
    },
    lost: function () {
      live = false;
      startPolling();
    },
    message: function (message) {
      if (message.type !== "notice" || message.kind !== "import_progress" || message.job_id !== jobId) return;
      if (message.status === "running") show(message);
      else refresh();  // done or failed: the report or the error
    },
  });
})();
