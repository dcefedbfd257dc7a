// The project's websocket, kept open: reconnects with back-off (1 s doubling to 30 s) unless the server
// refused the user (close code 4403). `deidloopFollow(path, handlers)` calls handlers.message(message) for
// every JSON message, handlers.open(send) on every (re)connection — send(object) writes one JSON message, for
// what the server must hear again on a new connection — and handlers.lost() when the connection goes.
(function () {
  "use strict";
  window.deidloopFollow = function (path, handlers) {
    if (!window.WebSocket) return;
    var delay = 1000;
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";

    function connect() {
      var socket;
      try { socket = new WebSocket(scheme + location.host + path); } catch (error) { return; }
      socket.addEventListener("open", function () {
        delay = 1000;
        if (handlers.open) handlers.open(function send(message) { socket.send(JSON.stringify(message)); });
      });
      socket.addEventListener("message", function (event) {
        var message;
        try { message = JSON.parse(event.data); } catch (error) { return; }  // not ours: ignore it
        handlers.message(message);
      });
      socket.addEventListener("close", function (event) {
        if (event.code === 4403) return;  // not (or no longer) allowed: do not knock again
        if (handlers.lost) handlers.lost();
        setTimeout(connect, delay);
        delay = Math.min(delay * 2, 30000);
      });
    }
    connect();
  };
})();
