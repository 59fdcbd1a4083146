"""REST API for background runs."""
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response

from twin.fabrics.models import Snapshot

from .models import Run, RunKind
from .realtime import run_state_payload
from .services import run_create

__all__ = ("RunListCreateApi", "RunDetailApi")


class RunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(RunKind.choices)
    snapshot = serializers.IntegerField()
    status = serializers.CharField()
    progress = serializers.FloatField()
    message = serializers.CharField()
    result = serializers.JSONField(allow_null=True)
    error = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.CharField()
    ws_url = serializers.CharField()

    def to_representation(self, run: Run) -> dict:
        return {
            **run_state_payload(run),
            "url": reverse("api-run-detail", args=[run.pk]),
            "ws_url": f"/ws/runs/{run.pk}/",
        }


class RunCreateSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(RunKind.choices)
    snapshot = serializers.PrimaryKeyRelatedField(queryset=Snapshot.objects.all())
    params = serializers.DictField(required=False, default=dict)


class RunListCreateApi(generics.ListCreateAPIView):
    """Runs, newest first; `?snapshot=<id>` keeps those of one snapshot."""

    serializer_class = RunSerializer

    def get_queryset(self):
        queryset = Run.objects.order_by("-created_at", "-id")
        snapshot = self.request.query_params.get("snapshot")
        if snapshot is not None:
            if not snapshot.isdigit():
                raise serializers.ValidationError({"snapshot": "Expected a snapshot id (a whole number)."})
            queryset = queryset.filter(snapshot_id=int(snapshot))
        return queryset

    @extend_schema(request=RunCreateSerializer, responses={201: RunSerializer})
    def post(self, request):
        """Start a run in the background; its state is pushed on `ws_url` and readable at `url`."""
        given = RunCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        run = run_create(
            kind=RunKind(given.validated_data["kind"]),
            snapshot=given.validated_data["snapshot"],
            params=given.validated_data["params"],
            user=request.user,
        )
        return Response(RunSerializer(run).data, status=status.HTTP_201_CREATED)


class RunDetailApi(generics.RetrieveAPIView):
    serializer_class = RunSerializer
    queryset = Run.objects.all()
