"""ASGI entry point: HTTP through Django, websockets through Channels."""
import asyncio
import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import django
from django.core import signals
from django.core.exceptions import RequestAborted
from django.db import connections
from django.http import FileResponse
from django.urls import set_script_prefix

from config._compat.django_asgi import ASGIHandler, load_sync_middleware, script_prefix

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)

# Threads per web process that run Django's (sync) request handling; processes: DEIDLOOP_WEB_WORKERS.
WEB_THREADS = max(1, int(os.environ.get("DEIDLOOP_WEB_THREADS", "4")))


class ThreadPoolASGIHandler(ASGIHandler):
    """Django's ASGI handler, serving each request in one go on a small pool of long-lived threads, as a
    threaded WSGI server does: the request_started signal, the middleware chain and the view, and (for a
    response that is not streamed) the response's close with its request_finished signal, in one thread.

    Every view here is sync. Django's default ASGI mode hops between the event loop and a thread several times
    a request: for each sync middleware method (WhiteNoise), for the request_started and request_finished
    receivers (the database's, in one thread shared by all requests), and it waits on a second task for the
    client's disconnect, which cannot stop a sync view anyway (about 1 ms of CPU a request here: the login
    page took 4.4 ms through the server, 3.4 ms in one hop). It also runs each request in a fresh
    thread-sensitive context, whose database connection is new each time: one PostgreSQL connection opened
    per request (about 5 ms here), however long CONN_MAX_AGE is. In a thread of its own that it keeps, a
    request reuses that thread's connection, and CONN_MAX_AGE and health checks work as under WSGI.

    Django closes a connection only at a request's start or end, so after a burst every thread would keep its
    PostgreSQL backend (a server process each) for as long as the site stays quiet: once no request has come
    for ``idle_close_seconds`` (CONN_MAX_AGE), the threads close their connections.
    """

    def __init__(self, *, threads: int = WEB_THREADS, idle_close_seconds: float | None = None):
        load_sync_middleware(self)
        self.threads = threads
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="django")
        if idle_close_seconds is None:
            from django.conf import settings

            idle_close_seconds = settings.DATABASES["default"].get("CONN_MAX_AGE") or 0
        self.idle_close_seconds = idle_close_seconds
        self._in_flight = 0
        self._last_request = time.monotonic()
        self._connections_open = False
        self._idle_watch = None

    async def handle(self, scope, receive, send):
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return  # the client left (or RequestBodyLimit answered) while the body came in
        loop = asyncio.get_running_loop()
        self._in_flight += 1
        self._connections_open = True
        self._watch_idle_connections()
        try:
            # run_in_executor, not sync_to_async: the thread must keep its own context (where Django keeps
            # its connections) instead of running in a copy of this request's.
            response = await loop.run_in_executor(self._executor, self._serve_in_thread, scope, body_file)
            try:
                await self.send_response(response, send)
            finally:
                if response.streaming:  # closed once its content is sent
                    await loop.run_in_executor(self._executor, response.close)
        finally:
            body_file.close()
            self._in_flight -= 1
            self._last_request = time.monotonic()

    def _serve_in_thread(self, scope, body_file):
        set_script_prefix(script_prefix(scope))
        # Its receivers (the database's: reset the query log, close a connection too old or broken) run in
        # the thread whose connection they look after.
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            response = self.get_response(request)
            if isinstance(response, FileResponse):
                response.block_size = self.chunk_size
        if not response.streaming:
            response.close()  # request_finished: the same receivers, in the same thread
        return response

    def _watch_idle_connections(self) -> None:
        idle = self.idle_close_seconds
        if idle and (self._idle_watch is None or self._idle_watch.done()):
            self._idle_watch = asyncio.get_running_loop().create_task(self._close_when_idle(idle))

    async def _close_when_idle(self, idle: float) -> None:
        """Runs in the event loop while connections are open; closes them once no request came for ``idle`` s."""
        while self._connections_open:
            await asyncio.sleep(max(1.0, self._last_request + idle - time.monotonic()))
            if self._in_flight == 0 and time.monotonic() - self._last_request >= idle:
                self._connections_open = False
                # In another thread: closing waits for every pool thread, which the event loop must not.
                await asyncio.get_running_loop().run_in_executor(None, self.close_connections)

    def close_connections(self) -> None:
        """Close every pool thread's database connection (for tests that drop their database)."""
        barrier = threading.Barrier(self.threads)

        def close():
            barrier.wait(timeout=10)  # holds each thread until all have one call, so every thread gets one
            connections.close_all()

        for future in [self._executor.submit(close) for _ in range(self.threads)]:
            future.result()


class RequestBodyLimit:
    """Refuses (413) an HTTP request whose body is larger than ``limit()`` bytes, before Django reads it.

    Django's ASGI handler reads the whole body (spooled to disk past FILE_UPLOAD_MAX_MEMORY_SIZE) before any
    middleware or view runs, so this is the last place an oversized upload can be stopped cheaply: a
    Content-Length over the limit is answered without receiving a byte; a body of unknown length (chunked) is
    counted as it arrives and, at the limit, answered 413 while the handler is told the client left (it then
    drops what it spooled and sends nothing). Every request is checked, signed in or not.
    """

    def __init__(self, app, *, limit):
        self.app = app
        self.limit = limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.limit()
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            return await _too_large(send, limit)
        received = 0
        refused = False

        async def counted_receive():
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    await _too_large(send, limit)
                    return {"type": "http.disconnect"}
            return message

        return await self.app(scope, counted_receive, send)


def _content_length(scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _too_large(send, limit: int) -> None:
    body = json.dumps({"detail": f"the request body is larger than the limit of {limit:,} bytes"}).encode()
    await send({"type": "http.response.start", "status": 413, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]})
    await send({"type": "http.response.body", "body": body})


def _request_limit() -> int:
    from django.conf import settings

    return settings.DEIDLOOP_MAX_REQUEST_BYTES


django_asgi_app = ThreadPoolASGIHandler()
http_app = RequestBodyLimit(django_asgi_app, limit=_request_limit)

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs the app registry ready)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from config.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter({
    "http": http_app,
    "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
})
