"""One exception handler: every error is ``{"error": {"code", "message", "details"}}``."""

import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import TooManyFieldsSent
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404
from psycopg.errors import LockNotAvailable
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from api.authentication import NotAnApiKey
from api.parsers import UnsupportedCharset
from api.throttling import refusal, write_quota_refund
from memory_core.admission.candidate import bounded
from memory_core.exceptions import (
    DomainError,
    ValidationFailed,
    is_read_only_database,
    is_tenant_deleted,
)

logger = logging.getLogger(__name__)

_DRF_CODES = {
    NotAnApiKey: "not_an_api_key",  # before AuthenticationFailed, its base
    exceptions.ParseError: "malformed_json",
    exceptions.AuthenticationFailed: "authentication_failed",
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.PermissionDenied: "forbidden",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "rate_limited",
    exceptions.ValidationError: "invalid_input",
}


BODY_INVALID = "The request body is invalid; see details for each field."
QUERY_INVALID = "The query string is invalid; see details for each parameter."


class InvalidQuery(exceptions.ValidationError):
    """Query parameters that do not fit (``api.parsing.parse_query``): answered as any
    ``invalid_input``, with a message that names the query string, not a body the request
    may not even have."""


def _unknown_field(item) -> bool:
    """Whether the DRF error ``item`` names an unknown field (``StrictSerializer``'s)."""
    return getattr(item, "code", None) == "unknown_field"


def error_details(errors) -> dict:
    """Return DRF validation ``errors`` as ``{"field.sub": [{"code", "message"}]}``.

    Nested serializers and lists become dotted paths (``context.bogus``, ``items.3.content``);
    the errors of a nested object or list as a whole are keyed by its path (``source``: not an
    object; ``items``: not 1 to 100 items), those of the body as a whole are under
    ``non_field_errors``. Every ``ValidationError`` goes through here (the exception handler),
    so no endpoint can answer another shape.
    """
    flat: dict = {}

    def entry(item) -> dict:
        return {"code": getattr(item, "code", None) or "invalid", "message": str(item)}

    def walk(prefix: str, value, top: bool = False) -> None:
        # The body as a whole only at the top: a field or parameter named "" (``?=1``) is
        # its own name, not the whole query or body (it was told as both: stop 55's audit).
        name = api_settings.NON_FIELD_ERRORS_KEY if top else prefix
        if isinstance(value, dict):
            for key, inner in value.items():
                if key == api_settings.NON_FIELD_ERRORS_KEY and not top:
                    # DRF's key for a nested serializer's own errors, and the name of an
                    # unknown field sent inside it (StrictSerializer): that one is named at
                    # its own path (it was folded into the object's: stop 59's audit).
                    own = [item for item in inner if not _unknown_field(item)]
                    walk(prefix, own)
                    walk(f"{prefix}.{key}", [item for item in inner if _unknown_field(item)])
                else:
                    walk(str(key) if top else f"{prefix}.{key}", inner)
        elif isinstance(value, (list, tuple)):
            if any(isinstance(inner, (dict, list, tuple)) for inner in value):
                for index, inner in enumerate(value):  # one entry per list item (many=True)
                    if inner:
                        walk(str(index) if top else f"{prefix}.{index}", inner)
            elif value:
                flat.setdefault(name, []).extend(entry(item) for item in value)
        elif value is not None:
            flat.setdefault(name, []).append(entry(value))

    walk("", errors, top=True)
    return flat


def error_body(code: str, message: str, details=None) -> dict:
    """The stable error body, ``{"error": {"code", "message", "details"}}``: DRF's answers
    (``error_response``) and the ones made outside DRF (middleware, the 500 handler) alike."""
    return {"error": {"code": code, "message": message, "details": details or {}}}


def error_response(code: str, message: str, http_status: int, details=None, headers=None):
    """Return the stable error body as a DRF response."""
    return Response(error_body(code, message, details), status=http_status, headers=headers)


UNAVAILABLE = "The memory store is unavailable; carry on without memory and retry later."
BUSY = (
    "Other work held what this request needs for longer than a request waits "
    "(MEMLEDGER_REQUEST_LOCK_TIMEOUT; a very large deletion, say): nothing was changed. "
    "Retry later."
)


def database_unavailable(exc: Exception) -> bool:
    """Whether ``exc`` is the database failing the request rather than a bug: a server that
    is down or went away, a statement or lock wait past its timeout (OperationalError,
    InterfaceError), or a database that takes no writes (SQLSTATE 25006, an InternalError:
    a failover to a standby, ``default_transaction_read_only``). Each answers 503."""
    if isinstance(exc, (OperationalError, InterfaceError)):
        return True
    return is_read_only_database(exc)


def unavailable(exc: Exception) -> tuple[str, str]:
    """Return the code and message of the 503 a database error answers: ``busy`` for a lock
    wait past the request's ``lock_timeout`` (memory_core.rls.request_tenant_set), else
    ``memory_unavailable``."""
    if isinstance(exc.__cause__, LockNotAvailable):
        return "busy", BUSY
    return "memory_unavailable", UNAVAILABLE


