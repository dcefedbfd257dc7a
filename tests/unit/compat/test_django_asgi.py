"""Django==5.2.19: the ASGIHandler internals that config._compat.django_asgi relies on (see its docstring).

No database is touched: an anonymous request for a page is redirected to the login page by the
middleware chain, before any view runs.
"""
from __future__ import annotations

import asyncio
import threading

import pytest
from asgiref.sync import async_to_sync
from channels.testing import HttpCommunicator
from django.test import override_settings

from config._compat.django_asgi import ASGIHandler, load_sync_middleware, script_prefix


class ThreadedHandler(ASGIHandler):
    """The smallest handler of ThreadPoolASGIHandler's kind: sync middleware chain, run in another thread."""

    def __init__(self):
        load_sync_middleware(self)
        self.threads_seen: list[str] = []

    async def get_response_async(self, request):
        return await asyncio.get_running_loop().run_in_executor(None, self._respond, request)

    def _respond(self, request):
        self.threads_seen.append(threading.current_thread().name)
        from django.urls import set_script_prefix

        set_script_prefix(script_prefix(request.scope))
        return self.get_response(request)


def _get(handler, path: str, root_path: str = "") -> dict:
    async def request():
        communicator = HttpCommunicator(handler, "GET", path, headers=[(b"host", b"localhost")])
        communicator.scope["root_path"] = root_path
        return await communicator.get_response(timeout=30)

    return async_to_sync(request)()


def test_asgi_handler_loads_an_async_chain_and_load_sync_middleware_a_sync_one():
    assert asyncio.iscoroutinefunction(ASGIHandler()._middleware_chain)
    handler = ThreadedHandler()
    assert not asyncio.iscoroutinefunction(handler._middleware_chain)
    assert handler._middleware_chain is not None


def test_handle_awaits_get_response_async_which_serves_through_the_sync_chain_in_a_thread():
    handler = ThreadedHandler()
    response = _get(handler, "/deid/", root_path="/deid")
    assert response["status"] == 302
    # The script prefix reached the pool thread: reverse("login") there starts with it.
    assert dict(response["headers"])[b"Location"] == b"/deid/login/?next=/deid/"
    assert len(handler.threads_seen) == 1 and handler.threads_seen[0] != threading.main_thread().name


def test_script_prefix_is_force_script_name_or_the_scopes_root_path():
    assert script_prefix({"root_path": "/deid"}) == "/deid"
    assert script_prefix({}) == ""
    with override_settings(FORCE_SCRIPT_NAME="/forced"):
        assert script_prefix({"root_path": "/deid"}) == "/forced"


@pytest.fixture
def pool_handler():
    from config.asgi import ThreadPoolASGIHandler

    handler = ThreadPoolASGIHandler(threads=1)
    yield handler
    handler._executor.shutdown(wait=True)


def test_thread_pool_handler_serves_on_its_pool_with_the_script_prefix(pool_handler):
    response = _get(pool_handler, "/deid/", root_path="/deid")
    assert response["status"] == 302
    assert dict(response["headers"])[b"Location"] == b"/deid/login/?next=/deid/"
