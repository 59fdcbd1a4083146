"""REST API: traces to replay, and live telemetry from a running fabric."""
import io

from django.conf import settings
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import BaseParser, FormParser, MultiPartParser
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
from .telemetry import batch_of, telemetry_post, unpacked_body

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


class TelemetryBody(BaseParser):
    """A telemetry post's body as it was sent: the view parses it once and the service leaves these
    very bytes (gzip-compressed or not) for the live worker, never encoded again."""

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        return stream.read() if stream is not None else b""


_COUNTER_COLUMN = {"type": "array", "items": {"type": "integer", "minimum": 0}}
TELEMETRY_BODY_SCHEMA = {
    "type": "object",
    "description": "One batch: `columns` (the fast shape for thousands of ports) or `samples` (a list of sample objects, docs/replay.md). "
    "May be gzip-compressed (Content-Encoding: gzip).",
    "properties": {
        "columns": {
            "type": "object",
            "required": ["node", "port", "timestamp"],
            "properties": {
                "node": {"type": "array", "items": {"type": "string"}, "description": "node id of each port"},
                "port": {"type": "array", "items": {"type": "string"}, "description": "port name, as in the fabric's links"},
                "timestamp": {"oneOf": [{"type": "number", "minimum": 0}, {"type": "array", "items": {"type": "number", "minimum": 0}}], "description": "seconds since the epoch, one for all or one per port"},
                "tx_bytes": _COUNTER_COLUMN,
                "rx_bytes": _COUNTER_COLUMN,
                "xmit_wait": _COUNTER_COLUMN,
                "pfc_pauses": _COUNTER_COLUMN,
                "errors": {"type": "object", "additionalProperties": _COUNTER_COLUMN, "description": "counter name -> a count per port"},
            },
        },
        "samples": {"type": "array", "items": {"type": "object"}},
    },
}


class TelemetryApi(APIView):
    """Port-counter samples from a running fabric (shape in docs/replay.md), checked here and
    turned by the live worker into a utilisation/congestion frame on its latest snapshot, pushed
    to everyone viewing it. `columns` is one object of lists (the fast shape for thousands of
    ports), `samples` a list of sample objects; the body may be gzip-compressed
    (`Content-Encoding: gzip`). Newest wins: a batch the worker has not taken yet is replaced by
    the next one, and the answer says so. Scripts authenticate with a token (`manage.py
    api_token USER`)."""

    parser_classes = (TelemetryBody,)

    @extend_schema(
        request={"application/json": TELEMETRY_BODY_SCHEMA},
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
        body = request.data if isinstance(request.data, bytes) else b""  # no body at all: DRF gives {}
        encoding = request.META.get("HTTP_CONTENT_ENCODING", "")
        samples = batch_of(JSONParser().parse(io.BytesIO(unpacked_body(body, encoding))))
        return Response(telemetry_post(fabric=fabric, samples=samples, body=body, encoding=encoding), status=status.HTTP_202_ACCEPTED)
