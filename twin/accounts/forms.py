from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _

from .models import Role, User

__all__ = ("UserCreateForm", "UserRoleForm")


class UserCreateForm(UserCreationForm):
    role = forms.ChoiceField(choices=Role.choices, initial=Role.VIEWER, label=_("Role"))

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email", "role")


class UserRoleForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ("role", "is_active")
