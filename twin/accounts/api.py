"""REST API for the settings a user keeps (GET and PUT their own; any signed-in role)."""
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from .models import PREFERENCE_KEYS
from .permissions import SignedInPermission
from .services import preference_get, preference_set

__all__ = ("PreferenceApi",)


class PreferenceSerializer(serializers.Serializer):
    value = serializers.DictField(help_text="A JSON object; the workspace layout's shape is in docs/workspace.md")


class PreferenceApi(APIView):
    """One setting of the signed-in user, e.g. `workspace` (the fabric page's panels and dock sizes)."""

    permission_classes = (SignedInPermission,)

    def known_key(self, key: str) -> str:
        if key not in PREFERENCE_KEYS:
            raise NotFound(gettext("No preference %(key)s; known: %(known)s.") % {"key": repr(key), "known": gettext(", ").join(PREFERENCE_KEYS)})
        return key

    @extend_schema(responses={200: PreferenceSerializer})
    def get(self, request, key: str):
        return Response({"value": preference_get(user=request.user, key=self.known_key(key))})

    @extend_schema(request=PreferenceSerializer, responses={200: PreferenceSerializer})
    def put(self, request, key: str):
        given = PreferenceSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        return Response({"value": preference_set(user=request.user, key=self.known_key(key), value=given.validated_data["value"])})
