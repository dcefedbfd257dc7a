from django.urls import include, path
from rest_framework.routers import DefaultRouter

from annotator.api import adjudication, imports, views

router = DefaultRouter()
router.register("projects", views.ProjectViewSet, basename="project")

project_router = DefaultRouter()
# Its root (api/projects/<id>/) is the project's detail; only the suffixed root would answer, for any id.
project_router.include_root_view = False
project_router.register("documents", views.DocumentViewSet, basename="project-document")
project_router.register("annotations", views.AnnotationViewSet, basename="project-annotation")

urlpatterns = [
    path("", include(router.urls)),
    path("projects/<int:project_id>/", include(project_router.urls)),
    path("projects/<int:project_id>/import/", imports.ImportView.as_view(), name="project-import"),
    path("projects/<int:project_id>/imports/<int:job_id>/", imports.ImportJobView.as_view(), name="project-import-job"),
    path("projects/<int:project_id>/next/", views.NextRecordView.as_view(), name="project-next"),
    path("projects/<int:project_id>/adjudication/", adjudication.AdjudicationQueueView.as_view(),
         name="project-adjudication-queue"),
    path("projects/<int:project_id>/adjudication/<int:document_id>/", adjudication.AdjudicationView.as_view(),
         name="project-adjudication"),
    path("annotations/<int:annotation_id>/", views.WorkbenchAnnotationView.as_view(), name="annotation-workbench"),
    path("annotations/<int:annotation_id>/draft/", views.DraftView.as_view(), name="annotation-draft"),
    path("annotations/<int:annotation_id>/submit/", views.SubmitView.as_view(), name="annotation-submit"),
]
