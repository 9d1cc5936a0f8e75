from django.apps import AppConfig


class PortalConfig(AppConfig):
    """Server-rendered pages for end users and reviewers: thin views over memory_core."""

    name = "portal"
    verbose_name = "Portal"

    def ready(self):
        # The failed logins' counters (config/login.py) listen to every login, the admin's too.
        import config.login  # noqa: F401
