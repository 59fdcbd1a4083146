"""API permissions by role: reading needs a viewer, writing an operator; and a fabric given to
a team is seen only by its members (twin.fabrics.access)."""
from django.utils.translation import gettext
from rest_framework.exceptions import NotFound
from rest_framework.permissions import SAFE_METHODS, BasePermission

from .models import Role

__all__ = ("RolePermission", "AdminPermission", "SignedInPermission")


class RolePermission(BasePermission):
    message = "Your role does not allow this; operators and admins may upload and start runs."

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        needed = Role.VIEWER if request.method in SAFE_METHODS else Role.OPERATOR
        if not user.has_role(needed):
            return False
        from twin.fabrics.access import route_hidden_from  # fabrics' models load after this app

        if route_hidden_from(user, request.resolver_match.url_name if request.resolver_match else None, view.kwargs):
            raise NotFound(gettext("No such fabric."))  # as if it did not exist: nothing leaks to outsiders
        return True


class AdminPermission(BasePermission):
    message = "Only admins may manage users."

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.has_role(Role.ADMIN))


class SignedInPermission(BasePermission):
    """Any signed-in user, viewers included: for what belongs to the user alone (their preferences)."""

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(user and user.is_authenticated)
