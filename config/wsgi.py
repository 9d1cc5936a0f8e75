"""WSGI entry point (gunicorn config.wsgi)."""

import os

import django
from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")


class MemledgerWSGIRequest(WSGIRequest):
    """Django's request, built even when its Content-Type cannot be read.

    Django parses the header's parameters while it builds the request, before any
    middleware: a parameter it refuses (an RFC 2231 charset it does not know,
    ``charset*=bogus''utf-8``) raised ValueError there, and the server answered a bare 500.
    Here the request is built with the media type alone and ``content_type_error`` says why;
    ``api.middleware.UnreadableContentTypeMiddleware`` answers it 400.
    """

    content_type_error: str | None = None

    def _set_content_type_params(self, meta):
        try:
            super()._set_content_type_params(meta)
        except ValueError as exc:
            self.content_type = meta.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()
            self.content_params = {}
            self.content_type_error = str(exc)


class MemledgerWSGIHandler(WSGIHandler):
    request_class = MemledgerWSGIRequest


def get_application() -> MemledgerWSGIHandler:
    """Set Django up and return the WSGI application (as get_wsgi_application does)."""
    django.setup(set_prefix=False)
    return MemledgerWSGIHandler()


application = get_application()

if settings.MEMLEDGER_WARM_UP:  # each worker imports this module before it takes a request
    from memory_core.warmup import warm_up

    warm_up()
