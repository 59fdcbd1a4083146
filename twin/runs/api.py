"""REST API for background runs."""
from django.urls import reverse
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from twin.common.params import id_from_text
from twin.fabrics.access import VisibleSnapshotField, fabrics_visible_to

from twin.operations.exports import placement_csv, slurm_hostfile, slurm_hostlist
from twin.simulations.models import ReplayPlayback
from twin.simulations.replays import replay_frame
from twin.simulations.services import ALGORITHMS, COLLECTIVES, ECMP_MODES, PROTOCOLS, SEARCHED_STRATEGIES, placement_from_result

from .models import Run, RunKind
from .realtime import run_state_payload
from .services import run_cancel, run_create

__all__ = ("RunListCreateApi", "RunDetailApi", "RunDetailDataApi", "RunCancelApi", "RunPlacementExportApi", "RunFrameApi")


class RunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(RunKind.choices)
    snapshot = serializers.IntegerField()
    status = serializers.CharField()
    progress = serializers.FloatField()
    message = serializers.CharField(help_text="The progress message in the request's language")
    messages = serializers.DictField(child=serializers.CharField(), help_text="The progress message in each language of the site")
    result = serializers.JSONField(allow_null=True)
    error = serializers.CharField(allow_null=True, help_text="Why it failed or was cancelled, in the request's language")
    errors = serializers.DictField(child=serializers.CharField(allow_null=True), help_text="Why it failed or was cancelled, in each language of the site")
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


class NoParams(serializers.Serializer):
    """Hop statistics take no parameters."""


class CollectiveParams(serializers.Serializer):
    collective = serializers.ChoiceField(COLLECTIVES)
    size_bytes = serializers.FloatField(min_value=1, max_value=1e15, help_text="Bytes per rank (nccl-tests' size)")
    algorithm = serializers.ChoiceField(("auto", *ALGORITHMS), default="auto")
    protocol = serializers.ChoiceField(("auto", *PROTOCOLS), default="auto", help_text="NCCL protocol; auto: the fastest, as NCCL's tuner picks")
    ecmp = serializers.ChoiceField(ECMP_MODES, default="hash")
    channels = serializers.IntegerField(min_value=1, max_value=64, default=1)
    in_switch_reduction = serializers.BooleanField(allow_null=True, default=None)
    transport = serializers.DictField(required=False, default=dict, help_text="Transport overrides for this run, on top of the fabric's calibration (shape in docs/simulation.md)")


class JobParams(serializers.Serializer):
    tp = serializers.IntegerField(min_value=1)
    pp = serializers.IntegerField(min_value=1, default=1)
    dp = serializers.IntegerField(min_value=1)
    ep = serializers.IntegerField(min_value=1, default=1)
    model_params = serializers.FloatField(min_value=1, required=False, allow_null=True, default=None)


class PlacementParams(serializers.Serializer):
    job = JobParams()
    strategies = serializers.ListField(child=serializers.ChoiceField(SEARCHED_STRATEGIES), default=list(SEARCHED_STRATEGIES), allow_empty=False)
    busy_cards = serializers.ListField(child=serializers.CharField(), default=list, help_text="Cards in use by other jobs")
    mapping = serializers.DictField(child=serializers.CharField(), default=dict, help_text="Your own placement: rank -> card id (evaluated as strategy 'user')")
    seed = serializers.IntegerField(default=0)
    ecmp = serializers.ChoiceField(ECMP_MODES, default="hash")


class WorkloadParams(serializers.Serializer):
    collective = serializers.ChoiceField(COLLECTIVES, default="allreduce")
    size_bytes = serializers.FloatField(min_value=1, max_value=1e15, default=float(1 << 30))
    algorithm = serializers.ChoiceField(("auto", *ALGORITHMS), default="ring")


