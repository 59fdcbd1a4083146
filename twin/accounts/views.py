"""User management pages (admins only)."""
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from .decorators import role_required
from .forms import UserCreateForm, UserRoleForm
from .models import Role, User
from .services import user_create, user_set_role

__all__ = ("user_list", "user_edit")


@role_required(Role.ADMIN)
@require_http_methods(["GET", "POST"])
def user_list(request):
    form = UserCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = user_create(
            username=form.cleaned_data["username"],
            email=form.cleaned_data.get("email", ""),
            password=form.cleaned_data["password1"],
            role=Role(form.cleaned_data["role"]),
        )
        messages.success(request, _("User %(name)s created.") % {"name": user.username})
        return redirect("user-list")
    users = User.objects.order_by("username")
    return render(request, "accounts/user_list.html", {"users": users, "form": form})


@role_required(Role.ADMIN)
@require_http_methods(["GET", "POST"])
def user_edit(request, user_id: int):
    user = get_object_or_404(User, pk=user_id)
    form = UserRoleForm(request.POST or None, instance=user)
    if request.method == "POST" and form.is_valid():
        user_set_role(user=user, role=Role(form.cleaned_data["role"]), is_active=form.cleaned_data["is_active"])
        messages.success(request, _("User %(name)s updated.") % {"name": user.username})
        return redirect("user-list")
    return render(request, "accounts/user_edit.html", {"edited": user, "form": form})
