"""Websocket of a project page: notices for every member, live presence for its leads and admins."""
from __future__ import annotations

import asyncio
import contextlib

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from annotator.models import Document, Project
from annotator.permissions import Can, role_allows, role_in
from annotator.services import notify

# Close codes (4000-4999 are the application's own): "not (or no longer) a member of this project", after
# which the page does not knock again, and "your role changed", after which it reconnects and is checked afresh.
CLOSE_NOT_A_MEMBER = 4403
CLOSE_ROLE_CHANGED = 4409

# Redis calls are short and independent of the ORM: run them off the thread Django's sync views share.
_redis_call = sync_to_async(thread_sensitive=False)


@database_sync_to_async
def _role(user, project_id: int) -> str | None:
    project = Project.objects.filter(pk=project_id).first()
    if project is None or user is None:
        return None
    return role_in(user=user, project=project)


@database_sync_to_async
def _external_id(project_id: int, document_id: int) -> str | None:
    return Document.objects.filter(pk=document_id, project_id=project_id).values_list(
        "external_id", flat=True
    ).first()


class ProjectConsumer(AsyncJsonWebsocketConsumer):
    """``ws/projects/<project_id>/``.

    Members receive ``{"type": "notice", "kind", "text", ...}``. A member on the workbench sends
    ``{"type": "presence", "document_id": N}``; leads and admins then receive
    ``{"type": "presence", "annotators": [...]}`` (also once when they connect, and after anyone leaves).
    """

    project_id: int
    joined: tuple[str, ...] = ()
    presence: dict | None = None
    keep_alive: asyncio.Task | None = None

    async def connect(self):
        self.project_id = int(self.scope["url_route"]["kwargs"]["project_id"])
        user = self.scope.get("user")
        role = await _role(user, self.project_id)
        if role is None:
            await self.close(code=CLOSE_NOT_A_MEMBER)
            return
        self.username = user.get_username()
        self.user_id = user.pk
        # Presence says who is annotating which record: people's data, for those whose role sees it.
        self.is_lead = role_allows(role, Can.SEE_PEOPLE)
        groups = [notify.project_group(self.project_id), notify.member_group(self.project_id, user.pk)]
        if self.is_lead:
            groups.append(notify.leads_group(self.project_id))
        for group in groups:
            await self.channel_layer.group_add(group, self.channel_name)
        self.joined = tuple(groups)
        await self.accept()
        if self.is_lead:
            annotators = await _redis_call(notify.active_annotators)(project_id=self.project_id)
            await self.send_json({"type": "presence", "annotators": annotators})

    async def disconnect(self, code):
        if self.keep_alive is not None:
            self.keep_alive.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.keep_alive
        if self.presence is not None:
            self.presence = None
            await _redis_call(notify.forget_presence)(project_id=self.project_id, connection=self.channel_name)
            await self._broadcast_presence()
        for group in self.joined:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive_json(self, content, **kwargs):
        if not isinstance(content, dict) or content.get("type") != "presence":
            return
        if await _role(self.scope.get("user"), self.project_id) is None:  # removed while connected
            await self.close(code=CLOSE_NOT_A_MEMBER)
            return
        try:
            document_id = int(content["document_id"])
        except (KeyError, TypeError, ValueError):
            await self.send_json({"type": "error", "text": "presence needs an integer document_id"})
            return
        if self.presence is not None and self.presence["document_id"] == document_id:
            return
        external_id = await _external_id(self.project_id, document_id)
        if external_id is None:
            await self.send_json({"type": "error", "text": f"no document {document_id} in this project"})
            return
        self.presence = {"document_id": document_id, "external_id": external_id, "since": notify.now_iso()}
        await self._record_presence()
        await self._broadcast_presence()
        if self.keep_alive is None:
            self.keep_alive = asyncio.create_task(self._refresh_presence())

    async def _record_presence(self):
        await _redis_call(notify.record_presence)(
            project_id=self.project_id, connection=self.channel_name, username=self.username, **self.presence,
        )

    async def _refresh_presence(self):
        """An open socket keeps its entry fresh; a vanished server's entries age out on their own."""
        while True:
            await asyncio.sleep(notify.PRESENCE_REFRESH_SECONDS)
            if self.presence is not None:
                await self._record_presence()

    async def _broadcast_presence(self):
        annotators = await _redis_call(notify.active_annotators)(project_id=self.project_id)
        await self.channel_layer.group_send(
            notify.leads_group(self.project_id), {"type": "presence.update", "annotators": annotators}
        )

    # Group messages (the "type" names the handler: "project.notice" -> project_notice).

    async def project_notice(self, event):
        await self.send_json({**event.get("data", {}), "type": "notice", "kind": event["kind"], "text": event["text"]})

    async def membership_changed(self, event):
        """The member was removed (closed for good) or their role changed (closed; the reconnect is checked)."""
        await self.close(code=CLOSE_NOT_A_MEMBER if event.get("removed", True) else CLOSE_ROLE_CHANGED)

    async def presence_update(self, event):
        await self.send_json({"type": "presence", "annotators": event["annotators"]})
