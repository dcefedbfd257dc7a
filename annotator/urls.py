from django.urls import path

from annotator import views

app_name = "annotator"
urlpatterns = [
    path("", views.project_list, name="project-list"),
    path("projects/<int:project_id>/", views.project_detail, name="project-detail"),
    path("projects/<int:project_id>/import/", views.import_upload, name="project-import"),
    path("projects/<int:project_id>/export/", views.export_download, name="project-export"),
    path("projects/<int:project_id>/documents/<int:document_id>/", views.document_detail, name="document-detail"),
    path("projects/<int:project_id>/annotate/", views.annotate_next, name="annotate-next"),
    path("projects/<int:project_id>/annotate/<int:document_id>/", views.annotate, name="annotate"),
]
