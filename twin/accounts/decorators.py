"""Role checks for page views."""
from functools import wraps

from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext

from .models import Role

__all__ = ("role_required",)


def role_required(role: Role):
    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.has_role(role):
                raise PermissionDenied(gettext("This page needs the %(role)s role.") % {"role": role.label})
            return view(request, *args, **kwargs)

        return wrapper

    return decorator
