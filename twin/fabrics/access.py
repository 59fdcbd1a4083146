"""Who may see a fabric. A fabric given to a team is seen only by that team's members and by
admins; a fabric without a team is seen by every user. Everything under a fabric (snapshots,
runs, journal entries, websockets, the API) follows its fabric, and a hidden fabric answers as
if it did not exist (404), so that its name and ids say nothing to outsiders.

Pages are checked by FabricAccessMiddleware, the API by RolePermission and websockets by
GroupConsumer, all through `route_hidden_from`; lists filter with `fabrics_visible_to`, and ids in
request bodies go through VisibleFabricField / VisibleSnapshotField."""
from django.apps import apps
from django.db.models import Q, QuerySet
from django.http import Http404
from django.utils.deprecation import MiddlewareMixin
from django.utils.translation import gettext
from rest_framework import serializers

from .models import Fabric, Snapshot

__all__ = (
    "FabricAccessMiddleware", "VisibleFabricField", "VisibleSnapshotField",
    "fabric_hidden_from", "fabrics_visible_to", "route_hidden_from",
)

# Route keyword -> (app label, model, lookup from that model to its fabric's team).
_OBJECT_KWARGS = {
    "fabric_id": ("fabrics", "Fabric", "team_id"),
    "snapshot_id": ("fabrics", "Snapshot", "fabric__team_id"),
    "run_id": ("runs", "Run", "snapshot__fabric__team_id"),
}
# The API's routes name their object `pk` (and a diff's second snapshot `other`); the route's
# name says what it is.
_API_ROUTE_PREFIXES = {"api-fabric": "fabric_id", "api-snapshot": "snapshot_id", "api-run": "run_id"}


def fabrics_visible_to(user, fabrics: QuerySet[Fabric] | None = None) -> QuerySet[Fabric]:
    fabrics = Fabric.objects.all() if fabrics is None else fabrics
    if user.is_admin:
        return fabrics
    return fabrics.filter(Q(team__isnull=True) | Q(team__members=user)).distinct()


def fabric_hidden_from(user, fabric_id: int) -> bool:
    """True when the fabric exists and `user` may not see it."""
    return _team_hides(user, Fabric.objects.filter(pk=fabric_id).values_list("team_id", flat=True).first())


def _team_hides(user, team_id: int | None) -> bool:
    # A fabric without a team costs no further query: the usual case.
    return team_id is not None and not user.is_admin and not user.teams.filter(pk=team_id).exists()


def route_hidden_from(user, route_name: str | None, kwargs: dict) -> bool:
    """True when an object a route names (by its keyword arguments) belongs to a fabric `user`
    may not see."""
    for keyword, value in kwargs.items():
        if keyword in ("pk", "other") and route_name:
            keyword = next((named for prefix, named in _API_ROUTE_PREFIXES.items() if route_name.startswith(prefix)), keyword)
        if keyword not in _OBJECT_KWARGS:
            continue
        app_label, model_name, to_team = _OBJECT_KWARGS[keyword]
        if _team_hides(user, apps.get_model(app_label, model_name).objects.filter(pk=value).values_list(to_team, flat=True).first()):
            return True
    return False


class FabricAccessMiddleware(MiddlewareMixin):
    """Pages of a fabric the user may not see answer 404. (The API checks in RolePermission,
    after its own token or session authentication.)"""

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path_info.startswith("/api/") or not request.user.is_authenticated:
            return None
        match = request.resolver_match
        if route_hidden_from(request.user, match.url_name if match else None, view_kwargs):
            raise Http404(gettext("No such fabric."))
        return None


class VisibleFabricField(serializers.PrimaryKeyRelatedField):
    """A fabric id in a request body; a fabric the requester may not see is "not found" (the
    serializer needs the request in its context)."""

    def __init__(self, **kwargs):
        # The unfiltered queryset names the model for the OpenAPI schema; lookups filter.
        super().__init__(queryset=Fabric.objects.all(), **kwargs)

    def get_queryset(self):
        return fabrics_visible_to(self.context["request"].user)


class VisibleSnapshotField(serializers.PrimaryKeyRelatedField):
    """A snapshot id in a request body, of a fabric the requester may see (as above)."""

    def __init__(self, **kwargs):
        super().__init__(queryset=Snapshot.objects.all(), **kwargs)

    def get_queryset(self):
        return Snapshot.objects.filter(fabric__in=fabrics_visible_to(self.context["request"].user))
