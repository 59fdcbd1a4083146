import math

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.utils.translation import gettext_lazy as _, ngettext

from .models import Role, User
from .throttle import login_failure_record, login_failures_clear, login_lockout_remaining_s

__all__ = ("LoginForm", "AdminLoginForm", "UserCreateForm", "UserRoleForm")


class ThrottledLoginMixin:
    """Refuses a login, even with the right password, while its user name and address are locked
    out (see twin.accounts.throttle), and counts every failed one."""

    def clean(self):
        username, address = self.cleaned_data.get("username") or "", self.request.META.get("REMOTE_ADDR", "")
        remaining_s = login_lockout_remaining_s(username, address)
        if remaining_s:
            minutes = math.ceil(remaining_s / 60)
            raise forms.ValidationError(
                ngettext(
                    "Too many failed logins for this user name from your address. Try again in %(minutes)d minute.",
                    "Too many failed logins for this user name from your address. Try again in %(minutes)d minutes.",
                    minutes,
                ) % {"minutes": minutes},
                code="locked_out",
            )
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            login_failure_record(username, address)
            raise
        login_failures_clear(username, address)
        return cleaned


class LoginForm(ThrottledLoginMixin, AuthenticationForm):
    pass


class AdminLoginForm(ThrottledLoginMixin, AdminAuthenticationForm):
    pass


class UserCreateForm(UserCreationForm):
    role = forms.ChoiceField(choices=Role.choices, initial=Role.VIEWER, label=_("Role"))

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email", "role")


class UserRoleForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ("role", "is_active")
        labels = {"role": _("Role"), "is_active": _("Active")}
