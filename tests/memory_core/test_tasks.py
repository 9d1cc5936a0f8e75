"""The Celery tasks' options: the settings (``CELERY_TASK_*``) drive them, once."""

from celery import Celery
from django.test import override_settings

import memory_core.tasks  # noqa: F401 (registers the shared tasks with every app)

NAMES = [
    "memory_core.tasks.deletion_run",
    "memory_core.tasks.deletion_sweep",
    "memory_core.tasks.retention_sweep",
    "memory_core.tasks.reembed_memory",
]
QUEUED_DELETION = "memory_core.tasks.queued_subject_deletion"


def app_under(**settings) -> Celery:
    """Return a Celery app configured as ``config/celery_app.py`` does, under ``settings``."""
    with override_settings(**settings):
        app = Celery("probe", set_as_current=False)
        app.config_from_object("django.conf:settings", namespace="CELERY")
        app.finalize(auto=True)  # binds every shared task: reads the configuration now
        return app


def test_a_tasks_options_follow_the_settings():
    """memory_core.tasks repeated the settings' values in every task's options, which win:
    changing CELERY_TASK_TIME_LIMIT (or acks_late, the serializer) changed nothing."""
    app = app_under(
        CELERY_TASK_TIME_LIMIT=120,
        CELERY_TASK_SOFT_TIME_LIMIT=90,
        CELERY_TASK_ACKS_LATE=False,
        CELERY_TASK_REJECT_ON_WORKER_LOST=False,
        CELERY_TASK_SERIALIZER="yaml",
    )
    for name in NAMES:
        task = app.tasks[name]
        assert (task.time_limit, task.soft_time_limit) == (120, 90), name
        assert (task.acks_late, task.reject_on_worker_lost) == (False, False), name
        assert task.serializer == "yaml", name
        # The retries are each task's own: backoff and jitter stay.
        assert (task.retry_backoff, task.retry_backoff_max, task.retry_jitter) == (2, 300, True)
    # A queued subject deletion keeps its own hour, whatever the default.
    queued = app.tasks[QUEUED_DELETION]
    assert (queued.time_limit, queued.soft_time_limit) == (3600, 3300)
    assert queued.acks_late is False and queued.serializer == "yaml"


def test_the_deployed_settings_give_every_task_the_house_options():
    app = app_under()
    for name in [*NAMES, QUEUED_DELETION]:
        task = app.tasks[name]
        assert task.acks_late is True and task.reject_on_worker_lost is True, name
        assert task.serializer == "json", name
        if name != QUEUED_DELETION:
            assert (task.time_limit, task.soft_time_limit) == (300, 240), name
