"""Projects, their members, documents, annotations, the assignment queue and its ranking, the audit log.

Spans are stored with their annotation as a JSON list of ``{"start", "end", "label", "origin"}`` (character
offsets into the document's immutable text; origin ``model``, ``human`` or ``silver``), so a document's
annotation is read and written in one row.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotator.schemas import CUSTOM, PRESETS


def default_tagger_config() -> dict:
    return {"kind": "crf", "params": {}}


def default_deid_tagger() -> dict:
    return {"kind": "loop"}


class Project(models.Model):
    SCHEMA_CHOICES = [(name, name) for name in PRESETS] + [(CUSTOM, "custom")]

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    language = models.CharField(max_length=16, default="es")
    schema_preset = models.CharField(max_length=32, choices=SCHEMA_CHOICES, default=CUSTOM)
    labels = models.JSONField(default=list, help_text="The PHI types annotators may use, in display order.")
    # How the workbench shows each label: {label: {"colour": "#rrggbb", "key": "1"}}. A label left out takes
    # the colour and digit of its position (annotator.schemas.label_styles).
    label_styles = models.JSONField(default=dict, blank=True, help_text="label -> its colour and shortcut key")
    allow_overlap = models.BooleanField(default=False, help_text="May spans overlap one another?")
    tagger = models.JSONField(default=default_tagger_config)
    strategy = models.CharField(max_length=32, default="LCUB_6")
    strategy_params = models.JSONField(default=dict, blank=True)
    batch_size = models.PositiveIntegerField(default=5)
    self_training = models.BooleanField(default=False)
    self_training_policy = models.JSONField(default=dict, blank=True)
    diverse_batches = models.BooleanField(
        default=False, help_text="spread each batch across stylometric clusters (when the project has them)"
    )
    recall_bias_beta = models.FloatField(null=True, blank=True)
    deid_tagger = models.JSONField(
        default=default_deid_tagger, blank=True,
        help_text='the model that de-identifies new text: {"kind": "loop"} (the loop\'s current model) or '
                  '{"kind": "ensemble", "params": {...}} (learning.models.DeidModel)',
    )
    recall_bias_betas = models.JSONField(
        default=dict, blank=True,
        help_text="PHI type -> its own recall-bias β (0: none for that type); the others take recall_bias_beta",
    )
    annotators_per_document = models.PositiveSmallIntegerField(default=1)

    class Adjudication(models.TextChoices):
        UNANIMOUS = "unanimous", _("Automatically when every annotator marked the same spans")
        MAJORITY = "majority", _("Automatically by majority vote (three annotators or more), else by a person")

    adjudication = models.CharField(
        max_length=16, choices=Adjudication.choices, default=Adjudication.UNANIMOUS,
        help_text="When a record that several people annotated is adjudicated without a person.",
    )

    control_rate = models.FloatField(
        default=0.0, help_text="With one annotator per record, the share of records handed to a second annotator "
                               "as well, so that agreement and each annotator's quality stay known.",
    )

    class Awaiting(models.TextChoices):
        LEFT_OUT = "left_out", _("Left out of training, evaluation and export")
        AGREED = "agreed", _("Used with only the spans every annotator marked")

    awaiting_adjudication = models.CharField(
        max_length=16, choices=Awaiting.choices, default=Awaiting.LEFT_OUT,
        help_text="What a record whose annotators disagree counts for until it is adjudicated.",
    )
    assignment_timeout_minutes = models.PositiveIntegerField(default=60)
    eponyms = models.JSONField(default=list, blank=True)
    gazetteers = models.JSONField(default=dict, blank=True)
    # De-identification (deid): how exported and de-identified text conceals each PHI label.
    conceal_policy = models.JSONField(
        default=dict, blank=True,
        help_text="PHI label -> concealment strategy (keep, pseudo, class, mask, remove); a label left out "
                  "takes its preset's default (pseudo)",
    )
    surrogate_scope = models.CharField(
        max_length=16, choices=[("document", "per document"), ("project", "per project")], default="document",
        help_text="one surrogate per value within each document, or within the whole project",
    )
    age_bucket = models.PositiveSmallIntegerField(
        null=True, blank=True, default=90, help_text="ages of this many years or more become '90+' (empty: keep all)",
    )
    review_confidence = models.FloatField(
        default=0.8, help_text="de-identified spans the model is less sure of than this are listed for review",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        ADMIN = "admin", _("Admin")
        LEAD = "lead", _("Project lead")
        ANNOTATOR = "annotator", _("Annotator")
        ADJUDICATOR = "adjudicator", _("Annotator and adjudicator")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="one_membership_per_user")]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} of {self.project}"


class Document(models.Model):
    class Role(models.TextChoices):
        POOL = "pool", _("Pool")
        EVALUATION = "evaluation", _("Evaluation")

    class Status(models.TextChoices):
        POOL = "pool", _("In the pool")
        ASSIGNED = "assigned", _("Assigned")
        SUBMITTED = "submitted", _("Submitted")
        ADJUDICATED = "adjudicated", _("Adjudicated")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="documents")
    external_id = models.CharField(max_length=500)
    text = models.TextField()
    content_hash = models.CharField(max_length=64)
    meta = models.JSONField(default=dict, blank=True)
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.POOL)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.POOL)
    # Counted when the document is first tokenized for a model or the workbench, not at import.
    n_tokens = models.PositiveIntegerField(null=True, blank=True)
    # How many people this record is for when it differs from the project's "annotators per record": a record
    # drawn for control (Project.control_rate) is annotated twice.
    annotators_wanted = models.PositiveSmallIntegerField(null=True, blank=True)
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "content_hash"], name="one_copy_of_a_text_per_project"),
        ]
        indexes = [models.Index(fields=["project", "role", "status"]), models.Index(fields=["content_hash"])]

    def __str__(self) -> str:
        return self.external_id


class Annotation(models.Model):
    """One person's (or one import's) spans for one document."""

    class State(models.TextChoices):
        DRAFT = "draft", _("Draft")
        SUBMITTED = "submitted", _("Submitted")

    class Source(models.TextChoices):
        HUMAN = "human", _("Annotated here")
        IMPORT = "import", _("Imported")
        ADJUDICATED = "adjudicated", _("Adjudicated")

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="annotations"
    )
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.HUMAN)
    spans = models.JSONField(default=list)
    # What the model suggested when the record was handed out; corrections are counted against it.
    suggested = models.JSONField(default=list, blank=True)
    possible_missed = models.JSONField(default=list, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.DRAFT)
    version = models.PositiveIntegerField(default=1)
    active_seconds = models.FloatField(default=0)
    fn_fixes = models.PositiveIntegerField(default=0, help_text="PHI the model missed, added by the annotator")
    fp_fixes = models.PositiveIntegerField(default=0, help_text="model spans removed by the annotator")
    relabels = models.PositiveIntegerField(default=0)
    boundary_changes = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # An adjudicated annotation (source "adjudicated", nobody's own: annotator is empty): who decided it, or
    # nobody when the submissions agreed and it was adjudicated automatically.
    adjudicated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="adjudications"
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["document", "annotator"], condition=Q(annotator__isnull=False),
                name="one_annotation_per_person_and_document",
            ),
            models.UniqueConstraint(
                fields=["document"], condition=Q(source="adjudicated"), name="one_adjudication_per_document",
            ),
        ]
        indexes = [models.Index(fields=["document", "state"])]

    def __str__(self) -> str:
        return f"{self.document} by {self.annotator or self.source}"


class Assignment(models.Model):
    """A document handed to an annotator; abandoned ones expire and return to the pool."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    assigned_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["document", "annotator"], name="one_assignment_per_person"),
        ]
        indexes = [models.Index(fields=["annotator", "completed_at"])]


