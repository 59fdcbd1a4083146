"""User management pages (admins only)."""
from django.contrib import messages
from django.db.models import F, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _, gettext_lazy
from django.views.decorators.http import require_http_methods

from twin.common.pages import paged

from .decorators import role_required
from .forms import UserCreateForm, UserRoleForm
from .models import Role, User
from .services import user_create, user_set_role

__all__ = ("user_list", "user_edit")

USERS_PER_PAGE = 50
USER_SORTS = {  # value in the URL -> (label, ordering)
    "name": (gettext_lazy("Name (A-Z)"), "username"),
    "-name": (gettext_lazy("Name (Z-A)"), "-username"),
    "last-login": (gettext_lazy("Last login (latest first)"), F("last_login").desc(nulls_last=True)),
    "role": (gettext_lazy("Role"), "role"),
}


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
    users = User.objects.all()
    query_text, role = request.GET.get("q", "").strip(), request.GET.get("role", "")
    if query_text:
        users = users.filter(Q(username__icontains=query_text) | Q(email__icontains=query_text))
    if role in Role.values:
        users = users.filter(role=role)
    sort = request.GET.get("sort", "name")
    page, query = paged(request, users.order_by(USER_SORTS.get(sort, USER_SORTS["name"])[1], "pk"), USERS_PER_PAGE)
    return render(
        request,
        "accounts/user_list.html",
        {"page": page, "query": query, "form": form, "q": query_text, "role": role, "roles": Role.choices, "sort": sort,
         "sorts": [(value, label) for value, (label, _ordering) in USER_SORTS.items()]},
    )


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
