"""The audit log: one append-only event per read of record text, export, import, edit, login and membership
change, with the user, the client's address and the time."""
from __future__ import annotations

import ipaddress

from annotator.middleware import current_request
from annotator.models import AuditEvent, Project


def client_address(request) -> str | None:
    """The address the request came from (``REMOTE_ADDR``; behind the proxy, the web server sets it from the
    proxy's forwarding header); None when it is missing or not an IP address."""
    if request is None:
        return None
    scope = getattr(request, "scope", None)  # a websocket consumer's scope
    if scope is not None and scope.get("client"):
        value = scope["client"][0]
    else:
        value = getattr(request, "META", {}).get("REMOTE_ADDR", "")
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return None


def record_event(
    *, user, action: str, project: Project | None = None, obj=None, detail: dict | None = None, request=None,
    username: str = "",
) -> AuditEvent:
    """Write one event. ``request`` gives the client's address (without it, the request being served, if any);
    ``username`` names who tried when there is no user (a failed login)."""
    known = user if getattr(user, "is_authenticated", False) else None
    if request is None:
        request = current_request()
    return AuditEvent.objects.create(
        user=known,
        username=known.get_username() if known is not None else username[:150],
        address=client_address(request),
        action=action,
        project=project,
        object_type=type(obj).__name__ if obj is not None else "",
        object_id=str(getattr(obj, "pk", "") or "") if obj is not None else "",
        detail=detail or {},
    )


def acting_user():
    """The signed-in user of the request being served, or None (no request, or an anonymous one)."""
    request = current_request()
    user = getattr(request, "user", None)
    return user if getattr(user, "is_authenticated", False) else None