class Ranking(models.Model):
    """One scoring of a project's pool; exactly one per project is current and serves "next record"."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="rankings")
    model_version_id = models.BigIntegerField(null=True, blank=True, help_text="learning.ModelVersion id")
    strategy = models.CharField(max_length=32)
    strategy_params = models.JSONField(default=dict, blank=True)
    is_current = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project"], condition=Q(is_current=True), name="one_current_ranking_per_project",
            ),
        ]


class PoolScore(models.Model):
    """A pool document's score under a ranking, with the model's pre-annotation spans and confidences."""

    ranking = models.ForeignKey(Ranking, on_delete=models.CASCADE, related_name="scores")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="pool_scores")
    score = models.FloatField()
    rank = models.PositiveIntegerField()
    # {"spans": [{"start", "end", "label", "confidence"}], "possible_missed": [[start, end, p_phi], ...]}
    pre_annotations = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["ranking", "document"], name="one_score_per_ranking")]
        indexes = [models.Index(fields=["ranking", "rank"])]


class AuditEvent(models.Model):
    """Who did what to which record, from where and when; append-only (the database refuses updates and
    deletes), and kept when the user or project it names is deleted (hence no foreign-key constraints)."""

    class Action(models.TextChoices):
        LOGIN = "login", _("Login")
        LOGIN_FAILED = "login_failed", _("Failed login")
        LOGOUT = "logout", _("Logout")
        VIEW = "view", _("View")
        EDIT = "edit", _("Edit")
        ADJUDICATE = "adjudicate", _("Adjudicate")
        IMPORT = "import", _("Import")
        EXPORT = "export", _("Export")
        DEIDENTIFY = "deidentify", _("De-identify")
        MEMBERSHIP = "membership", _("Membership change")

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False,
        related_name="+",
    )
    # Kept as written: the user may be renamed or deleted later.
    username = models.CharField(max_length=150, blank=True)
    address = models.GenericIPAddressField(null=True, blank=True, help_text="the client's address")
    action = models.CharField(max_length=16, choices=Action.choices)
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+",
    )
    object_type = models.CharField(max_length=64, blank=True)
    object_id = models.CharField(max_length=64, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"])]


class ImportJob(models.Model):
    """An upload too large for a web request, staged on disk and imported by a worker with progress."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Importing")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_jobs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    format = models.CharField(max_length=16)
    evaluation = models.BooleanField(default=False)
    evaluation_share = models.FloatField(
        default=0.0, help_text="the share of the new records set aside at random as the evaluation set",
    )
    unannotated = models.BooleanField(default=False)
    filenames = models.JSONField(default=list, blank=True, help_text="the uploaded files' names, as sent")
    staged_path = models.CharField(max_length=500, blank=True, help_text="the staged upload the worker reads")
    total_bytes = models.BigIntegerField(default=0)
    done_files = models.PositiveIntegerField(default=0)
    total_files = models.PositiveIntegerField(default=0)
    report = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]


