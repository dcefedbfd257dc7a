"""The project's audit log, for its leads and admins: filtered, paged, and exported as CSV."""
from __future__ import annotations

import csv
import json
from collections.abc import AsyncIterator, Iterator
from itertools import islice

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone

from annotator.permissions import Can, project_for
from annotator.forms import AuditFilterForm
from annotator.models import AuditEvent
from annotator.selectors import project_events
from annotator.services.audit import record_event

PAGE_SIZE = 100
CSV_COLUMNS = ("time", "username", "address", "action", "object type", "object id", "detail")
# A spreadsheet reads a cell starting with one of these as a formula; a leading quote makes it text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def audit_log(request, project_id: int):
    project = project_for(request.user, project_id, Can.SEE_AUDIT)
    form = AuditFilterForm(request.GET)
    if not form.is_valid():
        return _bad_filters(request, project, form)
    events = project_events(project=project, **form.selection())
    page = Paginator(events, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [{"event": event, "detail": _detail_text(event)} for event in page]
    # A page change swaps the table only; restoring a page from history needs the whole page.
    partial = request.htmx and not request.htmx.history_restore_request
    template = "annotator/_audit_events.html" if partial else "annotator/audit.html"
    return render(request, template, {"project": project, "form": form, "page": page, "rows": rows})


def audit_csv(request, project_id: int):
    project = project_for(request.user, project_id, Can.SEE_AUDIT)
    form = AuditFilterForm(request.GET)
    if not form.is_valid():
        return _bad_filters(request, project, form)
    events = project_events(project=project, **form.selection())
    record_event(
        user=request.user, action=AuditEvent.Action.EXPORT, project=project, request=request,
        detail={"audit_csv": True, "filters": form.in_use()},
    )
    lines = _csv_lines(events)
    response = StreamingHttpResponse(
        _in_chunks(lines) if isinstance(request, ASGIRequest) else lines, content_type="text/csv; charset=utf-8",
    )
    stamp = timezone.localtime().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="audit-project-{project.pk}-{stamp}.csv"'
    return response


def _bad_filters(request, project, form):
    return render(request, "annotator/audit.html", {"project": project, "form": form, "page": None}, status=400)


class _Echo:
    """A file for csv.writer that hands back each line instead of keeping it."""

    def write(self, line: str) -> str:
        return line


def _csv_lines(events: QuerySet[AuditEvent]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(CSV_COLUMNS)
    for event in events.iterator(chunk_size=1000):
        yield writer.writerow([_cell(value) for value in (
            timezone.localtime(event.created_at).isoformat(), event.username, event.address, event.action,
            event.object_type, event.object_id, _detail_text(event),
        )])


def _detail_text(event: AuditEvent) -> str:
    return json.dumps(event.detail, ensure_ascii=False, sort_keys=True)


def _cell(value) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


async def _in_chunks(lines: Iterator[str], rows: int = 500) -> AsyncIterator[str]:
    """The lines, a chunk at a time, for an ASGI server: given a synchronous iterator, Django's ASGI handler
    would read it whole into memory before sending the first byte. Each chunk is read on Django's
    thread-sensitive thread, as its own asynchronous queryset iteration does, so that the database cursor
    stays on one connection."""
    take = sync_to_async(lambda: "".join(islice(lines, rows)))
    try:
        while chunk := await take():
            yield chunk
    finally:
        await sync_to_async(lines.close)()
