"""REST API for fabrics and snapshots."""
import gzip
import re

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.cache import patch_vary_headers
from django.utils.decorators import method_decorator
from django.utils import translation
from django.views.decorators.http import etag
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.exceptions import NotFound
from rest_framework.views import APIView

from twin.common.errors import core_error_text
from twin.ingest import ParseOptions, registered_parsers
from twin.ingest.options import SCALE_UP_RULES, pattern_problem
from twin.simcore.diff import punch_list_csv
from twin.simcore.paths import NoPath, hop_path
from twin.simcore.model import MAX_LINK_GBPS

from .exports import EXPORT_FORMATS, snapshot_export
from .models import Fabric, Snapshot, SnapshotLayout, SnapshotRole
from .selectors import fabric_list, node_detail, snapshot_diff, snapshot_search, snapshot_spec_get
from .services import snapshot_import, snapshot_layout_get_or_create, source_files_from_uploads

__all__ = (
    "FabricListApi", "FabricDetailApi", "FabricSnapshotListApi", "SnapshotUploadApi", "SnapshotDetailApi",
    "SnapshotExportApi", "SnapshotDiffApi", "SnapshotLayoutApi", "SnapshotSearchApi",
    "SnapshotNodeApi", "SnapshotPathApi",
)


class SnapshotSerializer(serializers.ModelSerializer):
    fabric_name = serializers.CharField(source="fabric.name", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True, default=None, allow_null=True)
    summary = serializers.SerializerMethodField(help_text="Counts by kind, speed and state, and warnings (in the request's language)")

    class Meta:
        model = Snapshot
        fields = (
            "id", "fabric", "fabric_name", "version", "role", "source_name", "source_format", "checksum",
            "node_count", "card_count", "switch_count", "link_count", "summary", "created_by", "created_at",
        )


    def get_summary(self, snapshot: Snapshot) -> dict:
        return snapshot.summary_text()


class FabricSerializer(serializers.ModelSerializer):
    latest_snapshot = serializers.SerializerMethodField()
    snapshot_count = serializers.SerializerMethodField()

    class Meta:
        model = Fabric
        fields = ("id", "name", "description", "created_at", "snapshot_count", "latest_snapshot")

    @extend_schema_field(SnapshotSerializer(allow_null=True))
    def get_latest_snapshot(self, fabric: Fabric):
        discovered = [s for s in fabric.snapshots.all() if s.role == SnapshotRole.DISCOVERED]
        return SnapshotSerializer(max(discovered, key=lambda s: s.version)).data if discovered else None

    def get_snapshot_count(self, fabric: Fabric) -> int:
        return len(fabric.snapshots.all())


class FabricListApi(generics.ListAPIView):
    """Fabrics with their latest snapshot."""

    serializer_class = FabricSerializer

    def get_queryset(self):
        return fabric_list(self.request.user)


class FabricDetailApi(generics.RetrieveAPIView):
    serializer_class = FabricSerializer

    def get_queryset(self):
        return fabric_list(self.request.user)


class SnapshotUploadSerializer(serializers.Serializer):
    file = serializers.ListField(
        child=serializers.FileField(allow_empty_file=True), allow_empty=False,
        help_text="One or more topology files describing one fabric (repeat the field); several files are merged. "
        ".tar, .tar.gz and .zip archives of per-node files are unpacked, each member read as a file named <archive>/<member path> (docs/formats/archives.md)",
    )
    fabric = serializers.CharField(max_length=200, required=False, allow_blank=True, help_text="Fabric name; defaults to the name in the file")
    format = serializers.CharField(required=False, allow_blank=True, help_text="Parser name for every file; detected from each file's content when empty")
    role = serializers.ChoiceField(SnapshotRole.choices, default=SnapshotRole.DISCOVERED, help_text="'plan' for a cabling plan to check discoveries against")
    default_bandwidth_gbps = serializers.FloatField(required=False, min_value=0.001, max_value=MAX_LINK_GBPS, help_text="Link bandwidth for formats that carry none (Slurm, nvidia-smi: per NVLink)")
    default_latency_ns = serializers.FloatField(required=False, min_value=0, max_value=1e9, help_text="Link latency for formats that carry none")
    non_compute_hca_pattern = serializers.CharField(
        required=False, allow_blank=True, max_length=500,
        help_text="Where no file names the GPUs, each HCA stands for one card, except those whose host name or description matches this regular expression (default: storage and management names; empty: every HCA)",
    )
    compute_hcas_per_host = serializers.IntegerField(required=False, min_value=1, max_value=64, help_text="Only the first N HCAs of each host (in name order) stand for cards")
    scale_up = serializers.ChoiceField(SCALE_UP_RULES, required=False, help_text="auto (default): add the NVSwitch a hint file leaves out; none: leave hosts as the files say")
    nvlink_gbps = serializers.FloatField(required=False, min_value=1, max_value=MAX_LINK_GBPS, help_text="NVLink bandwidth per GPU for the completed scale-up (default: by GPU generation)")

    def validate_non_compute_hca_pattern(self, value: str) -> str:
        problem = pattern_problem(value)
        if problem:
            raise serializers.ValidationError(problem.render(translation))
        return value

    def validate_format(self, value: str) -> str:
        known = [parser.name for parser in registered_parsers()]
        if value and value not in known:
            raise serializers.ValidationError(translation.gettext("Unknown format %(format)s; known: %(known)s.") % {"format": repr(value), "known": translation.gettext(", ").join(known)})
        return value


