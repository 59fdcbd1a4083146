"""ASGI entry point: HTTP goes to Django, websockets through origin and session checks."""
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")
django_asgi_app = get_asgi_application()  # set Django up before importing consumers

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from twin.fabrics.routing import websocket_urlpatterns as fabric_websockets  # noqa: E402
from twin.runs.routing import websocket_urlpatterns as run_websockets  # noqa: E402
from twin.simulations.routing import websocket_urlpatterns as replay_websockets  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(fabric_websockets + run_websockets + replay_websockets))),
    }
)
