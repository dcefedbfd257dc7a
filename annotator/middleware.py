"""The request being served, for code that is not handed it: services and signal receivers that write audit
events (a membership changed in the admin, a service called from a view) still know the client's address and
who acted."""
from __future__ import annotations

from contextvars import ContextVar

from asgiref.sync import iscoroutinefunction, markcoroutinefunction

# A context variable, not a thread-local: each request's value stays its own whether the chain runs in a
# thread per request (WSGI, the ASGI thread pool) or as coroutines on one event loop.
_current_request: ContextVar = ContextVar("deidloop_current_request", default=None)


def current_request():
    """The HTTP request being served in this context, or None (a management command, a Celery task)."""
    return _current_request.get()


class CurrentRequestMiddleware:
    """Makes the request available to :func:`current_request` while the rest of the chain and the view run.
    Placed after AuthenticationMiddleware, so that ``request.user`` is there."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self.async_mode:
            return self.__acall__(request)
        token = _current_request.set(request)
        try:
            return self.get_response(request)
        finally:
            _current_request.reset(token)

    async def __acall__(self, request):
        token = _current_request.set(request)
        try:
            return await self.get_response(request)
        finally:
            _current_request.reset(token)
