from django.apps import AppConfig


class MemoryCoreConfig(AppConfig):
    """The memory domain: models, admission, retrieval, deletion, retention, embeddings."""

    name = "memory_core"
    verbose_name = "Memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core.signals import setting_changed

        # The system checks register; the request signals connect before the first request
        # starts (its after-commit work is bounded as the request is).
        from memory_core import checks, commit_hooks  # noqa: F401

        setting_changed.connect(_embedder_setting_changed, dispatch_uid="memledger.embedder")


def _embedder_setting_changed(*, setting: str, **kwargs) -> None:
    """Forget the process's embedder when ``MEMLEDGER_EMBEDDER`` changes (``override_settings``,
    pytest-django's ``settings``): ``get_embedder`` keeps one per process, and a test that
    overrides the setting otherwise got the one made before, or left its own behind."""
    if setting == "MEMLEDGER_EMBEDDER":
        from memory_core.embeddings import get_embedder

        get_embedder.cache_clear()
