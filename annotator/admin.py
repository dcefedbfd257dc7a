from django.contrib import admin

from annotator.models import Annotation, AuditEvent, Document, Membership, Project


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "schema_preset", "language", "strategy", "batch_size", "created_at"]
    search_fields = ["name"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["project", "user", "role", "created_at"]
    list_filter = ["role", "project"]
    autocomplete_fields = ["user", "project"]


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "role", "status", "n_tokens", "imported_at"]
    list_filter = ["project", "role", "status"]
    search_fields = ["external_id"]
    readonly_fields = ["text", "content_hash"]  # the text is immutable: annotations point into it


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ["document", "annotator", "source", "state", "version", "submitted_at"]
    list_filter = ["state", "source", "document__project"]
    raw_id_fields = ["document"]


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read-only: the audit log is append-only (the database refuses updates and deletes as well)."""

    list_display = ["created_at", "username", "address", "action", "project_id", "object_type", "object_id"]
    list_filter = ["action", "project"]
    search_fields = ["username", "object_id"]
    date_hierarchy = "created_at"
    readonly_fields = [
        "created_at", "user_id", "username", "address", "action", "project_id", "object_type", "object_id",
        "detail",
    ]
    # The user and project are shown by id: either may have been deleted since (the event keeps the id).
    fields = readonly_fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
