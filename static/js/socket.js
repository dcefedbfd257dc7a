// The project's websocket, kept open: reconnects with back-off (1 s doubling to 30 s) unless the server
// refused the user (close code 4403). `deidloopFollow(path, handlers)` calls handlers.message(message) for
// every JSON message, and handlers.open() / handlers.lost() when the connection comes and goes.
(function () {
  "use strict";
  window.deidloopFollow = function (path, handlers) {
    if (!window.WebSocket) return;
    var delay = 1000;
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";

    function connect() {
      var socket;
      try { socket = new WebSocket(scheme + location.host + path); } catch (error) { return; }
      socket.onopen = function () {
        delay = 1000;
        if (handlers.open) handlers.open();
      };
      socket.onmessage = function (event) { handlers.message(JSON.parse(event.data)); };
      socket.onclose = function (event) {
        if (event.code === 4403) return;  // not (or no longer) allowed: do not knock again
        if (handlers.lost) handlers.lost();
        setTimeout(connect, delay);
        delay = Math.min(delay * 2, 30000);
      };
    }
    connect();
  };
})();
