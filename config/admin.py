"""The Django admin is platform work: staff see every tenant (row-level security's platform mode).

Each admin view runs in the request's transaction (``ATOMIC_REQUESTS``); for an active staff
user the transaction switches to platform mode with ``SET LOCAL`` before the view runs, and the
response is rendered inside it (a changelist's lazy queryset must run while the mode holds).
Nobody else, and no view outside the admin, gets platform mode this way.
"""

import functools

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.db import connection

from memory_core.rls import PLATFORM_SETTING, TENANT_SETTING


class MemledgerAdminSite(admin.AdminSite):
    @property
    def login_form(self):
        """The admin's login refuses a username past its failed attempts (config/login.py);
        imported here, once the models are loaded."""
        from config.login import AdminLoginForm

        return AdminLoginForm

    def password_change(self, request, extra_context=None):
        """Django's, with a form that refuses a lone surrogate on its fields (a 500)."""
        from django.contrib.auth.views import PasswordChangeView
        from django.urls import reverse

        from config.login import AdminPasswordChangeForm

        request.current_app = self.name
        return PasswordChangeView.as_view(
            form_class=AdminPasswordChangeForm,
            success_url=reverse("admin:password_change_done", current_app=self.name),
            extra_context={**self.each_context(request), **(extra_context or {})},
            **(
                {"template_name": self.password_change_template}
                if self.password_change_template is not None
                else {}
            ),
        )(request)

    def login(self, request, extra_context=None):
        from config.login import without_unencodable_next

        without_unencodable_next(request)
        return super().login(request, extra_context)

    def logout(self, request, extra_context=None):
        """As the login: a ``next`` no URL can hold was a 500, whose rollback kept the
        session the logout had ended (stop 61's audit of logins)."""
        from config.login import without_unencodable_next

        without_unencodable_next(request)
        return super().logout(request, extra_context)

    def admin_view(self, view, cacheable=False):
        inner = super().admin_view(view, cacheable)

        @functools.wraps(inner)
        def wrapper(request, *args, **kwargs):
            user = request.user
            platform = user.is_active and user.is_staff and connection.in_atomic_block
            if platform:
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT set_config(%s, '', true), set_config(%s, 'on', true)",
                        [TENANT_SETTING, PLATFORM_SETTING],
                    )
            response = inner(request, *args, **kwargs)
            if platform and callable(getattr(response, "render", None)):
                if not response.is_rendered:
                    response.render()
            return response

        return wrapper


class MemledgerAdminConfig(AdminConfig):
    default_site = "config.admin.MemledgerAdminSite"

    def ready(self):
        super().ready()
        # The failed logins' counters (config/login.py) listen to every login, the portal's
        # and the admin's.
        import config.login  # noqa: F401
