"""Middleware around the API's views, and the 500 handler.

- A database that cannot be reached, or takes no writes (a read-only standby), answers 503
  ``memory_unavailable``, never a 500. Most
  database errors surface inside a DRF view and the exception handler maps them;
  ``DatabaseUnavailableMiddleware`` catches the ones raised around the view, e.g. when the
  request's transaction (``ATOMIC_REQUESTS``) cannot even begin because the server is down.
- ``AccessDenialMiddleware`` records each agent request answered 403 (the health page's
  cross-scope denials), after the request's own transaction has ended.
- ``server_error`` is the 500 handler for what nobody foresaw: JSON under /api/ as well,
  with ``DEBUG`` on too (``ApiServerErrorMiddleware``);
  ``bad_request``, the 400 handler, answers what Django refuses before any view (a Host
  header outside ``DJANGO_ALLOWED_HOSTS``, say) in the same JSON there.
"""

import logging

from django.conf import settings
from django.core.exceptions import (
    BadRequest,
    DisallowedHost,
    PermissionDenied,
    SuspiciousOperation,
)
from django.core.signals import got_request_exception
from django.db import DatabaseError
from django.http import Http404, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.template.loader import render_to_string
from django.utils.log import log_response
from django.views import defaults

from api.exceptions import database_unavailable, error_body, unavailable, unsupported_media_type
from api.parsers import UnsupportedCharset
from api.throttling import write_quota_refund
from memory_core.principals import AgentPrincipal
from memory_core.services.events import access_denial_record

logger = logging.getLogger(__name__)


class DatabaseUnavailableMiddleware:
    """Map a database's failure (``database_unavailable``) to a 503: JSON under /api/,
    elsewhere the portal's page (templates/503.html, rendered without the request: its
    context processors would ask the database)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not database_unavailable(exception):
            return None
        logger.warning("database error answered 503: %s", exception, exc_info=exception)
        write_quota_refund(request)  # nothing was stored (the commit failed, say)
        code, message = unavailable(exception)
        if request.path.startswith("/api/"):
            response = JsonResponse(error_body(code, message), status=503)
        else:
            response = HttpResponse(render_to_string("503.html", {"message": message}), status=503)
        response["Retry-After"] = "5"
        return response


# What Django answers with a 4xx itself, DEBUG or not (django.core.handlers.exception).
ANSWERED_BY_DJANGO = (
    Http404,
    PermissionDenied,
    MultiPartParserError,
    BadRequest,
    SuspiciousOperation,
)


class ApiServerErrorMiddleware:
    """Answer a failure nobody foresaw under /api/ with ``server_error``'s JSON when ``DEBUG``
    is on too (``make run``): Django answered it with its HTML debug page, settings and source
    included, where every client of the API reads JSON. It is logged and signalled as Django
    does it. Without ``DEBUG`` Django itself calls ``server_error`` (``handler500``)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not (settings.DEBUG and request.path.startswith("/api/")):
            return None
        if isinstance(exception, ANSWERED_BY_DJANGO):
            return None  # a 4xx of Django's own (a body too large: BodySizeLimitMiddleware's 413)
        got_request_exception.send(sender=None, request=request)
        response = server_error(request)
        log_response(
            "%s: %s",
            response.reason_phrase,
            request.path,
            response=response,
            request=request,
            exception=exception,
        )
        return response


class AccessDenialMiddleware:
    """Record an agent's request refused with 403 (``AccessDenial``: its error code and the
    endpoint's name), once the view's transaction has ended: a refused request's transaction
    is rolled back, and its record must not go with it. A record that cannot be written is
    logged; the answer stays the 403."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        principal = getattr(request, "user", None)  # DRF sets the agent on the request too
        if response.status_code == 403 and isinstance(principal, AgentPrincipal):
            data = getattr(response, "data", None)
            error = data.get("error") if isinstance(data, dict) else None
            match = request.resolver_match
            try:
                access_denial_record(
                    principal=principal,
                    code=(error or {}).get("code") or "forbidden",
                    endpoint=(match.url_name or "") if match else "",
                )
            except DatabaseError:
                logger.warning("could not record an access denial", exc_info=True)
        return response


def server_error(request):
    """Django's 500 handler (``config.urls.handler500``): under /api/ the JSON error every API
    answer uses, ``internal_error``; elsewhere the portal's page (templates/500.html)."""
    if request.path.startswith("/api/"):
        request_id = getattr(request, "request_id", None)
        message = "The server failed on this request; it has been logged"
        if request_id:
            message += f" under request id {request_id}"
        details = {"request_id": request_id} if request_id else None
        return JsonResponse(error_body("internal_error", message + ".", details), status=500)
    return defaults.server_error(request)


