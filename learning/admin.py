from django.contrib import admin

from learning.models import ModelVersion


@admin.register(ModelVersion)
class ModelVersionAdmin(admin.ModelAdmin):
    list_display = ["project", "tagger_kind", "status", "is_current", "n_documents", "created_at"]
    list_filter = ["project", "status", "tagger_kind"]
