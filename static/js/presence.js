// The project page's "Annotating now" panel, kept current over the project's websocket.
(function () {
  "use strict";
  var panel = document.getElementById("presence");
  if (!panel || !window.deidloopFollow) return;
  var list = panel.querySelector("[data-presence-list]");
  var empty = panel.querySelector("[data-presence-empty]");
  var notice = panel.querySelector("[data-presence-notice]");
  var status = panel.querySelector("[data-presence-status]");

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
      since.append(gettext("since") + " ", time, " UTC");
      item.append(name, " — " + person.external_id + " ", since);
      list.append(item);
    });
    empty.hidden = annotators.length > 0;
  }

  window.deidloopFollow(panel.dataset.socket, {
    open: function () { status.hidden = true; },
    lost: function () { status.hidden = false; },
    message: function (message) {
      if (message.type === "presence") render(message.annotators);
      else if (message.type === "notice") { notice.textContent = message.text; notice.hidden = false; }
    },
  });
})();
