from django.urls import path

from deid import views

app_name = "deid"
urlpatterns = [
    path("projects/<int:project_id>/release-planner/", views.planner, name="planner"),
]
