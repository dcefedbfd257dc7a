"""Trained models of a project and their measured quality (one point of the learning curve each)."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class ModelVersion(models.Model):
    class Status(models.TextChoices):
        TRAINING = "training", _("Training")
        READY = "ready", _("Ready")
        FAILED = "failed", _("Failed")

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="model_versions")
    tagger_kind = models.CharField(max_length=32)
    tagger_params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.TRAINING)
    is_current = models.BooleanField(default=False)
    gold_document_ids = models.JSONField(default=list, blank=True)
    silver_sentences = models.PositiveIntegerField(default=0)
    n_documents = models.PositiveIntegerField(default=0)
    n_tokens = models.PositiveIntegerField(default=0)
    annotator_hours = models.FloatField(default=0)
    metrics = models.JSONField(default=dict, blank=True)
    artifact = models.CharField(max_length=500, blank=True, help_text="path of the saved tagger")
    train_seconds = models.FloatField(null=True, blank=True)
    scoring_seconds = models.FloatField(null=True, blank=True)
    pool_size = models.PositiveIntegerField(default=0)
    choices = models.JSONField(
        default=dict, blank=True,
        help_text="what this version used: strategy and parameters, recall-bias thresholds, self-training, costs",
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["project"], condition=Q(is_current=True), name="one_current_model_per_project",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project} {self.tagger_kind} #{self.pk}"


class _JobsWithoutEvaluationSpans(models.Manager):
    """Jobs read without their ``evaluation_spans`` (a long JSON, read only to compare the next model with the
    job's): ``values_list("evaluation_spans")`` asks for them."""

    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().defer("evaluation_spans")


class RetrainJob(models.Model):
    """One run of the loop for a project: train; evaluate and score the pool in shards; publish.

    At most one job per project is active (queued, training or scoring) — the database refuses a second.
    A job is worked on by one attempt at a time: the worker process that claimed it (``owner``) keeps its
    lease fresh; an attempt whose process died, or whose lease ran out, is taken over by a new attempt
    that resumes from what was saved (the trained model, the shards already scored). Messages of an
    older attempt find the attempt number changed and do nothing, so a job publishes exactly once.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        TRAINING = "training", _("Training")
        SCORING = "scoring", _("Scoring the pool")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    ACTIVE = (Status.QUEUED, Status.TRAINING, Status.SCORING)

    class Reason(models.TextChoices):
        BATCH = "batch", _("A batch of submissions")
        LEAD = "lead", _("Asked for by a lead")
        FOLLOW_UP = "follow-up", "Asked for during the previous retrain"
        COMMAND = "command", _("Started from the command line")

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="retrain_jobs")
    reason = models.CharField(max_length=16, choices=Reason.choices)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    attempt = models.PositiveIntegerField(default=0)
    owner = models.CharField(max_length=200, blank=True, help_text="host:pid of the process working on it")
    lease_until = models.DateTimeField(null=True, blank=True)
    submissions_at_request = models.PositiveIntegerField(
        default=0, help_text="submitted pool annotations when the job was asked for"
    )
    follow_up = models.BooleanField(default=False, help_text="queue another retrain when this one ends")
    artifact = models.CharField(max_length=500, blank=True)
    result = models.JSONField(default=dict, blank=True, help_text="what training measured and chose")
    evaluation_spans = models.JSONField(
        default=dict, blank=True,
        help_text="the spans the job's model predicted on each evaluation document, by the hash of its text",
    )
    ranking_id = models.BigIntegerField(null=True, blank=True, help_text="the staged annotator.Ranking")
    pool_size = models.PositiveIntegerField(default=0)
    shards = models.PositiveIntegerField(default=0)
    model_version = models.OneToOneField(
        ModelVersion, null=True, blank=True, on_delete=models.SET_NULL, related_name="job"
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    trained_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = _JobsWithoutEvaluationSpans()

    class Meta:
        ordering = ["project", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["project"], condition=Q(status__in=["queued", "training", "scoring"]),
                name="one_active_retrain_per_project",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project} retrain #{self.pk} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE


class SilverSentence(models.Model):
    """A machine-labelled sentence of a pool document that self-training added to the training data.

    Kept apart from human gold (never an Annotation, so never exported); replaced at every retrain.
    """

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="silver_sentences")
    document = models.ForeignKey("annotator.Document", on_delete=models.CASCADE, related_name="silver_sentences")
    model_version = models.ForeignKey(ModelVersion, on_delete=models.CASCADE, related_name="silver")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    spans = models.JSONField(default=list, help_text="[{start, end, label}] in document offsets")

    class Meta:
        ordering = ["document", "start"]


class RunStatus(models.TextChoices):
    """The states of a background computation a lead starts (a simulation, a clustering)."""

    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


class SimulationRun(models.Model):
    """A replay of active learning on the project's own annotated documents (ALGORITHMS.md §1, §5):
    strategies × batch sizes × runs, run by a worker, its curves overlaid on the project's live curve."""

    Status = RunStatus

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="simulations")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    strategies = models.JSONField(default=list)
    batch_sizes = models.JSONField(default=list)
    initial = models.PositiveIntegerField(default=10)
    iterations = models.PositiveIntegerField(default=10)
    runs = models.PositiveIntegerField(default=3)
    seed = models.IntegerField(default=0)
    tagger = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.JSONField(default=dict, blank=True, help_text="{done, total, text}")
    results = models.JSONField(default=dict, blank=True, help_text="per batch size: the core simulate() result")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["project", "-created_at"]

    def __str__(self) -> str:
        return f"{self.project} simulation #{self.pk} ({self.status})"


