"""Websocket routes of every app."""
from annotator.routing import websocket_urlpatterns as annotator_websockets

websocket_urlpatterns: list = [*annotator_websockets]
