"""ASGI entry point: HTTP through Django, websockets through Channels."""
import asyncio
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


django_asgi_app = ThreadPoolASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs the app registry ready)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from config.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter({
    "http": django_asgi_app,
    "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
})
