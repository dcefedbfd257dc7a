from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils.translation import gettext

from annotator.models import Membership, Project
from annotator.schemas import CUSTOM, LabelError, canonical_preset_name, check_colour, check_key, preset_labels


class ProjectError(ValueError):
    """A project cannot be created or changed as asked."""


@transaction.atomic
def create_project(
    *,
    name: str,
    schema: str = CUSTOM,
    labels: list[str] | None = None,
    language: str = "es",
    allow_overlap: bool = False,
    created_by: AbstractBaseUser | None = None,
    description: str = "",
    label_styles: dict | None = None,
    tagger: dict | None = None,
    strategy: str | None = None,
    audited: bool = False,
) -> Project:
    """A new project led by ``created_by``: ``schema``'s labels (a preset's, then ``labels`` not in it), each
    shown in its ``label_styles`` colour and key (checked: keys unique); the loop's ``tagger`` and ``strategy``
    or the defaults. ``audited``: the creation is recorded as ``created_by``'s (a person creating it, not a
    command)."""
    from annotator.models import AuditEvent
    from annotator.services.audit import record_event

    name = name.strip()
    if not name:
        raise ProjectError(gettext("a project needs a name"))
    if Project.objects.filter(name=name).exists():
        raise ProjectError(gettext('a project named %(name)r exists already') % {"name": name})
    preset = canonical_preset_name(schema)
    if preset != CUSTOM:
        labels = preset_labels(preset) + [label for label in (labels or []) if label not in preset_labels(preset)]
    labels = [label.strip() for label in (labels or []) if label.strip()]
    if len(set(labels)) != len(labels):
        raise ProjectError(gettext("the label list repeats a label"))
    styles = {}
    try:
        for label, style in (label_styles or {}).items():
            if label in labels:
                styles[label] = {"colour": check_colour(style.get("colour", "")), "key": check_key(style.get("key", ""))}
    except LabelError as error:
        raise ProjectError(gettext('label %(label)s: %(error)s') % {"label": label, "error": error}) from None
    keys = [style["key"] for style in styles.values() if style["key"]]
    if len(set(keys)) != len(keys):
        raise ProjectError(gettext("two labels have the same shortcut key"))
    loop = {name: value for name, value in (("tagger", tagger), ("strategy", strategy)) if value}
    try:
        with transaction.atomic():
            project = Project.objects.create(
                name=name, schema_preset=preset, labels=labels, language=language, allow_overlap=allow_overlap,
                created_by=created_by, description=description, label_styles=styles, **loop,
            )
    except IntegrityError:  # created at the same moment by someone else: the check above could not see it
        raise ProjectError(gettext('a project named %(name)r exists already') % {"name": name}) from None
    if created_by is not None:
        Membership.objects.create(project=project, user=created_by, role=Membership.Role.LEAD)
    if audited:
        record_event(user=created_by, action=AuditEvent.Action.EDIT, project=project, obj=project,
                     detail={"project_created": {"name": project.name, "schema": preset, "labels": labels,
                                                 "label_styles": styles, **loop}})
    return project


def set_membership(*, project: Project, user: AbstractBaseUser, role: str) -> Membership:
    if role not in Membership.Role.values:
        raise ProjectError(gettext('unknown role %(role)r; choose one of %(items)s') % {"role": role, "items": ', '.join(Membership.Role.values)})
    membership, _ = Membership.objects.update_or_create(project=project, user=user, defaults={"role": role})
    return membership


#: Settings a lead may change from the browser; they take effect at the next retrain.
LOOP_SETTINGS = (
    "tagger", "strategy", "strategy_params", "batch_size", "self_training", "self_training_policy",
    "recall_bias_beta", "recall_bias_betas", "annotators_per_document", "assignment_timeout_minutes", "eponyms",
    "gazetteers", "diverse_batches", "adjudication", "awaiting_adjudication", "control_rate",
)


#: De-identification settings a lead may change (the deid app's settings page); they apply to the next export
#: or de-identification.
DEID_SETTINGS = ("conceal_policy", "surrogate_scope", "age_bucket", "review_confidence", "deid_tagger")


def update_deid_settings(*, project: Project, user, changes: dict) -> dict:
    """Apply ``changes`` (only :data:`DEID_SETTINGS`), audited like :func:`update_settings`."""
    return update_settings(project=project, user=user, changes=changes, allowed=DEID_SETTINGS)


@transaction.atomic
def update_settings(*, project: Project, user, changes: dict, allowed: tuple[str, ...] = LOOP_SETTINGS) -> dict:
    """Apply ``changes`` (only ``allowed``: :data:`LOOP_SETTINGS` by default) and record who changed what;
    returns {field: [old, new]}."""
    from annotator.models import AuditEvent
    from annotator.services.audit import record_event

    unknown = sorted(set(changes) - set(allowed))
    if unknown:
        raise ProjectError(gettext('these settings cannot be changed here: %(items)s') % {"items": ', '.join(unknown)})
    locked = Project.objects.select_for_update().get(pk=project.pk)
    changed = {name: [getattr(locked, name), value] for name, value in changes.items()
               if getattr(locked, name) != value}
    if not changed:
        return {}
    for name, (_, value) in changed.items():
        setattr(locked, name, value)
        setattr(project, name, value)
    locked.save(update_fields=list(changed))
    record_event(user=user, action=AuditEvent.Action.EDIT, project=locked, obj=locked,
                 detail={"settings": changed})
    return changed
