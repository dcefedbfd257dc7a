"""A project's label schema, edited by its leads after the project started, without breaking stored spans.

Every span a project keeps names its label: annotations (drafts and submissions, and the suggestions a draft
started from), the pool's pre-annotations, and — in the learning app — silver sentences. A rename rewrites all
of them in the transaction that renames the label (other apps through ``annotator.signals.label_renamed``); a
label is deleted only while no stored span uses it. Colours and keys live in ``Project.label_styles``
(``annotator.schemas.label_styles`` fills in the ones a project leaves out). Every change is audited.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils.translation import gettext, ngettext

from annotator.models import Annotation, AuditEvent, PoolScore, Project
from annotator.schemas import LabelError, check_colour, check_key, check_label_name, label_styles, unused_style
from annotator.services.audit import record_event
from annotator.signals import label_usage_elsewhere, rename_label_elsewhere
from corpus.span_json import count_label, relabelled


@dataclass(frozen=True)
class LabelUsage:
    spans: int
    records: int

    def spans_text(self) -> str:
        return ngettext("%(count)s stored span", "%(count)s stored spans", self.spans) % {"count": self.spans}

    def records_text(self) -> str:
        return ngettext("%(count)s record", "%(count)s records", self.records) % {"count": self.records}

    def sentence(self, label: str) -> str:
        return gettext("%(label)s is used by %(spans)s in %(records)s") % {
            "label": label, "spans": ngettext("%(count)s span", "%(count)s spans", self.spans) % {"count": self.spans},
            "records": self.records_text()}


def _stored_spans(project: Project, label: str, *, lock: bool = False):
    """(document id, field, row, spans) of every annotation and pre-annotation of ``project`` holding a span
    labelled ``label`` (found by JSON containment, so rows without it are not read); ``lock``: their rows
    locked until the transaction ends."""
    with_label = [{"label": label}]
    annotations = Annotation.objects.filter(document__project=project)
    scores = PoolScore.objects.filter(ranking__project=project, pre_annotations__spans__contains=with_label)
    if lock:
        annotations, scores = annotations.select_for_update(of=("self",)), scores.select_for_update(of=("self",))
    for field in ("spans", "suggested"):
        for row in annotations.filter(**{f"{field}__contains": with_label}).only("id", "document_id", field):
            yield row.document_id, field, row, getattr(row, field)
    for row in scores.only("id", "document_id", "pre_annotations"):
        yield row.document_id, "pre_annotations", row, row.pre_annotations.get("spans") or []


def label_usage(*, project: Project, label: str) -> LabelUsage:
    """How many stored spans of the project carry ``label``, in how many records."""
    spans, records = label_usage_elsewhere(project=project, label=label)
    for document_id, _field, _row, items in _stored_spans(project, label):
        spans += count_label(items, label)
        records.add(document_id)
    return LabelUsage(spans=spans, records=len(records))


def _locked(project: Project) -> Project:
    return Project.objects.select_for_update().get(pk=project.pk)


def _styles_of(project: Project) -> dict:
    """Every label's colour and key as stored: the ones the project left to their position are written out,
    so that adding, removing or moving a label does not change the others'."""
    return {style["label"]: {"colour": style["colour"], "key": style["key"]}
            for style in label_styles(project.labels, project.label_styles)}


def _check_style(styles: dict, label: str, colour: str, key: str) -> dict:
    colour = check_colour(colour)
    key = check_key(key)
    owner = next((other for other, style in styles.items() if other != label and key and style["key"] == key), None)
    if owner is not None:
        raise LabelError(gettext("the key %(key)r is %(owner)s's already; choose another") % {"key": key, "owner": owner}, field="key")
    return {"colour": colour, "key": key}


def _save(project: Project, locked: Project, fields: list[str]) -> None:
    locked.save(update_fields=fields)
    for name in fields:
        setattr(project, name, getattr(locked, name))


@transaction.atomic
def add_label(*, project: Project, user, name: str, colour: str = "", key: str | None = None) -> dict:
    """Add a label at the end of the schema; without a colour or key it gets ones no other label has."""
    locked = _locked(project)
    name = check_label_name(name)
    if name in locked.labels:
        raise LabelError(gettext('the project has a label %(name)s already') % {"name": name}, field="name")
    styles = _styles_of(locked)
    fresh = unused_style(locked.labels, locked.label_styles)
    style = _check_style(styles, name, colour or fresh["colour"], fresh["key"] if key is None else key)
    locked.labels = [*locked.labels, name]
    locked.label_styles = {**styles, name: style}
    _save(project, locked, ["labels", "label_styles"])
    record_event(user=user, action=AuditEvent.Action.EDIT, project=locked, obj=locked,
                 detail={"label_added": name, **style})
    return style


