"""Websocket routes of the annotator app."""
from django.urls import path

from annotator.consumers import ProjectConsumer

websocket_urlpatterns = [
    path("ws/projects/<int:project_id>/", ProjectConsumer.as_asgi()),
]