def exception_handler(exc, context):
    """Map domain, DRF and database errors to stable JSON errors; never a bare 500.

    A write answered with an error stored nothing (its transaction is rolled back): it gives
    back what the write quota charged it, so a client fixing its own mistakes (a bad body or
    query, a 403, 404 or 409) is not throttled by them, nor one retrying as a 503 tells it to
    (the model unavailable, the subject being deleted, a lock busy: until stop 56 an agent
    retrying through a model outage spent its day's quota on writes that stored nothing); the
    rate limit's charge stays. (A 429 spent nothing already, and a write admission refuses is
    a decision, answered 422 without an exception: it spends.)"""
    response = _error_response(exc, context)
    if response is not None and response.status_code >= 400:
        request = context.get("request")
        if request is not None:
            write_quota_refund(request)
    return response


def _error_response(exc, context):
    if isinstance(exc, DomainError):
        # A refused request changes nothing: what it wrote before the refusal goes back with
        # its transaction (ATOMIC_REQUESTS), as DRF does for its own errors. Each service
        # already rolls its own atomic block back; this covers what a view wrote around one
        # (AccessDenialMiddleware records a 403 in a transaction of its own, after this).
        set_rollback()
        headers = {"Retry-After": "5"} if exc.status == 503 else None
        details = bounded(exc.details) if isinstance(exc, ValidationFailed) else exc.details
        return error_response(exc.code, exc.message, exc.status, details, headers=headers)
    if database_unavailable(exc):
        # The client gets a stable 503; the operator needs the cause (a server down, a
        # statement timeout, a deadlock, a lock timeout, a read-only standby).
        logger.warning("database error answered 503: %s", exc, exc_info=exc)
        set_rollback()
        return error_response(
            *unavailable(exc), status.HTTP_503_SERVICE_UNAVAILABLE, headers={"Retry-After": "5"}
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, TooManyFieldsSent):
        # Django refuses a query string of more parameters than this (a SuspiciousOperation):
        # left to Django, the answer was its HTML "Bad Request" page.
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        exc = InvalidQuery(
            exceptions.ErrorDetail(
                f"The query string holds more than {limit} parameters.",
                code="too_many_parameters",
            )
        )
    if is_tenant_deleted(exc):
        # A request that raced its tenant's deletion: the database refused its rows.
        set_rollback()
        return error_response(
            "tenant_deleted",
            "This tenant was deleted; it takes no more memories, retrievals or exports.",
            status.HTTP_410_GONE,
        )
    if isinstance(exc, DatabaseError):
        return None  # a real bug: let Django report it
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = next((c for klass, c in _DRF_CODES.items() if isinstance(exc, klass)), "error")
    if isinstance(exc, exceptions.ValidationError):
        query = isinstance(exc, InvalidQuery)
        return error_response(
            code,
            QUERY_INVALID if query else BODY_INVALID,
            response.status_code,
            details=bounded(error_details(exc.detail), noun="parameters" if query else "fields"),
            headers=_headers(response),
        )
    detail = response.data.get("detail", "") if isinstance(response.data, dict) else ""
    details = None
    if isinstance(exc, UnsupportedCharset):
        pass  # its message names the charset
    elif isinstance(exc, exceptions.UnsupportedMediaType):
        detail = unsupported_media_type(context.get("request"))
    elif isinstance(exc, exceptions.NotAcceptable):
        detail = not_acceptable(context.get("request"), context.get("view"))
    elif isinstance(exc, exceptions.NotAuthenticated):
        detail = "No API key was sent: send the header Authorization: Bearer <api key>."
    elif isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        refused = refusal(context.get("request"), exc.wait)
        if refused is not None:
            detail, details = refused
    return error_response(
        code, str(detail), response.status_code, details=details, headers=_headers(response)
    )


def unsupported_media_type(request) -> str:
    """Return the 415's message: what to send (DRF's said only ``Unsupported media type
    "text/plain" in request.``, and ``""`` for a request with no Content-Type)."""
    sent = (getattr(request, "content_type", "") or "").strip()
    if not sent:
        return (
            "The request has no Content-Type: send the body as JSON, with "
            "Content-Type: application/json."
        )
    sent = sent[:100].encode("ascii", "backslashreplace").decode("ascii")
    return (
        f'The body must be JSON, sent with Content-Type: application/json (this one was "{sent}").'
    )


def not_acceptable(request, view) -> str:
    """Return the 406's message: what the endpoint answers (DRF's said only "Could not
    satisfy the request Accept header.")."""
    renderers = getattr(view, "renderer_classes", None) or api_settings.DEFAULT_RENDERER_CLASSES
    answers = ", ".join(dict.fromkeys(renderer.media_type for renderer in renderers))
    sent = (request.META.get("HTTP_ACCEPT", "") if request is not None else "")[:100]
    sent = sent.encode("ascii", "backslashreplace").decode("ascii")
    return (
        f'This endpoint answers {answers}; the Accept header sent ("{sent}") accepts none of '
        "that: accept it, or send no Accept header."
    )


def _headers(response):
    return {k: v for k, v in response.items() if k in ("WWW-Authenticate", "Retry-After", "Allow")}
