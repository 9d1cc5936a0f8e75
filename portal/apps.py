from django.apps import AppConfig


class PortalConfig(AppConfig):
    """Server-rendered pages for end users and reviewers: thin views over memory_core."""

    name = "portal"
    verbose_name = "Portal"