class SnapshotUploadApi(APIView):
    """Upload topology files; they become the next snapshot of their fabric (or nothing is written)."""

    parser_classes = (MultiPartParser, FormParser)

    @extend_schema(request=SnapshotUploadSerializer, responses={201: SnapshotSerializer, 400: OpenApiResponse(description="Invalid files: for each file, its problems with line and what was expected")})
    def post(self, request):
        upload = SnapshotUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        given = upload.validated_data
        snapshot = snapshot_import(
            fabric_name=given.get("fabric", ""),
            files=source_files_from_uploads(given["file"]),
            fmt=given.get("format") or None,
            options=ParseOptions.from_values(given),
            role=SnapshotRole(given["role"]),
            user=request.user,
        )
        return Response(SnapshotSerializer(snapshot).data, status=status.HTTP_201_CREATED)


class SnapshotDetailApi(generics.RetrieveAPIView):
    serializer_class = SnapshotSerializer
    queryset = Snapshot.objects.select_related("fabric", "created_by")


class FabricSnapshotListApi(generics.ListAPIView):
    """The snapshots (discovered and plans) of one fabric, newest first."""

    serializer_class = SnapshotSerializer

    def get_queryset(self):
        fabric = get_object_or_404(Fabric, pk=self.kwargs["pk"])
        return fabric.snapshots.select_related("fabric", "created_by").order_by("-version")


class SnapshotExportApi(APIView):
    """The snapshot as canonical twin-fabric JSON (re-importable as is), GraphML or ibnetdiscover
    output (re-importable as InfiniBand discovery: cards read back as HCAs)."""

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=list(EXPORT_FORMATS), description="json (default), graphml or ibnetdiscover")],
        responses={(200, "application/json"): OpenApiResponse(description="twin-fabric JSON, GraphML or ibnetdiscover text")},
    )
    def get(self, request, pk: int):
        wanted = request.query_params.get("format", "json")
        if wanted not in EXPORT_FORMATS:
            raise serializers.ValidationError({"format": translation.gettext("Unknown export format %(format)s; known: %(known)s.") % {
                "format": repr(wanted), "known": translation.gettext(", ").join(EXPORT_FORMATS),
            }})  # fmt: skip
        content_type, suffix, _ = EXPORT_FORMATS[wanted]
        snapshot = get_object_or_404(Snapshot.objects.select_related("fabric"), pk=pk)
        response = HttpResponse(snapshot_export(snapshot_id=snapshot.pk, fmt=wanted), content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{snapshot.fabric.name}-v{snapshot.version}.{suffix}"'
        return response


class SnapshotDiffApi(APIView):
    """What differs between two snapshots of a fabric, or between a plan and a discovery:
    MISSING, EXTRA, MISWIRED, SWAPPED, DEGRADED and UNKNOWN_DEVICE findings.
    `?format=csv` gives the punch list grouped by switch."""

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["json", "csv"], description="json (default) or csv (punch list)")],
        responses={200: OpenApiResponse(description="the diff report")},
    )
    def get(self, request, pk: int, other: int):
        expected = get_object_or_404(Snapshot.objects.select_related("fabric"), pk=pk)
        found = get_object_or_404(Snapshot.objects.select_related("fabric"), pk=other)
        report = snapshot_diff(expected=expected, found=found)
        if request.query_params.get("format") == "csv":
            response = HttpResponse(punch_list_csv(report, translation), content_type="text/csv")
            response["Content-Disposition"] = f'attachment; filename="{expected.fabric.name}-v{expected.version}-vs-v{found.version}-punch-list.csv"'
            return response
        return Response({**report.as_plain(translation), "expected_snapshot": SnapshotSerializer(expected).data, "found_snapshot": SnapshotSerializer(found).data})


