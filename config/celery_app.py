"""The Celery application: configured from Django settings (namespace CELERY)."""

import os

from celery import Celery

# A task sent during a request runs under its request id: its signal handlers live there.
from config import request_id  # noqa: F401

# The same default as config/wsgi.py: production. This module is imported by config/__init__,
# so by every `import config...` before the importer's own default could apply: with "local"
# here, gunicorn config.wsgi without DJANGO_SETTINGS_MODULE ran the local settings (DEBUG on,
# a public secret key). manage.py sets "local" before it imports anything of config, and
# `make run` gives its worker and beat "local" (scripts/run_services.py).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("memledger")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
