// The loop page: follow a retrain over the project's websocket (stage and progress bar), and reload the
// page's state once a new model and ranking are published.
(function () {
  "use strict";
  var root = document.getElementById("loop-state");
  if (!root) return;
  var delay = 1000;

  function refresh() {
    fetch(root.dataset.refresh, { headers: { "HX-Request": "true" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) { root.innerHTML = html; })
      .catch(function () { /* the next notice tries again */ });
  }

  function show(message) {
    var box = root.querySelector("#retrain-progress");
    var stage = root.querySelector("[data-progress-stage]");
    var text = root.querySelector("[data-progress-text]");
    var bar = box && box.querySelector("progress");
    if (!box) return;
    box.hidden = false;
    stage.textContent = message.stage.charAt(0).toUpperCase() + message.stage.slice(1);
    text.textContent = message.text;
    if (message.stage === "queued") bar.value = 0;
    else if (message.stage === "training") bar.value = 5;
    else if (message.stage === "scoring" && message.total) bar.value = 10 + Math.round(90 * message.done / message.total);
    else if (message.stage === "failed") bar.value = 0;
  }

  function connect() {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + location.host + root.dataset.socket);
    socket.onopen = function () { delay = 1000; };
    socket.onmessage = function (event) {
      var message = JSON.parse(event.data);
      if (message.type !== "notice") return;
      if (message.kind === "retrain_progress") {
        show(message);
        if (message.stage === "failed") refresh();
      } else if (message.kind === "ranking_ready") {
        refresh();
      }
    };
    socket.onclose = function (event) {
      if (event.code === 4403) return;
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  connect();
})();
