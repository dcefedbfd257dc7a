// The project page's "Annotating now" panel, kept current over the project's websocket.
(function () {
  "use strict";
  var panel = document.getElementById("presence");
  if (!panel) return;
  var list = panel.querySelector("[data-presence-list]");
  var empty = panel.querySelector("[data-presence-empty]");
  var notice = panel.querySelector("[data-presence-notice]");
  var status = panel.querySelector("[data-presence-status]");
  var delay = 1000;

  function render(annotators) {
    list.replaceChildren();
    annotators.forEach(function (person) {
      var item = document.createElement("li");
      var name = document.createElement("b");
      name.textContent = person.username;
      var since = document.createElement("span");
      since.className = "muted";
      var time = document.createElement("time");
      time.dateTime = person.since;
      time.textContent = person.since.slice(11, 16);
      since.append("since ", time, " UTC");
      item.append(name, " — " + person.external_id + " ", since);
      list.append(item);
    });
    empty.hidden = annotators.length > 0;
  }

  function connect() {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + location.host + panel.dataset.socket);
    socket.onopen = function () { delay = 1000; status.hidden = true; };
    socket.onmessage = function (event) {
      var message = JSON.parse(event.data);
      if (message.type === "presence") render(message.annotators);
      else if (message.type === "notice") { notice.textContent = message.text; notice.hidden = false; }
    };
    socket.onclose = function (event) {
      if (event.code === 4403) return;  // not (or no longer) allowed: do not knock again
      status.hidden = false;
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  connect();
})();
