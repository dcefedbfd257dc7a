from django.urls import path

from annotator.views import adjudication, audit, imports, labels, members, projects, records

app_name = "annotator"
urlpatterns = [
    path("", projects.project_list, name="project-list"),
    path("projects/<int:project_id>/", projects.project_detail, name="project-detail"),
    path("projects/<int:project_id>/import/", imports.import_upload, name="project-import"),
    path("projects/<int:project_id>/import/preview/<str:token>/", imports.import_preview_page,
         name="project-import-preview"),
    path("projects/<int:project_id>/labels/", labels.labels_page, name="project-labels"),
    path("projects/<int:project_id>/imports/<int:job_id>/", imports.import_job, name="project-import-job"),
    path("projects/<int:project_id>/documents/<int:document_id>/", projects.document_detail, name="document-detail"),
    path("projects/<int:project_id>/records/<int:document_id>/", records.record_review_page, name="record-review"),
    path("projects/<int:project_id>/records/<int:document_id>/send-back/", records.record_send_back,
         name="record-send-back"),
    path("projects/<int:project_id>/records/<int:document_id>/fix/", records.record_fix, name="record-fix"),
    path("projects/<int:project_id>/annotate/", projects.annotate_next, name="annotate-next"),
    path("projects/<int:project_id>/annotate/<int:document_id>/", projects.annotate, name="annotate"),
    path("projects/<int:project_id>/adjudication/", adjudication.adjudication_queue_page, name="adjudication-queue"),
    path("projects/<int:project_id>/adjudication/<int:document_id>/", adjudication.adjudicate, name="adjudicate"),
    path("projects/<int:project_id>/members/", members.members, name="members"),
    path("projects/<int:project_id>/members/new/", members.member_create, name="member-create"),
    path("projects/<int:project_id>/members/<int:user_id>/", members.member_change, name="member-change"),
    path("users/", members.users, name="users"),
    path("users/<int:user_id>/active/", members.user_active, name="user-active"),
    path("users/<int:user_id>/password/", members.user_password, name="user-password"),
    path("invitation/<str:uidb64>/<str:token>/", members.invitation, name="invitation"),
    path("projects/<int:project_id>/audit/", audit.audit_log, name="audit"),
    path("projects/<int:project_id>/audit.csv", audit.audit_csv, name="audit-csv"),
]
