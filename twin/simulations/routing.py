from django.urls import path

from .consumers import ReplayConsumer

websocket_urlpatterns = [
    path("ws/replays/<id:run_id>/", ReplayConsumer.as_asgi()),
]
