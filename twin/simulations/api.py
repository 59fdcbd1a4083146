"""REST API: traces to replay, and live telemetry from a running fabric."""
from django.conf import settings
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from twin.common.api import JSONParser
from twin.common.errors import PayloadTooLarge
from twin.common.params import id_from_text
from twin.fabrics.access import VisibleFabricField
from twin.fabrics.models import Fabric
from twin.fabrics.services import source_files_from_uploads

from .models import TraceFile
from .replays import trace_file_create
from .telemetry import telemetry_post

__all__ = ("TraceUploadApi", "TelemetryApi")


class TraceFileSerializer(serializers.ModelSerializer):
    class Meta:
        model = TraceFile
        fields = ("id", "fabric", "name", "format", "ranks", "events", "created_at")


class TraceUploadSerializer(serializers.Serializer):
    fabric = VisibleFabricField()
    file = serializers.FileField(allow_empty_file=True, help_text="Our trace format (JSON lines or CSV), an NCCL debug log, or nccl-tests output")


class TraceUploadApi(APIView):
    """Upload a traffic trace to replay on a fabric (checked now; 400 names file and line)."""

    parser_classes = (MultiPartParser, FormParser)

    @extend_schema(request=TraceUploadSerializer, responses={201: TraceFileSerializer})
    def post(self, request):
        given = TraceUploadSerializer(data=request.data, context={"request": request})
        given.is_valid(raise_exception=True)
        source = source_files_from_uploads([given.validated_data["file"]])[0]
        trace = trace_file_create(fabric=given.validated_data["fabric"], source=source, user=request.user)
        return Response(TraceFileSerializer(trace).data, status=status.HTTP_201_CREATED)


class TelemetryApi(APIView):
    """Port-counter samples from a running fabric (shape in docs/replay.md), checked here and
    turned by the live worker into a utilisation/congestion frame on its latest snapshot, pushed
    to everyone viewing it. `samples` is a list of sample objects, or `columns` one object of
    lists (the fast shape for thousands of ports). Newest wins: a batch the worker has not taken
    yet is replaced by the next one, and the answer says so. Scripts authenticate with a token
    (`manage.py api_token USER`)."""

    parser_classes = (JSONParser,)

    @extend_schema(
        request={"application/json": {"type": "object", "properties": {"samples": {"type": "array", "items": {"type": "object"}}, "columns": {"type": "object"}}}},
        responses={202: OpenApiResponse(description="{batch, superseded: the untaken batch this one replaced or null, superseded_total}; frames carry `batch`")},
    )
    def post(self, request, pk: int):
        fabric = get_object_or_404(Fabric, pk=pk)
        declared = id_from_text(request.META.get("CONTENT_LENGTH")) or 0  # not a number: Django reads no body
        if declared > settings.TWIN_TELEMETRY_MAX_BYTES:
            raise PayloadTooLarge(
                _("A telemetry post may be at most %(limit)s bytes (TWIN_TELEMETRY_MAX_BYTES); this one declares %(size)s. Post the ports in several batches.")
                % {"limit": settings.TWIN_TELEMETRY_MAX_BYTES, "size": declared}
            )
        body = request.data if isinstance(request.data, dict) else {}
        samples = body.get("columns") if isinstance(body.get("columns"), dict) else body.get("samples")
        if not isinstance(samples, list | dict):
            raise serializers.ValidationError({"samples": "Expected a list of samples, or columns: an object of lists."})
        return Response(telemetry_post(fabric=fabric, samples=samples), status=status.HTTP_202_ACCEPTED)
