"""Login is required everywhere in the HTML pages; the REST API answers 401/403 through DRF instead."""
from django.contrib.auth.middleware import LoginRequiredMiddleware


class LoginRequiredExceptApiMiddleware(LoginRequiredMiddleware):
    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
