from django.urls import path

from deid.views import planner

app_name = "deid"
urlpatterns = [
    path("projects/<int:project_id>/release-planner/", planner.planner, name="planner"),
]
