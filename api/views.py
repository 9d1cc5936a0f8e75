"""API views: parse, call one memory_core service or selector, render."""

import re

from django.conf import settings
from django.http import HttpResponsePermanentRedirect
from django.urls import Resolver404, resolve
from drf_spectacular.utils import extend_schema, extend_schema_field
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework import exceptions, serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from api.exceptions import InvalidQuery
from api.negotiation import NotAcceptableLast
from api.parsing import QueryStringChecked, handles_method, named
from api.responses import AGENT
from api.reviews import ReviewerView

# The reviewer API's paths: a portal session authenticates them, not an API key.
REVIEWER_PREFIX = "/api/v1/review/"


class WhoAmIOutput(serializers.Serializer):
    """What an API key stands for (the schema described it as any object)."""

    tenant_id = serializers.UUIDField()
    agent_id = serializers.UUIDField()
    agent = serializers.CharField(source="agent_name")
    read_types = serializers.SerializerMethodField()
    write_types = serializers.SerializerMethodField()
    max_sensitivity = serializers.CharField()
    # Whether it acts for any subject, or only for a subject token's (and whose).
    any_subject = serializers.BooleanField()
    subject = serializers.CharField(
        source="bound_user_id",
        allow_null=True,
        help_text="The subject token's subject (X-Memledger-Subject-Token), or null.",
    )
    issues_subject_tokens = serializers.BooleanField()

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_read_types(self, principal) -> list[str]:
        return sorted(principal.read_types)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_write_types(self, principal) -> list[str]:
        return sorted(principal.write_types)


class WhoAmIView(QueryStringChecked, APIView):
    """Return the tenant and agent the API key is bound to."""

    @extend_schema(responses={200: WhoAmIOutput, **AGENT})
    def get(self, request):
        return Response(WhoAmIOutput(request.user).data)


@extend_schema(exclude=True)
class NoEndpointView(NotAcceptableLast, APIView):
    """Any path under /api/ that names no endpoint, or an id that is not a UUID: the JSON
    ``not_found`` error for every method (after authentication, as every endpoint: an API key,
    or under the reviewer API a reviewer's session), never Django's HTML page."""

    reads_only = True  # nothing is written, so no write quota is spent

    def reviewer_path(self) -> bool:
        """Whether the path lies under the reviewer API, which answers it as its endpoints do:
        a 404 to a reviewer's session, 403 ``forbidden`` to anyone else (never a 401 asking a
        logged-in reviewer for an API key)."""
        return self.request.path.startswith(REVIEWER_PREFIX)

    def get_authenticators(self):
        if self.reviewer_path():
            return [auth() for auth in ReviewerView.authentication_classes]
        return super().get_authenticators()

    def get_permissions(self):
        if self.reviewer_path():
            return [permission() for permission in ReviewerView.permission_classes]
        return super().get_permissions()

    def permission_denied(self, request, message=None, code=None):
        if self.reviewer_path():
            return ReviewerView.permission_denied(self, request, message, code)  # raises 403
        return super().permission_denied(request, message, code)

    def http_method_not_allowed(self, request, *args, **kwargs):
        if self.without_trailing_slash():
            raise exceptions.NotFound(
                f"No such endpoint; drop the trailing slash: {request.path.rstrip('/')}"
            )
        raise exceptions.NotFound(
            f"There is nothing at {request.path}: check the endpoint, and that the ids in the "
            "path are UUIDs (docs/api.md)."
        )

    def without_trailing_slash(self) -> bool:
        """Whether the path names an endpoint once its trailing slashes are dropped (the
        API's paths have none: ``/api/v1/whoami/`` is ``/api/v1/whoami``)."""
        path = self.request.path_info
        if not path.endswith("/") or not path.rstrip("/"):
            return False
        try:
            match = resolve(path.rstrip("/"))
        except Resolver404:
            return False
        return getattr(match.func, "view_class", None) is not NoEndpointView

    # APIView answers OPTIONS itself (metadata, 200) and every answer carries an Allow
    # header: neither may describe an endpoint that does not exist.
    def options(self, request, *args, **kwargs):
        return self.http_method_not_allowed(request, *args, **kwargs)

    @property
    def default_response_headers(self):
        return {k: v for k, v in super().default_response_headers.items() if k != "Allow"}


class _JsonUnlessTheDocument:
    """The schema and its docs page answer their document in its own format (OpenAPI YAML or
    JSON, the Swagger page's HTML); an error, and ``OPTIONS`` (the methods, as every endpoint
    answers it), in JSON, as every other API answer. Through the views' own renderers, a
    method they lack was Django's text page on the docs page and YAML on the schema, and
    ``OPTIONS /api/docs/`` a 500 (the page's template rendered without its names)."""

    def finalize_response(self, request, response, *args, **kwargs):
        if request.method == "OPTIONS" or response.status_code >= 400:
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)


SCHEMA_PARAMETER = "Unknown parameter: the schema takes lang, version and format (json or yaml)."


