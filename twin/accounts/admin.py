from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from .forms import AdminLoginForm
from .models import Team, User

admin.site.login_form = AdminLoginForm  # throttled like the login page


@admin.register(User)
class TwinUserAdmin(UserAdmin):
    list_display = ("username", "role", "is_active", "last_login")
    fieldsets = UserAdmin.fieldsets + (("Twin", {"fields": ("role",)}),)


class AdminRoleAccess:
    """Model pages that the twin's admin role may use (Django's own model permissions are not
    given to roles; staff status still decides who reaches the admin site at all)."""

    def has_module_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_admin

    def has_view_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request) -> bool:
        return self.has_module_permission(request)

    def has_delete_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)


@admin.register(Team)
class TeamAdmin(AdminRoleAccess, admin.ModelAdmin):
    """Members of a team; a fabric's team is set on the fabric (Fabrics, below)."""

    list_display = ("name",)
    filter_horizontal = ("members",)
