from django.apps import AppConfig


class MemoryCoreConfig(AppConfig):
    """The memory domain: models, admission, retrieval, deletion, retention, embeddings."""

    name = "memory_core"
    verbose_name = "Memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from memory_core import checks  # noqa: F401  (registers the system checks)