def bad_request(request, exception):
    """Django's 400 handler (``config.urls.handler400``): a request Django refuses as
    suspicious before any view reads it (a Host outside ``DJANGO_ALLOWED_HOSTS``, a malformed
    cookie or upload). Under /api/ the JSON error every API answer uses, ``bad_request``, not
    Django's HTML page; elsewhere Django's own."""
    if request.path.startswith("/api/"):
        message = (
            "The request was refused before it reached an endpoint: check the Host header "
            "(it must name a host this server answers for) and the request's form."
        )
        return JsonResponse(error_body("bad_request", message), status=400)
    return defaults.bad_request(request, exception)


# The portal's 415 for a multipart form (what a browser shows, in Django's error page).
MULTIPART_REFUSED = (
    "This server reads no multipart/form-data body: send the form as "
    "application/x-www-form-urlencoded, as the portal's pages do."
)


class UnreadableContentTypeMiddleware:
    """Refuse a request whose Content-Type Django could not read (``config.wsgi``'s request
    notes why) with a 400 before anything reads its body: the JSON ``bad_request`` under
    /api/, Django's 400 page elsewhere. Django raised while building such a request, and the
    server answered a bare 500. A charset the API does not read (``base64``, ``punycode``:
    ``api.parsers.READABLE_CHARSETS``) is the API's 415 ``unsupported_media_type``, as the
    JSON parser answers it for a body.

    A multipart form POST (``multipart_form``: Django's parser looked its parts' charsets up,
    and kept them) is a 415 too, before the CSRF check reads it: under /api/ the JSON
    ``unsupported_media_type`` the JSON parser gives it, before the key is read."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        problem = getattr(request, "content_type_error", None)
        if problem is None:
            if getattr(request, "multipart_form", False):
                return self.multipart_refused(request)
            return self.get_response(request)
        logger.warning("unreadable Content-Type: %s", problem)
        charset = getattr(request, "unreadable_charset", None)
        if charset is not None and request.path.startswith("/api/"):
            # The 415 a JSON body in that charset hears from the parser, whatever the method.
            message = str(UnsupportedCharset(charset).detail)
            return JsonResponse(error_body("unsupported_media_type", message), status=415)
        if request.path.startswith("/api/"):
            message = (
                f"The Content-Type header could not be read ({problem.rstrip('.')}); send "
                "Content-Type: application/json, with charset=utf-8 or no charset."
            )
            return JsonResponse(error_body("bad_request", message), status=400)
        return defaults.bad_request(request, BadRequest(problem))

    @staticmethod
    def multipart_refused(request) -> HttpResponse:
        """Return the 415 a multipart form POST is answered."""
        if request.path.startswith("/api/"):
            message = unsupported_media_type(request)
            return JsonResponse(error_body("unsupported_media_type", message), status=415)
        title = "Unsupported Media Type (415)"
        page = defaults.ERROR_PAGE_TEMPLATE % {"title": title, "details": MULTIPART_REFUSED}
        return HttpResponse(page, status=415)


class ApiHostCheckMiddleware:
    """Refuse an API request whose Host this server does not answer for with the JSON
    ``bad_request`` (``bad_request`` above), before Django's own check: with ``DEBUG`` on
    (``make run``), Django answered it with its HTML debug page, settings and paths included."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/api/"):
            try:
                request.get_host()
            except DisallowedHost as exc:
                logging.getLogger("django.security.DisallowedHost").warning("%s", exc)
                return bad_request(request, exc)
        return self.get_response(request)