class Account(models.Model):
    """What deidloop keeps about a user beyond Django's account: whether they must change their password."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="deidloop_account"
    )
    must_change_password = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"account of {self.user}"


class Session(AbstractBaseSession):
    """A browser's session, with the account signed in to it: a request reads the session and its user in one
    statement, deleting an account ends its sessions, and its sessions are found without decoding every one.
    Stored, read and decoded by the session engine (``SESSION_ENGINE``), which names this model.

    The user is not a constraint of the database: a session stored for an account deleted at the same moment
    must not fail its insert, which Django would retry with a new key for ever. Deleting an account through
    Django deletes its sessions; a session left naming no account is read as anonymous."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="+", db_constraint=False)


class AnnotationRevision(models.Model):
    """One stored state of an annotation — each submission, each return for correction, each fix by a lead —
    with who made it, when and why: a record's version history (append-only, written by the services)."""

    class Kind(models.TextChoices):
        SUBMITTED = "submitted", _("Submitted")
        SENT_BACK = "sent_back", _("Sent back for correction")
        FIXED = "fixed", _("Fixed by a lead")

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="revisions")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="revisions")
    version = models.PositiveIntegerField(help_text="the annotation's version after this change")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    spans = models.JSONField(default=list, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept as written: the user may be renamed or deleted later.
    username = models.CharField(max_length=150, blank=True)
    # A record sent back for correction: to whom, and what the lead asked for.
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["document", "created_at"])]

    def __str__(self) -> str:
        return f"{self.annotation} v{self.version} ({self.kind})"


class StoredArtifact(models.Model):
    """Bytes one process leaves for another (a trained model, say), kept in the database when the deployment's
    artifact store is ``postgres`` (``annotator.artifact_store``), so that workers on other hosts reach them."""

    name = models.CharField(max_length=400, unique=True)
    size = models.BigIntegerField()
    written_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class StoredArtifactChunk(models.Model):
    artifact = models.ForeignKey(StoredArtifact, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["artifact", "index"], name="one_chunk_per_index")]
