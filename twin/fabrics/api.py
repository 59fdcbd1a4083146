"""REST API for fabrics and snapshots."""
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from twin.ingest import export_canonical, registered_parsers

from .models import Fabric, Snapshot
from .selectors import fabric_list, snapshot_graph, snapshot_spec_get
from .services import snapshot_import

__all__ = ("FabricListApi", "FabricDetailApi", "SnapshotUploadApi", "SnapshotDetailApi", "SnapshotGraphApi", "SnapshotExportApi")


class SnapshotSerializer(serializers.ModelSerializer):
    fabric_name = serializers.CharField(source="fabric.name", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True, default=None)

    class Meta:
        model = Snapshot
        fields = (
            "id", "fabric", "fabric_name", "version", "source_name", "source_format", "checksum",
            "node_count", "card_count", "switch_count", "link_count", "created_by", "created_at",
        )


class FabricSerializer(serializers.ModelSerializer):
    latest_snapshot = serializers.SerializerMethodField()
    snapshot_count = serializers.SerializerMethodField()

    class Meta:
        model = Fabric
        fields = ("id", "name", "description", "created_at", "snapshot_count", "latest_snapshot")

    @extend_schema_field(SnapshotSerializer(allow_null=True))
    def get_latest_snapshot(self, fabric: Fabric):
        snapshots = sorted(fabric.snapshots.all(), key=lambda s: s.version)
        return SnapshotSerializer(snapshots[-1]).data if snapshots else None

    def get_snapshot_count(self, fabric: Fabric) -> int:
        return len(fabric.snapshots.all())


class FabricListApi(generics.ListAPIView):
    """Fabrics with their latest snapshot."""

    serializer_class = FabricSerializer

    def get_queryset(self):
        return fabric_list()


class FabricDetailApi(generics.RetrieveAPIView):
    serializer_class = FabricSerializer

    def get_queryset(self):
        return fabric_list()


class SnapshotUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="A topology file (canonical twin-fabric JSON or YAML)")
    fabric = serializers.CharField(max_length=200, required=False, allow_blank=True, help_text="Fabric name; defaults to the name in the file")
    format = serializers.CharField(required=False, allow_blank=True, help_text="Parser name; detected from the content when empty")

    def validate_format(self, value: str) -> str:
        known = [parser.name for parser in registered_parsers()]
        if value and value not in known:
            raise serializers.ValidationError(f"Unknown format {value!r}; known: {', '.join(known)}.")
        return value


class SnapshotUploadApi(APIView):
    """Upload a topology file; it becomes the next snapshot of its fabric (or nothing is written)."""

    parser_classes = (MultiPartParser, FormParser)

    @extend_schema(request=SnapshotUploadSerializer, responses={201: SnapshotSerializer, 400: OpenApiResponse(description="Invalid file: file, line, what was expected")})
    def post(self, request):
        upload = SnapshotUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        file = upload.validated_data["file"]
        snapshot = snapshot_import(
            fabric_name=upload.validated_data.get("fabric", ""),
            data=file.read(),
            source_name=file.name,
            fmt=upload.validated_data.get("format") or None,
            user=request.user,
        )
        return Response(SnapshotSerializer(snapshot).data, status=status.HTTP_201_CREATED)


class SnapshotDetailApi(generics.RetrieveAPIView):
    serializer_class = SnapshotSerializer
    queryset = Snapshot.objects.select_related("fabric", "created_by")


class SnapshotGraphSerializer(serializers.Serializer):
    snapshot = serializers.IntegerField()
    nodes = serializers.ListField(child=serializers.DictField())
    links = serializers.ListField(child=serializers.DictField())


class SnapshotGraphApi(APIView):
    """Nodes and links of a snapshot, compact, for drawing."""

    @extend_schema(responses=SnapshotGraphSerializer)
    def get(self, request, pk: int):
        return Response(snapshot_graph(snapshot=get_object_or_404(Snapshot, pk=pk)))


class SnapshotExportApi(APIView):
    """The snapshot in the canonical twin-fabric JSON format (re-importable as is)."""

    @extend_schema(responses={(200, "application/json"): OpenApiResponse(description="twin-fabric JSON")})
    def get(self, request, pk: int):
        snapshot = get_object_or_404(Snapshot.objects.select_related("fabric"), pk=pk)
        text = export_canonical(snapshot_spec_get(snapshot_id=snapshot.pk))
        response = HttpResponse(text, content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="{snapshot.fabric.name}-v{snapshot.version}.json"'
        return response
