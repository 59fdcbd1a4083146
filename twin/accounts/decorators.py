"""Role checks for page views."""
from functools import wraps

from django.core.exceptions import PermissionDenied

from .models import Role

__all__ = ("role_required",)


def role_required(role: Role):
    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.has_role(role):
                raise PermissionDenied(f"This page needs the {role.label} role.")
            return view(request, *args, **kwargs)

        return wrapper

    return decorator
