"""Every page needs a logged-in user."""
from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequiredMiddleware

__all__ = ("LoginRequiredMiddleware",)


class LoginRequiredMiddleware(DjangoLoginRequiredMiddleware):
    """Django's login-required default for pages; the API is left to its own authentication,
    which answers 401/403 with a JSON message instead of redirecting to the login page."""

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
