from __future__ import annotations

from rest_framework import serializers

from annotator.models import Document
from annotator.services.exports import EXPORT_FORMATS
from deid.services.exports import EXPORT_CONCEALMENTS
from deid.services.policy import POLICY_CHOICES


class ExportRequestSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=EXPORT_FORMATS)
    include_evaluation = serializers.BooleanField(default=True)
    conceal = serializers.ChoiceField(choices=EXPORT_CONCEALMENTS, default="none")
    statuses = serializers.MultipleChoiceField(choices=Document.Status.values, required=False)


class DeidentifyRequestSerializer(serializers.Serializer):
    text = serializers.CharField(allow_blank=True, trim_whitespace=False)
    policy = serializers.ChoiceField(choices=POLICY_CHOICES, default="project")
    recall_bias = serializers.FloatField(required=False, allow_null=True, min_value=0.01, max_value=100)


class FoundSpanSerializer(serializers.Serializer):
    start = serializers.IntegerField()
    end = serializers.IntegerField()
    label = serializers.CharField()
    strategy = serializers.CharField()
    confidence = serializers.FloatField(allow_null=True)


class DeidentifyResponseSerializer(serializers.Serializer):
    text = serializers.CharField()
    spans = FoundSpanSerializer(many=True)
    report = serializers.DictField()