class FailureParams(serializers.Serializer):
    elements = serializers.ListField(child=serializers.CharField(), default=list, help_text="Fail these together: switch names or ids, or link:<index>")
    worst = serializers.ChoiceField(("switch", "leaf", "link"), required=False, help_text="Or search the worst single failure of this kind")
    workload = WorkloadParams(default=dict)

    def validate(self, data: dict) -> dict:
        if bool(data["elements"]) == bool(data.get("worst")):
            raise serializers.ValidationError(gettext("Give either elements to fail together or a kind to search the worst single failure of."))
        return data


class TrainingParams(serializers.Serializer):
    model_params = serializers.FloatField(min_value=1, default=175e9)
    tp = serializers.IntegerField(min_value=1)
    pp = serializers.IntegerField(min_value=1, default=1)
    dp = serializers.IntegerField(min_value=1)
    ep = serializers.IntegerField(min_value=1, default=1)
    micro_batches = serializers.IntegerField(min_value=1, max_value=1024, default=1, help_text="Each one adds every pipeline send to the trace")
    hidden_size = serializers.IntegerField(min_value=1, default=12288, help_text="Sizes the activations TP and PP move (default: GPT-3 175B's)")
    seq_len = serializers.IntegerField(min_value=1, default=2048)
    layers = serializers.IntegerField(min_value=1, required=False, help_text="Transformer layers, divisible by pp (default: from model_params and hidden_size, ~12 h^2 parameters a layer)")


class ReplayParams(serializers.Serializer):
    trace_file = serializers.IntegerField(required=False, help_text="An uploaded trace (POST /api/traces/)")
    training = TrainingParams(required=False, help_text="Or a generated training step on the snapshot's first cards")
    max_frames = serializers.IntegerField(min_value=10, max_value=3000, default=600)
    ecmp = serializers.ChoiceField(ECMP_MODES, default="hash")
    ordering = serializers.ChoiceField(("communicator", "rank"), default="communicator", help_text="One collective at a time per communicator, or per rank")

    def validate(self, data: dict) -> dict:
        if ("trace_file" in data) == ("training" in data):
            raise serializers.ValidationError(gettext("Give either trace_file or training."))
        return data


class WhatIfParams(serializers.Serializer):
    factors = serializers.ListField(child=serializers.FloatField(), required=False, help_text="Growth factors, first = reference (default 1, 2, 4, 8)")
    alternatives = serializers.ListField(child=serializers.CharField(), required=False, help_text="one-supernode, k-supernodes, rail")
    k = serializers.IntegerField(min_value=2, required=False, help_text="Super-nodes of the k-supernodes alternative")
    collectives = serializers.ListField(child=serializers.CharField(), required=False)
    sizes = serializers.ListField(child=serializers.FloatField(), required=False, help_text="Message sizes in bytes (default 1 KiB to 1 GiB)")
    overrides = serializers.DictField(required=False, help_text="Design rules to override (see docs/whatif.md)")
    items = serializers.DictField(required=False, help_text="Power and cost per item to override")
    threshold_points = serializers.FloatField(min_value=0.1, max_value=100, required=False, help_text="Efficiency drop that marks the knee")


RUN_PARAMS = {
    RunKind.HOP_STATS: NoParams, RunKind.COLLECTIVE: CollectiveParams, RunKind.PLACEMENT: PlacementParams,
    RunKind.FAILURES: FailureParams, RunKind.REPLAY: ReplayParams, RunKind.WHATIF: WhatIfParams,
}


class RunCreateSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(RunKind.choices)
    snapshot = VisibleSnapshotField()
    params = serializers.DictField(required=False, default=dict, help_text="hop_stats: none; collective: collective, size_bytes, algorithm, protocol, ecmp, channels, in_switch_reduction")

    def validate(self, data: dict) -> dict:
        params = RUN_PARAMS[data["kind"]](data=data["params"])
        if not params.is_valid():
            raise serializers.ValidationError({"params": params.errors})
        return {**data, "params": dict(params.validated_data)}


