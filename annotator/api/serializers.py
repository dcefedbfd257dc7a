import math

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotator.models import Annotation, Document, ImportJob, Project
from annotator.services.imports import FORMATS, MAX_EVALUATION_SHARE


class ProjectSerializer(serializers.ModelSerializer):
    class Meta:
        model = Project
        fields = [
            "id", "name", "description", "language", "schema_preset", "labels", "allow_overlap", "tagger",
            "strategy", "strategy_params", "batch_size", "self_training", "recall_bias_beta", "recall_bias_betas",
            "deid_tagger", "annotators_per_document", "adjudication", "awaiting_adjudication", "control_rate",
            "created_at",
        ]
        read_only_fields = ["id", "created_at"]


class ProjectCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    schema = serializers.CharField(default="custom")
    labels = serializers.ListField(child=serializers.CharField(max_length=100), required=False)
    language = serializers.CharField(default="es", max_length=16)
    allow_overlap = serializers.BooleanField(default=False)
    description = serializers.CharField(default="", allow_blank=True)


class SharedReadFields:
    """For a serializer that only writes out (the read-only viewsets' records and annotations): its fields are
    built once per class and shared by every instance, in every thread, instead of once per instance.

    A ModelSerializer builds its fields from the model's on every instance, the largest part of serializing one
    record (about 120 of 160 µs here). Writing out only reads the fields (``get_attribute`` and
    ``to_representation``), so they can be shared, as long as none of them reads the serializer's context (a
    request for hyperlinks): no field of these serializers does. Validation, the schema and ``fields`` itself
    are DRF's as usual."""

    @property
    def _readable_fields(self):
        cls = type(self)
        shared = cls.__dict__.get("_shared_readable_fields")
        if shared is None:
            shared = [field for field in cls().fields.values() if not field.write_only]
            cls._shared_readable_fields = shared
        return shared


class DocumentListSerializer(SharedReadFields, serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = ["id", "external_id", "role", "status", "n_tokens", "content_hash", "imported_at"]


class DocumentSerializer(SharedReadFields, serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = ["id", "external_id", "text", "meta", "role", "status", "n_tokens", "content_hash", "imported_at"]


class SpanSerializer(serializers.Serializer):
    start = serializers.IntegerField(min_value=0)
    end = serializers.IntegerField(min_value=0)
    label = serializers.CharField()
    origin = serializers.ChoiceField(choices=["model", "human", "silver"], default="human")


@extend_schema_field(SpanSerializer(many=True))
class StoredSpansField(serializers.Field):
    """Stored spans, read only, as SpanSerializer writes them out, without a serializer per span (a record holds
    dozens, and reading annotations is the API's busiest call)."""

    def __init__(self, **kwargs):
        super().__init__(read_only=True, **kwargs)

    def to_representation(self, spans):
        return [{"start": int(span["start"]), "end": int(span["end"]), "label": str(span["label"]),
                 "origin": span.get("origin", "human")} for span in spans]


class AnnotationSerializer(SharedReadFields, serializers.ModelSerializer):
    spans = StoredSpansField()
    annotator = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Annotation
        fields = [
            "id", "document", "annotator", "source", "spans", "state", "version", "active_seconds",
            "fn_fixes", "fp_fixes", "relabels", "boundary_changes", "created_at", "updated_at", "submitted_at",
        ]


class AnnotationFilterSerializer(serializers.Serializer):
    document = serializers.IntegerField(min_value=1, required=False, allow_null=True)


class ImportRequestSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMATS)
    evaluation = serializers.BooleanField(default=False)
    evaluation_share = serializers.FloatField(
        default=0.0, min_value=0.0, max_value=MAX_EVALUATION_SHARE,
        help_text="The share of the new records set aside at random as the evaluation set, holding every label "
                  "they hold (0.2: a fifth); not with evaluation.",
    )
    unannotated = serializers.BooleanField(
        default=False,
        help_text="The files are texts to annotate, not gold: imported into the pool unannotated (a brat .txt "
                  "may lack its .ann; spans in the files are not imported).",
    )
    files = serializers.ListField(child=serializers.FileField(), allow_empty=False)

    def validate(self, data):
        if data.get("evaluation") and data.get("evaluation_share"):
            raise serializers.ValidationError(
                {"evaluation_share": "every record goes to the evaluation set already (evaluation is true)"})
        return data


class ImportReportSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    annotated = serializers.IntegerField()
    spans = serializers.IntegerField()
    labels_seen = serializers.ListField(child=serializers.CharField())
    evaluation = serializers.IntegerField(help_text="of the records created, those set aside for evaluation")


class AnnotationWriteSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1)
    spans = serializers.ListField(child=serializers.DictField(), allow_empty=True, max_length=100000)
    active_seconds = serializers.FloatField(min_value=0, default=0)

    def validate_spans(self, spans: list[dict]) -> list[dict]:
        """What JSON allows and a span may not hold: offsets that are not whole numbers (1.5 would be cut to
        1), and a confidence of NaN or infinity (which the database's JSON refuses). Labels, bounds and
        overlaps are the annotation service's to check."""
        for index, span in enumerate(spans):
            for name in ("start", "end"):
                value = span.get(name)
                if isinstance(value, float) or isinstance(value, bool):
                    raise serializers.ValidationError(f"span {index}: {name} must be a whole number, not {value!r}")
            confidence = span.get("confidence")
            if confidence is None:
                continue
            try:
                finite = not isinstance(confidence, bool) and math.isfinite(float(confidence))
            except (TypeError, ValueError):
                finite = False
            if not finite:
                raise serializers.ValidationError(
                    f"span {index}: confidence must be a finite number, not {str(confidence)[:40]!r}")
        return spans


class CorrectionsSerializer(serializers.Serializer):
    fn_fixes = serializers.IntegerField()
    fp_fixes = serializers.IntegerField()
    relabels = serializers.IntegerField()
    boundary_changes = serializers.IntegerField()


class ImportJobSerializer(serializers.ModelSerializer):
    status_url = serializers.SerializerMethodField()

    class Meta:
        model = ImportJob
        fields = [
            "id", "status", "format", "evaluation", "unannotated", "filenames", "total_bytes", "done_files",
            "total_files", "report", "error", "created_at", "finished_at", "status_url",
        ]

    def get_status_url(self, job: ImportJob) -> str:
        return self.context["request"].build_absolute_uri(
            reverse("project-import-job", kwargs={"project_id": job.project_id, "job_id": job.pk})
        )