class Clustering(models.Model):
    """Stylometric clusters of a project's documents (ALGORITHMS.md §8); the newest one is used."""

    Status = RunStatus

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="clusterings")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    k = models.PositiveIntegerField(default=0)
    dunn = models.JSONField(default=dict, blank=True, help_text="Dunn index per number of clusters tried")
    kept_features = models.JSONField(default=list, blank=True)
    feature_names = models.JSONField(default=list, blank=True)
    cluster_means = models.JSONField(default=list, blank=True)
    labels = models.JSONField(default=dict, blank=True, help_text="{document id: cluster}")
    model_scores = models.JSONField(
        default=dict, blank=True,
        help_text="the current model on each cluster's evaluation documents, computed when the clustering "
                  "finished or the model was published: {model_version, clusters: {label: {documents, p, r, f1, "
                  "support}}, error}",
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["project", "-created_at"]


class DeidModel(models.Model):
    """A tagger trained on all of a project's gold for de-identifying new text, beside the loop's model: the
    ensemble of the CRF and the BiLSTM-CRF (``learning.core.taggers.ensemble``), too slow to retrain at every
    batch but leaking less. The newest finished one is the project's."""

    Status = RunStatus

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="deid_models")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    tagger_kind = models.CharField(max_length=32, default="ensemble")
    tagger_params = models.JSONField(default=dict, blank=True)
    gold_document_ids = models.JSONField(default=list, blank=True)
    n_documents = models.PositiveIntegerField(default=0)
    metrics = models.JSONField(default=dict, blank=True, help_text="on the evaluation documents")
    choices = models.JSONField(default=dict, blank=True, help_text="the recall-bias thresholds, as a model version's")
    artifact = models.CharField(max_length=500, blank=True)
    train_seconds = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["project", "-created_at"]

    def __str__(self) -> str:
        return f"{self.project} de-identification model #{self.pk} ({self.status})"


class StoredFeatures(models.Model):
    """A document's token features as every worker process and host reads them
    (``learning.services.feature_store``): tokenized and featurized once, by the first process that needed
    them, and deleted with the document. ``content_hash`` is the document's, so that documents of the same
    text (in other projects) are read from any of them."""

    document = models.OneToOneField("annotator.Document", on_delete=models.CASCADE, primary_key=True,
                                    related_name="+")
    content_hash = models.CharField(max_length=64, db_index=True)
    data = models.BinaryField()


class StoredVocabulary(models.Model):
    """What a worker process learnt of a project's documents' features, its ids included
    (``learning.core.features.FeatureExtractor.vocabulary_snapshot``): the token forms with their attributes,
    the bigrams, every attribute string. A process that starts on the project adopts it before reading any
    document's features, instead of working the forms out again one by one. One per project and feature
    configuration (``extractor_key``), replaced only by one that knows more forms (``forms``), deleted with
    the project."""

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="+")
    extractor_key = models.CharField(max_length=200)
    forms = models.PositiveIntegerField()
    data = models.BinaryField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "extractor_key"], name="one_vocabulary_per_extractor"),
        ]
