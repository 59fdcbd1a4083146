from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from .forms import AdminLoginForm
from .models import User

admin.site.login_form = AdminLoginForm  # throttled like the login page


@admin.register(User)
class TwinUserAdmin(UserAdmin):
    list_display = ("username", "role", "is_active", "last_login")
    fieldsets = UserAdmin.fieldsets + (("Twin", {"fields": ("role",)}),)