class RunListCreateApi(generics.ListCreateAPIView):
    """Runs, newest first; `?snapshot=<id>` keeps those of one snapshot."""

    serializer_class = RunSerializer

    def get_queryset(self):
        queryset = Run.objects.filter(snapshot__fabric__in=fabrics_visible_to(self.request.user)).order_by("-created_at", "-id")
        wanted = self.request.query_params.get("snapshot")
        if wanted is not None:
            snapshot_id = id_from_text(wanted)
            if snapshot_id is None:
                raise serializers.ValidationError({"snapshot": "Expected a snapshot id (a whole number)."})
            queryset = queryset.filter(snapshot_id=snapshot_id)
        return queryset

    @extend_schema(request=RunCreateSerializer, responses={201: RunSerializer})
    def post(self, request):
        """Start a run in the background; its state is pushed on `ws_url` and readable at `url`."""
        given = RunCreateSerializer(data=request.data, context={"request": request})
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


class RunDetailDataApi(APIView):
    """A finished run's bulky data (e.g. per-link bytes and utilisation of a collective, in the
    snapshot's link order), kept out of the state pushed to viewers."""

    @extend_schema(responses={200: OpenApiResponse(description="per-link arrays, or {} when the run has none")})
    def get(self, request, pk: int):
        run = get_object_or_404(Run, pk=pk)
        return Response(run.detail or {})


class RunCancelApi(APIView):
    """Stop a run; cells not yet started are skipped. Operators stop their own runs, admins any."""

    @extend_schema(request=None, responses={200: RunSerializer})
    def post(self, request, pk: int):
        return Response(RunSerializer(run_cancel(run=get_object_or_404(Run.objects.select_related("created_by"), pk=pk), user=request.user)).data)


class RunPlacementExportApi(APIView):
    """A placement run's chosen strategy as a rank -> card/host CSV, a Slurm hostlist or a
    Slurm hostfile (`?strategy=aware&format=csv|hostlist|hostfile`)."""

    @extend_schema(
        parameters=[OpenApiParameter("strategy", str), OpenApiParameter("format", str, enum=["csv", "hostlist", "hostfile"])],
        responses={(200, "text/csv"): OpenApiResponse(description="rank -> card/host CSV, or a Slurm hostlist or hostfile (text/plain)")},
    )
    def get(self, request, pk: int):
        run = get_object_or_404(Run, pk=pk, kind=RunKind.PLACEMENT)
        if run.status != "succeeded":
            raise serializers.ValidationError({"run": f"Run {run.pk} has no placement yet ({run.status})."})
        strategy = request.query_params.get("strategy") or run.result["best"]
        if strategy not in run.result["results"]:
            raise serializers.ValidationError({"strategy": f"Run {run.pk} has no {strategy!r} placement; it has {', '.join(run.result['results'])}."})
        placement = placement_from_result(run.result["results"][strategy], run.detail["ranks"][strategy])
        writer = {"csv": placement_csv, "hostlist": slurm_hostlist, "hostfile": slurm_hostfile}.get(request.query_params.get("format", "csv"))
        if writer is None:
            raise serializers.ValidationError({"format": "Expected csv, hostlist or hostfile."})
        response = HttpResponse(writer(placement), content_type="text/csv" if writer is placement_csv else "text/plain")
        response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-{strategy}.{"csv" if writer is placement_csv else "txt"}"'
        return response


class RunFrameApi(APIView):
    """One frame of a finished replay (`?index=<n>` or `?index=last`): the state at that time,
    complete, as pushed over the websocket."""

    @extend_schema(parameters=[OpenApiParameter("index", str)], responses={200: OpenApiResponse(description="{index, frame}")})
    def get(self, request, pk: int):
        playback = get_object_or_404(ReplayPlayback, run_id=pk)
        wanted = request.query_params.get("index", "last")
        index = playback.frames - 1 if wanted == "last" else id_from_text(wanted)
        if index is None or not 0 <= index < playback.frames:
            raise serializers.ValidationError({"index": f"Expected 0 to {playback.frames - 1}, or last."})
        return Response({"index": index, "frame": replay_frame(pk, index, playback.seq)})
