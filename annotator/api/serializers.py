from rest_framework import serializers

from annotator.models import Annotation, Document, Project
from annotator.services.exports import EXPORT_FORMATS
from annotator.services.imports import FORMATS


class ProjectSerializer(serializers.ModelSerializer):
    class Meta:
        model = Project
        fields = [
            "id", "name", "description", "language", "schema_preset", "labels", "allow_overlap", "tagger",
            "strategy", "strategy_params", "batch_size", "self_training", "recall_bias_beta",
            "annotators_per_document", "created_at",
        ]
        read_only_fields = ["id", "created_at"]


class ProjectCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    schema = serializers.CharField(default="custom")
    labels = serializers.ListField(child=serializers.CharField(max_length=100), required=False)
    language = serializers.CharField(default="es", max_length=16)
    allow_overlap = serializers.BooleanField(default=False)
    description = serializers.CharField(default="", allow_blank=True)


class DocumentListSerializer(serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = ["id", "external_id", "role", "status", "n_tokens", "content_hash", "imported_at"]


class DocumentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = ["id", "external_id", "text", "meta", "role", "status", "n_tokens", "content_hash", "imported_at"]


class SpanSerializer(serializers.Serializer):
    start = serializers.IntegerField(min_value=0)
    end = serializers.IntegerField(min_value=0)
    label = serializers.CharField()
    origin = serializers.ChoiceField(choices=["model", "human", "silver"], default="human")


class AnnotationSerializer(serializers.ModelSerializer):
    spans = SpanSerializer(many=True)
    annotator = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Annotation
        fields = [
            "id", "document", "annotator", "source", "spans", "state", "version", "active_seconds",
            "fn_fixes", "fp_fixes", "relabels", "boundary_changes", "created_at", "updated_at", "submitted_at",
        ]


class ImportRequestSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMATS)
    evaluation = serializers.BooleanField(default=False)
    unannotated = serializers.BooleanField(
        default=False,
        help_text="The files are texts to annotate, not gold: imported into the pool unannotated (a brat .txt "
                  "may lack its .ann; spans in the files are not imported).",
    )
    files = serializers.ListField(child=serializers.FileField(), allow_empty=False)


class ImportReportSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    annotated = serializers.IntegerField()
    spans = serializers.IntegerField()
    labels_seen = serializers.ListField(child=serializers.CharField())


class ExportRequestSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=EXPORT_FORMATS)
    include_evaluation = serializers.BooleanField(default=True)


class AnnotationWriteSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1)
    spans = serializers.ListField(child=serializers.DictField(), allow_empty=True, max_length=100000)
    active_seconds = serializers.FloatField(min_value=0, default=0)


class CorrectionsSerializer(serializers.Serializer):
    fn_fixes = serializers.IntegerField()
    fp_fixes = serializers.IntegerField()
    relabels = serializers.IntegerField()
    boundary_changes = serializers.IntegerField()
