from django.urls import path

from learning import api, cluster_views, dashboard_views, people_views, views

app_name = "learning"
urlpatterns = [
    path("projects/<int:project_id>/loop/", views.loop, name="loop"),
    path("projects/<int:project_id>/loop/retrain/", views.retrain_now, name="retrain"),
    path("projects/<int:project_id>/dashboard/", dashboard_views.dashboard, name="dashboard"),
    path("projects/<int:project_id>/models/<int:version_id>/", dashboard_views.model_version, name="model-version"),
    path("projects/<int:project_id>/simulations/", dashboard_views.start_simulation, name="simulation-start"),
    path("projects/<int:project_id>/simulations/<int:run_id>/", dashboard_views.simulation, name="simulation"),
    path("projects/<int:project_id>/people/", people_views.people, name="people"),
    path("projects/<int:project_id>/clusters/", cluster_views.clusters, name="clusters"),
    path("api/projects/<int:project_id>/loop/", api.LoopStateView.as_view(), name="api-loop"),
    path("api/projects/<int:project_id>/retrain/", api.RetrainView.as_view(), name="api-retrain"),
    path("api/projects/<int:project_id>/retrains/<int:job_id>/", api.RetrainJobView.as_view(), name="api-job"),
]
