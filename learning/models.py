"""Trained models of a project and their measured quality (one point of the learning curve each)."""
from __future__ import annotations

from django.db import models
from django.db.models import Q


class ModelVersion(models.Model):
    class Status(models.TextChoices):
        TRAINING = "training", "Training"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

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
