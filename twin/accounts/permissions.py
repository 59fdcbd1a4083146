"""API permissions by role: reading needs a viewer, writing an operator."""
from rest_framework.permissions import SAFE_METHODS, BasePermission

from .models import Role

__all__ = ("RolePermission", "AdminPermission")


class RolePermission(BasePermission):
    message = "Your role does not allow this; operators and admins may upload and start runs."

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        needed = Role.VIEWER if request.method in SAFE_METHODS else Role.OPERATOR
        return user.has_role(needed)


class AdminPermission(BasePermission):
    message = "Only admins may manage users."

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.has_role(Role.ADMIN))
