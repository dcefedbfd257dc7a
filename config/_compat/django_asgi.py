"""Django's ASGI handler internals that :mod:`config.asgi` relies on (Django==5.2.19, the lock's pin).

Pinned by ``tests/unit/compat/test_django_asgi.py``. ``ThreadPoolASGIHandler`` subclasses
``django.core.handlers.asgi.ASGIHandler`` and relies on:

- ``ASGIHandler.__init__`` being ``BaseHandler.__init__()`` followed by ``load_middleware(is_async=True)``,
  so that calling ``BaseHandler.__init__`` and ``load_middleware(is_async=False)`` instead gives the same
  handler with its middleware chain built for synchronous calls (``get_response``);
- ``ASGIHandler.read_body(receive)`` (the body as a file, ``RequestAborted`` when the client leaves),
  ``create_request(scope, body_file)`` (the request, or None and the error response), ``send_response``
  and ``chunk_size``, from which ``ThreadPoolASGIHandler.handle`` serves a request in one thread hop;
- ``ASGIHandler.handle`` reading the body, building the request and awaiting
  ``self.get_response_async(request)`` for the response (the tests' smallest handler overrides only that);
- ``ASGIHandler.handle`` returning without sending anything when ``receive`` gives ``http.disconnect`` while
  it reads the body (``read_body`` raises ``RequestAborted``), so that ``config.asgi.RequestBodyLimit`` can
  answer 413 itself part-way through a chunked body (pinned in ``tests/integration/test_uploads.py``);
- ``django.core.handlers.asgi.get_script_prefix(scope)``: ``FORCE_SCRIPT_NAME`` or the scope's
  ``root_path``, the prefix ``handle`` sets in the event loop's thread and the pool thread must set again.
"""
from __future__ import annotations

from django.core.handlers.asgi import ASGIHandler, get_script_prefix

__all__ = ["ASGIHandler", "load_sync_middleware", "script_prefix"]


def load_sync_middleware(handler: ASGIHandler) -> None:
    """Initialise ``handler`` as ``ASGIHandler.__init__`` does, but with the middleware chain loaded in
    sync mode; call it instead of ``super().__init__()``."""
    super(ASGIHandler, handler).__init__()  # BaseHandler's, skipping ASGIHandler's async middleware loading
    handler.load_middleware(is_async=False)


def script_prefix(scope: dict) -> str:
    """The script prefix Django serves the ASGI ``scope`` under."""
    return get_script_prefix(scope)