ACCEPTS_GZIP = re.compile(r"\bgzip\b")


def stored_layout_etag(request, pk: int) -> str | None:
    return SnapshotLayout.objects.filter(snapshot_id=pk).values_list("etag", flat=True).first()


class SnapshotLayoutApi(APIView):
    """The map layout of a snapshot (tier rows, groups for level of detail, columnar arrays), as
    stored when the snapshot was: gzipped for clients that take it, with an ETag, so that a page
    that has it already gets a 304 (the layout of a snapshot never changes)."""

    @extend_schema(responses={200: OpenApiResponse(description="layout: bounds, groups, nodes, links, group_links (see docs/map.md)"), 304: OpenApiResponse(description="If-None-Match names the stored layout")})
    @method_decorator(etag(stored_layout_etag))
    def get(self, request, pk: int):
        layout = snapshot_layout_get_or_create(snapshot_id=pk)
        if layout is None:
            raise Http404
        body = bytes(layout.gzip_json)
        if ACCEPTS_GZIP.search(request.META.get("HTTP_ACCEPT_ENCODING", "")):
            response = HttpResponse(body, content_type="application/json")
            response["Content-Encoding"] = "gzip"
        else:
            response = HttpResponse(gzip.decompress(body), content_type="application/json")
        response["ETag"] = f'"{layout.etag}"'  # the first view computed it: no ETag was known before
        response["Cache-Control"] = "private, no-cache"  # the browser keeps it and asks with If-None-Match
        patch_vary_headers(response, ("Accept-Encoding",))
        return response


class SnapshotSearchApi(APIView):
    """Nodes of a snapshot by name, GUID, host or PCI bus id (at most 20)."""

    @extend_schema(parameters=[OpenApiParameter("q", str, required=True)], responses={200: OpenApiResponse(description='{"results": [{id, name, kind, tier, host, match}]}')})
    def get(self, request, pk: int):
        snapshot = get_object_or_404(Snapshot, pk=pk)
        return Response({"results": snapshot_search(snapshot=snapshot, query=request.query_params.get("q", ""))})


class SnapshotNodeApi(APIView):
    """One node of a snapshot with its ports, peers, speeds, states and counters."""

    @extend_schema(
        parameters=[OpenApiParameter("id", str, required=True, description="node id (GUID, bus id or name)")],
        responses={200: OpenApiResponse(description="{id, name, kind, tier, radix, host, attrs, ports: [{port, peer, peer_name, peer_port, bandwidth_gbps, latency_ns, state, domain, attrs}]}")},
    )
    def get(self, request, pk: int):
        snapshot = get_object_or_404(Snapshot, pk=pk)
        key = request.query_params.get("id", "")
        detail = node_detail(snapshot=snapshot, key=key)
        if detail is None:
            raise NotFound(translation.gettext("Snapshot %(snapshot)s has no node %(node)s.") % {"snapshot": snapshot.pk, "node": repr(key)})
        return Response(detail)


class SnapshotPathApi(APIView):
    """A shortest path between two nodes over links that are up, with its hop count
    (switches traversed: 1 under one leaf, 3 across a spine)."""

    @extend_schema(
        parameters=[OpenApiParameter("a", str, required=True), OpenApiParameter("b", str, required=True)],
        responses={200: OpenApiResponse(description="the path's nodes and links, and its hop count")},
    )
    def get(self, request, pk: int):
        snapshot = get_object_or_404(Snapshot, pk=pk)
        a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
        if not a or not b:
            raise serializers.ValidationError({"a": "Give both ends: ?a=<node id>&b=<node id>."})
        try:
            return Response(hop_path(snapshot_spec_get(snapshot_id=snapshot.pk), a, b))
        except NoPath as error:
            raise NotFound(core_error_text(error)) from error
