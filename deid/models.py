"""De-identification runs too large for a web request: read, de-identified and written by a worker."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class DeidJob(models.Model):
    """Text or files to de-identify, staged under ``DATA_DIR/deid/job-ID/input``; the worker writes the result
    under ``output`` (and ``result.zip``, what the lead downloads)."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("De-identifying")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="deid_jobs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    policy = models.CharField(max_length=16, default="project")
    recall_bias = models.FloatField(null=True, blank=True)
    filenames = models.JSONField(default=list, blank=True, help_text="the uploaded files' names, as sent")
    total_bytes = models.BigIntegerField(default=0)
    done_bytes = models.BigIntegerField(default=0)
    done_documents = models.PositiveIntegerField(default=0)
    report = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.done_bytes / self.total_bytes)) if self.total_bytes else 0
