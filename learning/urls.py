from django.urls import path

from learning.api import agreement as agreement_api, loop as loop_api
from learning.views import agreement, clusters, dashboard, loop, people
from learning.views.new_project import new_project

app_name = "learning"
urlpatterns = [
    path("projects/new/", new_project, name="project-new"),
    path("projects/<int:project_id>/loop/", loop.loop, name="loop"),
    path("projects/<int:project_id>/loop/retrain/", loop.retrain_now, name="retrain"),
    path("projects/<int:project_id>/loop/parameters/", loop.loop_parameters, name="loop-parameters"),
    path("projects/<int:project_id>/deid-model/", loop.deid_model_train, name="deid-model-train"),
    path("projects/<int:project_id>/dashboard/", dashboard.dashboard, name="dashboard"),
    path("projects/<int:project_id>/models/<int:version_id>/", dashboard.model_version, name="model-version"),
    path("projects/<int:project_id>/simulations/", dashboard.start_simulation, name="simulation-start"),
    path("projects/<int:project_id>/simulations/<int:run_id>/", dashboard.simulation, name="simulation"),
    path("projects/<int:project_id>/people/", people.people, name="people"),
    path("projects/<int:project_id>/clusters/", clusters.clusters, name="clusters"),
    path("projects/<int:project_id>/agreement/", agreement.agreement, name="agreement"),
    path("api/projects/<int:project_id>/loop/", loop_api.LoopStateView.as_view(), name="api-loop"),
    path("api/projects/<int:project_id>/retrain/", loop_api.RetrainView.as_view(), name="api-retrain"),
    path("api/projects/<int:project_id>/deid-model/", loop_api.DeidModelView.as_view(), name="api-deid-model"),
    path("api/projects/<int:project_id>/retrains/<int:job_id>/", loop_api.RetrainJobView.as_view(), name="api-job"),
    path("api/projects/<int:project_id>/agreement/", agreement_api.AgreementView.as_view(), name="api-agreement"),
]
