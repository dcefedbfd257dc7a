"""Live updates to the browsers of a project: notices (a model or a ranking is ready) and presence (who is
annotating which record), carried by the Channels layer.

Presence is kept in Redis as one hash per project with one field per open websocket, so two annotators (or
two tabs) that report at the same moment never overwrite each other's entry, and a connection that
disappears without saying goodbye (a crashed server) drops out once its entry is older than
``PRESENCE_TTL_SECONDS``: the consumer refreshes its entry well within that time while the socket is open.
"""
from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from datetime import UTC, datetime
from functools import lru_cache

import redis
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings

logger = logging.getLogger(__name__)

PRESENCE_TTL_SECONDS = 180
PRESENCE_REFRESH_SECONDS = 60


def project_group(project_id: int) -> str:
    """Every member's socket on the project."""
    return f"project_{int(project_id)}"


def leads_group(project_id: int) -> str:
    """The sockets of the project's leads and admins (presence goes only to them)."""
    return f"project_{int(project_id)}_leads"


def member_group(project_id: int, user_id: int) -> str:
    """One member's sockets on the project (closed when their membership ends or their role changes)."""
    return f"project_{int(project_id)}_member_{int(user_id)}"


def close_member_sockets(*, project_id: int, user_id: int, removed: bool = True) -> bool:
    """Close the member's open sockets on the project; they reconnect (and are checked) again, or not at all.
    False when the channel layer could not be reached (the socket then refuses them on its next message)."""
    layer = get_channel_layer()
    if layer is None:
        return False
    try:
        _outside_event_loop(async_to_sync(layer.group_send), member_group(project_id, user_id),
                            {"type": "membership.changed", "removed": removed})
    except (OSError, redis.RedisError) as error:
        logger.warning("sockets of user %s on project %s were not closed: %s", user_id, project_id, error)
        return False
    return True


def notify_project(
    *, project_id: int, kind: str, text: str, data: dict | None = None, leads_only: bool = False,
) -> bool:
    """Show ``text`` to everyone who has the project open; ``kind`` says what happened (``model_ready``,
    ``ranking_ready``) and ``data`` adds fields to the message the browser receives. ``leads_only``: to the
    project's leads and admins only (an import's progress, say); an empty ``text`` is data for a page, not
    a notice to show.

    A notice is a courtesy: what it announces is already stored, so a channel layer that cannot be reached
    is logged and reported by returning False instead of failing the caller.
    """
    layer = get_channel_layer()
    if layer is None:
        return False
    message = {"type": "project.notice", "kind": kind, "text": text, "data": dict(data or {})}
    try:
        group = leads_group(project_id) if leads_only else project_group(project_id)
        _outside_event_loop(async_to_sync(layer.group_send), group, message)
    except (OSError, redis.RedisError) as error:
        logger.warning("notice %r for project %s was not sent: %s", kind, project_id, error)
        return False
    return True


def _outside_event_loop(function, *args) -> None:
    """Call ``function`` here, or in a helper thread when this thread runs an event loop (where
    ``async_to_sync`` refuses to run): a notice may be sent from any code."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        function(*args)
        return
    errors: list[BaseException] = []

    def run() -> None:
        try:
            function(*args)
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(error)

    thread = threading.Thread(target=run, name="notice")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=5)


def _redis() -> redis.Redis:
    return _client(settings.REDIS_URL)


def _presence_key(project_id: int) -> str:
    return f"deidloop:presence:{int(project_id)}"


def record_presence(
    *, project_id: int, connection: str, username: str, document_id: int, external_id: str, since: str,
) -> None:
    """Note (or refresh) that ``username``'s socket ``connection`` shows ``document_id`` since ``since``."""
    entry = {"username": username, "document_id": document_id, "external_id": external_id, "since": since,
             "seen": time.time()}
    key = _presence_key(project_id)
    with _redis().pipeline(transaction=False) as pipe:
        pipe.hset(key, connection, json.dumps(entry))
        pipe.expire(key, PRESENCE_TTL_SECONDS)
        pipe.execute()


def forget_presence(*, project_id: int, connection: str) -> None:
    _redis().hdel(_presence_key(project_id), connection)


def active_annotators(*, project_id: int) -> list[dict]:
    """Who is annotating what now, one entry per person (their latest record), ordered by username:
    ``[{"username", "document_id", "external_id", "since"}]`` with ``since`` in ISO 8601 (UTC)."""
    key = _presence_key(project_id)
    stored = _redis().hgetall(key)
    oldest = time.time() - PRESENCE_TTL_SECONDS
    latest: dict[str, dict] = {}
    stale = []
    for connection, raw in stored.items():
        entry = json.loads(raw)
        if entry["seen"] < oldest:
            stale.append(connection)
            continue
        known = latest.get(entry["username"])
        if known is None or entry["since"] > known["since"]:
            latest[entry["username"]] = entry
    if stale:
        _redis().hdel(key, *stale)
    return [
        {name: entry[name] for name in ("username", "document_id", "external_id", "since")}
        for _username, entry in sorted(latest.items())
    ]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
