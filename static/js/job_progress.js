// A job's page (an import, an export): follow the worker's progress over the project's websocket (notices
// of the kind in data-kind for the job in data-job), and poll the status once a second while the socket is
// down. The status partial is a section with data-status, a <progress>, [data-percent] and [data-done].
(function () {
  "use strict";
  var root = document.getElementById("job-follow");
  if (!root) return;
  var jobId = root.dataset.job;
  var live = false;
  var timer = null;

  function finished() {
    var box = root.querySelector("[data-status]");
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
    var box = root.querySelector("[data-status]");
    var bar = box && box.querySelector("progress");
    if (!bar) return;
    var total = Math.max(1, Number(message.total) || 0);
    var done = Math.min(total, Number(message.done) || 0);
    bar.max = total;
    bar.value = done;
    box.dataset.status = "running";
    var percent = box.querySelector("[data-percent]");
    if (percent) percent.textContent = Math.round(100 * done / total) + " %";
    var count = box.querySelector("[data-done]");
    if (count) count.textContent = done + " / " + total;
  }

  startPolling();
  if (!window.deidloopFollow) return;
  window.deidloopFollow(root.dataset.socket, {
    open: function () {
      live = true;
      // What happened while the socket was down; data-live says the page now follows the socket.
      refresh().then(function () { if (live) root.dataset.live = "true"; });
    },
    lost: function () {
      live = false;
      root.dataset.live = "false";
      startPolling();
    },
    message: function (message) {
      if (message.type !== "notice" || message.kind !== root.dataset.kind || String(message.job_id) !== jobId) return;
      if (message.status === "running") show(message);
      else refresh();  // done or failed: the report or the error
    },
  });
})();
