from django.urls import path

from learning import api, views

app_name = "learning"
urlpatterns = [
    path("projects/<int:project_id>/loop/", views.loop, name="loop"),
    path("projects/<int:project_id>/loop/retrain/", views.retrain_now, name="retrain"),
    path("api/projects/<int:project_id>/loop/", api.LoopStateView.as_view(), name="api-loop"),
    path("api/projects/<int:project_id>/retrain/", api.RetrainView.as_view(), name="api-retrain"),
    path("api/projects/<int:project_id>/retrains/<int:job_id>/", api.RetrainJobView.as_view(), name="api-job"),
]
