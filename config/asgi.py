"""ASGI entry point: HTTP through Django, websockets through Channels."""
import asyncio
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import django
from django.db import close_old_connections, connections, reset_queries
from django.urls import set_script_prefix

from config._compat.django_asgi import ASGIHandler, load_sync_middleware, script_prefix

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)

# Threads per web process that run Django's (sync) request handling; processes: DEIDLOOP_WEB_WORKERS.
WEB_THREADS = max(1, int(os.environ.get("DEIDLOOP_WEB_THREADS", "4")))


class ThreadPoolASGIHandler(ASGIHandler):
    """Django's ASGI handler, serving each request's middleware chain and view in one go on a small pool of
    long-lived threads, as a threaded WSGI server does.

    Every view here is sync. Django's default ASGI mode, with sync-only middleware in the chain (WhiteNoise),
    hops between the event loop and a thread for every middleware method, and runs each request in a fresh
    thread-sensitive context, whose database connection is new each time: one PostgreSQL connection
    opened per request (about 5 ms here), however long CONN_MAX_AGE is. In a thread of its own that it
    keeps, a request reuses that thread's connection, and CONN_MAX_AGE and health checks work as under WSGI.
    """

    def __init__(self, *, threads: int = WEB_THREADS):
        load_sync_middleware(self)
        self.threads = threads
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="django")

    async def get_response_async(self, request):
        # run_in_executor, not sync_to_async: the thread must keep its own context (where Django keeps its
        # connections) instead of running in a copy of this request's.
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._respond_in_thread, request)

    def _respond_in_thread(self, request):
        set_script_prefix(script_prefix(request.scope))
        # What request_started and request_finished do for the database, in the thread that owns it.
        reset_queries()
        close_old_connections()
        try:
            return self.get_response(request)
        finally:
            close_old_connections()

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
