"""Reviewing records: a record's gold and history (read-only), sending it back for correction, a lead's fix.

Reading a record's review is for those who see every record; sending back and fixing are for those who
manage the project (``annotator.permissions``)."""
from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.models import Annotation, AuditEvent, Document
from annotator.permissions import Can, allows, project_for
from annotator.record_forms import FixForm, RecordFilterForm, SendBackForm, span_formset, spans_of
from annotator.record_selectors import record_list, record_review, record_rows
from annotator.services.audit import record_event
from annotator.services.review import ReviewError, count_tokens, fix_record, send_back

PAGE_SIZE = 50
#: Sorting by tokens counts the records not counted yet, this many per request (about a second of tokenizing).
TOKENS_COUNTED_PER_REQUEST = 500


def record_table(request, *, project) -> dict:
    """The project page's record list: the filter form, one page of ``rows``, and the order each column's
    header asks for (the page swaps the table with htmx; without it, links load the page)."""
    sees_all = allows(user=request.user, project=project, action=Can.SEE_ALL_RECORDS)
    usernames = (project.memberships.order_by("user__username").values_list("user__username", flat=True)
                 if sees_all else ())
    form = RecordFilterForm(request.GET, project=project, sees_all=sees_all, usernames=usernames)
    filters = form.filters()
    documents = record_list(user=request.user, project=project, filters=filters)
    by_tokens = filters.sort in ("tokens", "-tokens")
    missing = documents.filter(n_tokens__isnull=True).order_by("pk").values_list("pk", flat=True)
    if by_tokens:  # each record is counted once: a large pool over a few requests
        count_tokens(document_ids=missing[:TOKENS_COUNTED_PER_REQUEST])
    page = Paginator(documents, PAGE_SIZE).get_page(request.GET.get("page"))
    counts = count_tokens(document_ids=[document.pk for document in page.object_list])
    for document in page.object_list:
        document.n_tokens = counts.get(document.pk)
    uncounted = missing.count() if by_tokens else 0
    return {
        "page": page, "rows": record_rows(user=request.user, project=project, documents=list(page.object_list)),
        "filter_form": form, "sort": filters.sort, "sees_all_records": sees_all, "uncounted": uncounted,
        # a column's header sorts by it, or reverses the order when the list is sorted by it already
        "sort_next": {column: f"-{column}" if filters.sort == column else column
                      for column in ("id", "name", "status", "tokens", "submitted")},
    }


def _record(request, project_id: int, document_id: int, action: Can) -> Document:
    project = project_for(request.user, project_id, action)
    document = get_object_or_404(Document.objects.select_related("project"), project=project, pk=document_id)
    document.project = project
    return document


def _submitter(document: Document) -> str | None:
    """The username a record goes back to by default: its (first) submitter."""
    return (Annotation.objects.filter(document=document, state=Annotation.State.SUBMITTED,
                                      source=Annotation.Source.HUMAN, annotator__isnull=False)
            .order_by("submitted_at", "id").values_list("annotator__username", flat=True).first())


def _review_page(request, document: Document, *, send_form: SendBackForm | None = None, status: int = 200):
    project = document.project
    manages = allows(user=request.user, project=project, action=Can.MANAGE)
    if send_form is None and manages:
        send_form = SendBackForm(project=project, initial={"to": _submitter(document)})
    return render(request, "annotator/record_review.html", {
        "project": project, "document": document, "review": record_review(document=document),
        "can_manage": manages, "send_form": send_form,
        "submitted": document.status in (Document.Status.SUBMITTED, Document.Status.ADJUDICATED),
    }, status=status)


@require_GET
def record_review_page(request, project_id: int, document_id: int):
    document = _record(request, project_id, document_id, Can.SEE_ALL_RECORDS)
    record_event(user=request.user, action=AuditEvent.Action.VIEW, project=document.project, obj=document,
                 request=request, detail={"review": True})
    return _review_page(request, document)


@require_POST
def record_send_back(request, project_id: int, document_id: int):
    document = _record(request, project_id, document_id, Can.MANAGE)
    form = SendBackForm(request.POST, project=document.project)
    if form.is_valid():
        try:
            draft = send_back(document=document, by=request.user, to=form.cleaned_data["to"],
                              note=form.cleaned_data["note"])
        except ReviewError as error:
            form.add_error(error.field if error.field in form.fields else None, str(error))
        else:
            messages.success(request, gettext("Sent back to %(name)s: it is their next record.")
                             % {"name": draft.annotator.get_username()})
            return redirect("annotator:record-review", project_id=document.project_id, document_id=document.pk)
    document.refresh_from_db()
    return _review_page(request, document, send_form=form, status=400)


@require_http_methods(["GET", "POST"])
def record_fix(request, project_id: int, document_id: int):
    """GET: the record's gold as a form of spans; POST: store the edited spans as its gold."""
    document = _record(request, project_id, document_id, Can.MANAGE)
    review = record_review(document=document)
    if review["gold"] is None:
        return render(request, "annotator/record_fix.html", {
            "project": document.project, "document": document, "review": review}, status=404)
    status = 200
    if request.method == "POST":
        formset, form = span_formset(document=document, data=request.POST), FixForm(request.POST)
        if formset.is_valid() and form.is_valid():
            try:
                fixed = fix_record(document=document, by=request.user, spans=spans_of(formset),
                                   note=form.cleaned_data["note"])
            except ReviewError as error:
                form.add_error(None, str(error))
            else:
                messages.success(request, gettext("The record's gold is saved.") if fixed else gettext("Nothing changed."))
                return redirect("annotator:record-review", project_id=document.project_id, document_id=document.pk)
        status = 400
    else:
        initial = [{"start": span["start"], "end": span["end"], "label": span["label"]} for span in review["gold"]]
        formset, form = span_formset(document=document, initial=initial), FixForm()
    return render(request, "annotator/record_fix.html", {
        "project": document.project, "document": document, "review": review, "formset": formset, "form": form,
    }, status=status)
