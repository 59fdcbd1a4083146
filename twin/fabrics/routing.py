from django.urls import path

from .consumers import FabricConsumer

websocket_urlpatterns = [
    path("ws/fabrics/<id:fabric_id>/", FabricConsumer.as_asgi()),
]
