"""WSGI entry point (gunicorn config.wsgi)."""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

application = get_wsgi_application()

if settings.MEMLEDGER_WARM_UP:  # each worker imports this module before it takes a request
    from memory_core.warmup import warm_up

    warm_up()