class SchemaView(_JsonUnlessTheDocument, SpectacularAPIView):
    """``/api/schema/``: the OpenAPI document, public.

    Its query string is drf-spectacular's: ``lang``, ``version`` and ``format`` (``json`` or
    ``yaml``, as an ``Accept`` header would choose). ``?format=json`` was ignored (the
    project's ``URL_FORMAT_OVERRIDE`` is off, so that ``?format=api`` is no renderer) and
    answered YAML with a 200; another parameter is ``unknown_field``, as on every endpoint
    (stop 56's audit of the API)."""

    authentication_classes = []
    permission_classes = []
    query_names = frozenset({"lang", "version", "format"})
    # drf-spectacular writes ``version`` into the answer's ``Content-Disposition`` (the file
    # name, "memledger API (<version>).yaml"), as sent: a line break there was a 500, a control
    # character gunicorn's 500, a quote a header parameter of the caller's (``filename*``
    # naming the document evil.html; stop 63's audit of the API). A version is a short token.
    VERSION = re.compile(r"[A-Za-z0-9._-]{1,32}")
    BAD_VERSION = "A version is 1 to 32 letters, digits, dots, hyphens or underscores."
    # drf-spectacular translates the document under ``translation.override(lang)``, and
    # Django keeps a translation for every language string it is given, for the worker's
    # life: a made-up ``lang`` a request grew every worker for good (stop 64's audit of the
    # API). A lang is one the settings list, as the schema's own parameter enumerates them.
    BAD_LANG = "A lang is a language code of Django's LANGUAGES, such as en, de, pt-br or zh-hans."

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if not handles_method(self, request):
            return  # the 405 comes first, as on every endpoint (``handles_method``)
        # Every mistake of the query string in one answer, as docs/api.md says of a 400: the
        # unknown parameters' came alone, and a bad version was heard of only on the next
        # try (stop 63's review).
        errors = {
            name: [serializers.ErrorDetail(SCHEMA_PARAMETER, code="unknown_field")]
            for name in sorted(named({name: None for name in self._unknown(request)}))
        }
        version = request.query_params.get("version")
        if version is not None and not self.VERSION.fullmatch(version):
            errors["version"] = [serializers.ErrorDetail(self.BAD_VERSION, code="invalid")]
        lang = request.query_params.get("lang")
        language = None if lang is None else self._language(lang)
        if lang is not None and language is None:
            errors["lang"] = [serializers.ErrorDetail(self.BAD_LANG, code="invalid")]
        if errors:
            raise InvalidQuery(errors)
        if language is not None:
            # drf-spectacular reads ``lang`` off the query string: the code as the settings
            # spell it, or each casing of a tag would be one more translation kept.
            query = request._request.GET.copy()
            query["lang"] = language
            request._request.GET = query

    @staticmethod
    def _language(lang: str) -> str | None:
        """The code of ``LANGUAGES`` that ``lang`` names, or None. A language tag is
        case-insensitive (BCP 47): a browser sends ``pt-BR`` and ``zh-Hans``, which were a 400
        while the settings spell them ``pt-br`` and ``zh-hans`` (stop 64's review of the
        API's charsets and schema lang)."""
        return {code.lower(): code for code, _ in settings.LANGUAGES}.get(lang.lower())

    def _unknown(self, request) -> set[str]:
        """Return the parameters the schema does not take: any but ``query_names``, and a
        ``format`` that names no renderer."""
        return {
            name
            for name, value in request.query_params.items()
            if name not in self.query_names
            or (name == "format" and value not in self._formats(request))
        }

    def perform_content_negotiation(self, request, force=False):
        wanted = request.query_params.get("format")
        renderer = self._formats(request).get(wanted)
        if renderer is None:
            return super().perform_content_negotiation(request, force)
        return renderer, renderer.media_type

    def _formats(self, request) -> dict:
        """The first renderer of each format (``json``, ``yaml``)."""
        formats: dict = {}
        for renderer in self.get_renderers():
            formats.setdefault(renderer.format, renderer)
        return formats


class DocsView(_JsonUnlessTheDocument, SpectacularSwaggerView):
    """``/api/docs/``: the Swagger page over ``/api/schema/``, public."""

    authentication_classes = []
    permission_classes = []
    url_name = "schema"


@extend_schema(exclude=True)
class SchemaWithoutSlashView(APIView):
    """``/api/schema`` and ``/api/docs`` without their slash: a GET or HEAD is sent to the
    slashed path, as Django's APPEND_SLASH would; any other method is the JSON 405 the slashed
    path answers. (Left to APPEND_SLASH, a POST was a bare redirect that drops its body, and
    under DEBUG Django's HTML error page.)"""

    authentication_classes = []
    permission_classes = []
    reads_only = True  # nothing is written, so no write quota is spent

    def get(self, request, *args, **kwargs):
        return HttpResponsePermanentRedirect(request.get_full_path(force_append_slash=True))