@transaction.atomic
def restyle_label(*, project: Project, user, label: str, colour: str, key: str) -> dict:
    """Give ``label`` a colour and a shortcut key (no other label's); returns {field: [old, new]}."""
    locked = _locked(project)
    if label not in locked.labels:
        raise LabelError(gettext('the project has no label %(label)r') % {"label": label}, field="label")
    styles = _styles_of(locked)
    style = _check_style(styles, label, colour, key)
    changed = {name: [styles[label][name], value] for name, value in style.items() if styles[label][name] != value}
    if not changed:
        return {}
    locked.label_styles = {**styles, label: style}
    _save(project, locked, ["label_styles"])
    record_event(user=user, action=AuditEvent.Action.EDIT, project=locked, obj=locked,
                 detail={"label_restyled": label, **changed})
    return changed


@transaction.atomic
def rename_label(*, project: Project, user, old: str, new: str) -> LabelUsage:
    """Rename ``old`` to ``new`` in the schema and in every stored span of the project, in one transaction;
    returns the spans and records changed."""
    locked = _locked(project)
    if old not in locked.labels:
        raise LabelError(gettext('the project has no label %(old)r') % {"old": old}, field="label")
    new = check_label_name(new)
    if new == old:
        raise LabelError(gettext('the label is called %(old)s already') % {"old": old}, field="name")
    if new in locked.labels:
        raise LabelError(gettext('the project has a label %(new)s already; delete or rename that one first') % {"new": new}, field="name")
    spans, records = rename_label_elsewhere(project=locked, old=old, new=new, user=user)
    rows: dict[tuple[type, int], object] = {}
    for document_id, field, row, items in _stored_spans(locked, old, lock=True):
        row = rows.setdefault((type(row), row.pk), row)
        renamed, changed = relabelled(items, old=old, new=new)
        if field == "pre_annotations":
            row.pre_annotations = {**row.pre_annotations, "spans": renamed}
        else:
            setattr(row, field, renamed)
        spans += changed
        records.add(document_id)
    for model, fields in ((Annotation, ["spans", "suggested"]), (PoolScore, ["pre_annotations"])):
        changed_rows = [row for (kind, _pk), row in rows.items() if kind is model]
        if changed_rows:
            model.objects.bulk_update(changed_rows, fields, batch_size=500)
    styles = _styles_of(locked)
    locked.labels = [new if label == old else label for label in locked.labels]
    locked.label_styles = {(new if label == old else label): style for label, style in styles.items()}
    if old in (locked.conceal_policy or {}):
        locked.conceal_policy = {(new if label == old else label): strategy
                                 for label, strategy in locked.conceal_policy.items()}
    _save(project, locked, ["labels", "label_styles", "conceal_policy"])
    usage = LabelUsage(spans=spans, records=len(records))
    record_event(user=user, action=AuditEvent.Action.EDIT, project=locked, obj=locked,
                 detail={"label_renamed": [old, new], "spans": usage.spans, "records": usage.records})
    return usage


@transaction.atomic
def delete_label(*, project: Project, user, label: str) -> None:
    """Remove ``label`` from the schema; refused, with the count, while any stored span uses it."""
    locked = _locked(project)
    if label not in locked.labels:
        raise LabelError(gettext('the project has no label %(label)r') % {"label": label}, field="label")
    usage = label_usage(project=locked, label=label)
    if usage.spans:
        raise LabelError(gettext('%(usage)s: rename it, or correct those records first') % {"usage": usage.sentence(label)}, field="label")
    styles = _styles_of(locked)
    locked.labels = [other for other in locked.labels if other != label]
    locked.label_styles = {other: style for other, style in styles.items() if other != label}
    locked.conceal_policy = {other: strategy for other, strategy in (locked.conceal_policy or {}).items()
                             if other != label}
    _save(project, locked, ["labels", "label_styles", "conceal_policy"])
    record_event(user=user, action=AuditEvent.Action.EDIT, project=locked, obj=locked,
                 detail={"label_deleted": label})
