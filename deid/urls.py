from django.urls import path

from deid.api import views as api
from deid.views import deidentify, export, planner, policy

app_name = "deid"
urlpatterns = [
    path("projects/<int:project_id>/release-planner/", planner.planner, name="planner"),
    path("projects/<int:project_id>/deid-settings/", policy.policy_settings, name="policy"),
    path("projects/<int:project_id>/export/", export.export_download, name="export"),
    path("projects/<int:project_id>/export/jobs/<str:token>/", export.export_job_page, name="export-job"),
    path("projects/<int:project_id>/export/jobs/<str:token>/download/", export.export_job_download,
         name="export-job-download"),
    path("projects/<int:project_id>/deidentify/", deidentify.deidentify_page, name="deidentify"),
    path("projects/<int:project_id>/deidentify/jobs/<int:job_id>/", deidentify.deidentify_job,
         name="deidentify-job"),
    path("projects/<int:project_id>/deidentify/jobs/<int:job_id>/download/", deidentify.deidentify_download,
         name="deidentify-download"),
    path("api/projects/<int:project_id>/export/", api.ExportView.as_view(), name="api-export"),
    path("api/projects/<int:project_id>/deidentify/", api.DeidentifyView.as_view(), name="api-deidentify"),
]
