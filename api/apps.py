from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The agents' REST API: thin views over memory_core services and selectors."""

    name = "api"
    verbose_name = "Agent API"
