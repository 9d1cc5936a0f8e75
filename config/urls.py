"""The URL map: admin, the agents' API, its schema, the portal and its login."""

from django.contrib import admin
from django.urls import include, path, re_path

from api.views import DocsView, NoEndpointView, SchemaView, SchemaWithoutSlashView
from config.login import LoginView, LogoutView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.urls")),
    path("api/schema/", SchemaView.as_view(), name="schema"),
    path("api/docs/", DocsView.as_view(), name="api-docs"),
    # Without the slash: GET and HEAD are redirected to it, other methods a JSON 405 (left to
    # APPEND_SLASH, a body under DEBUG was Django's HTML page).
    re_path(r"^api/(schema|docs)$", SchemaWithoutSlashView.as_view(), name="api-schema-no-slash"),
    # Last of /api/: an unknown endpoint or a malformed id is a JSON 404, as every API error.
    re_path(r"^api/", NoEndpointView.as_view(), name="api-no-endpoint"),
    path(
        "accounts/login/",
        LoginView.as_view(),
        name="login",
    ),
    path("accounts/logout/", LogoutView.as_view(), name="logout"),
    path("portal/", include("portal.urls")),
]

# A failure nobody foresaw: JSON under /api/, the portal's page elsewhere (never Django's text).
handler500 = "api.middleware.server_error"
# Refused before any view (a Host outside DJANGO_ALLOWED_HOSTS): JSON under /api/ too.
handler400 = "api.middleware.bad_request"
