from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog, set_language
from csp.decorators import csp_update
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from config import guide
from config.authentication import login_context
from config.views import ObtainTokenView, PasswordChangeView

# ReDoc searches in a worker it makes from a blob; only the documentation pages allow that.
_docs_workers = csp_update({"worker-src": ["'self'", "blob:"]})

urlpatterns = [
    path("", include("annotator.urls")),
    path("", include("learning.urls")),
    path("", include("deid.urls")),
    path("login/", auth_views.LoginView.as_view(extra_context=login_context()), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password_change/", PasswordChangeView.as_view(), name="password_change"),
    path("admin/", admin.site.urls),
    path("guide/", guide.guide, name="guide"),
    path("guide/img/<path:name>", guide.guide_image, name="guide-image"),
    # The language picker of the navigation (set_language) and the translations the pages' scripts use.
    path("i18n/setlang/", login_not_required(set_language), name="set_language"),
    path("jsi18n/", login_not_required(JavaScriptCatalog.as_view()), name="javascript-catalog"),
    path("api/auth/token/", ObtainTokenView.as_view(), name="api-token"),
    path("api/", include("annotator.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves Swagger UI's set-up script as a file of its own (no inline script).
    path("api/docs/", _docs_workers(SpectacularSwaggerSplitView.as_view(url_name="api-schema")), name="api-docs"),
    path("api/redoc/", _docs_workers(SpectacularRedocView.as_view(url_name="api-schema")), name="api-redoc"),
]
