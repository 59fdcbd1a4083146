"""REST API: traces to replay, and live telemetry from a running fabric."""
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from twin.common.api import JSONParser
from twin.fabrics.access import VisibleFabricField
from twin.fabrics.models import Fabric
from twin.fabrics.services import source_files_from_uploads

from .models import TraceFile
from .replays import trace_file_create
from .telemetry import telemetry_ingest

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
    """Port-counter samples from a running fabric (shape in docs/replay.md): turned into a
    utilisation/congestion frame on its latest snapshot and pushed to everyone viewing it.
    `samples` is a list of sample objects, or `columns` one object of lists (the fast shape
    for thousands of ports). Scripts authenticate with a token (`manage.py api_token USER`)."""

    parser_classes = (JSONParser,)

    @extend_schema(
        request={"application/json": {"type": "object", "properties": {"samples": {"type": "array", "items": {"type": "object"}}, "columns": {"type": "object"}}}},
        responses={202: OpenApiResponse(description="{seq, links, telemetry: {samples, unknown_ports}}")},
    )
    def post(self, request, pk: int):
        fabric = get_object_or_404(Fabric, pk=pk)
        body = request.data if isinstance(request.data, dict) else {}
        samples = body.get("columns") if isinstance(body.get("columns"), dict) else body.get("samples")
        if not isinstance(samples, list | dict):
            raise serializers.ValidationError({"samples": "Expected a list of samples, or columns: an object of lists."})
        frame = telemetry_ingest(fabric=fabric, samples=samples)
        return Response({"seq": frame["seq"], "links": frame["links"], "telemetry": frame.get("telemetry", {})}, status=status.HTTP_202_ACCEPTED)
