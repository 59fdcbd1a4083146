from django.contrib import admin

from twin.accounts.admin import AdminRoleAccess

from .models import Fabric


@admin.register(Fabric)
class FabricAdmin(AdminRoleAccess, admin.ModelAdmin):
    """Only the team is edited here: a fabric's content comes from its uploads."""

    list_display = ("name", "team", "created_at")
    list_filter = ("team",)
    fields = ("name", "team")
    readonly_fields = ("name",)

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # a fabric's history is its snapshots: not deleted from a form
