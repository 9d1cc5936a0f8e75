"""Content negotiation that reads an ``Accept`` header's quality values.

DRF's ``DefaultContentNegotiation`` ranks media ranges by how specific they are and ignores
their ``q``: ``Accept: application/json;q=0``, which refuses JSON (RFC 9110, 12.4.2), was
answered JSON. Here a format whose most specific matching range has quality 0 is refused
(``application/json;q=0, */*`` refuses JSON; ``*/*;q=0, application/json`` accepts it), and
the ranges of quality 0 match nothing, so a header that leaves nothing the view renders is
``406 not_acceptable``, as docs/api.md says.

With ``URL_FORMAT_OVERRIDE`` off no parameter chooses the format, yet DRF's
``select_renderer`` still reads ``request.query_params.get(None)``, which parses the query
string. Negotiation runs before authentication (``APIView.initial``), so a query string of
more than 1,000 parameters was answered 400 before the key, the method and the rate limit were
checked, and never counted against the key (stop 61's audit). Negotiation here reads no query
string then: it is parsed where docs/api.md says, after those.
"""

from types import MappingProxyType

from rest_framework import exceptions
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.utils.mediatypes import _MediaType


class QualityNegotiation(DefaultContentNegotiation):
    """``DefaultContentNegotiation`` without what the client refuses (``q=0``)."""

    def select_renderer(self, request, renderers, format_suffix=None):
        ranges = [_MediaType(token) for token in super().get_accept_list(request)]
        allowed = [renderer for renderer in renderers if not _refuses(ranges, renderer)]
        if self.settings.URL_FORMAT_OVERRIDE is None:
            request = _WithoutQueryString(request)
        return super().select_renderer(request, allowed, format_suffix)

    def get_accept_list(self, request):
        return [token for token in super().get_accept_list(request) if not _zero(_MediaType(token))]


class NotAcceptableLast:
    """An API view whose ``406 not_acceptable`` comes after the key, the permission and the
    rate limits, as every other refusal of what a request asks for does.

    DRF negotiates first (``APIView.initial``), so an ``Accept: text/html`` request was
    answered 406 before its key was read: without a key, or with a revoked one, it was a 406
    where docs/api.md says 401, and such requests never counted against the key's rate limit
    (stop 63's audit of authentication; the query string's hole of stop 61 through another
    header). The refusal is kept while the view goes on in JSON, its only format, and raised
    once those checks have passed."""

    not_acceptable: exceptions.NotAcceptable | None = None

    def perform_content_negotiation(self, request, force=False):
        try:
            return super().perform_content_negotiation(request, force)
        except exceptions.NotAcceptable as refusal:
            self.not_acceptable = refusal
            return super().perform_content_negotiation(request, force=True)

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if self.not_acceptable is not None:
            raise self.not_acceptable


class _WithoutQueryString:
    """``request`` as negotiation sees it when no parameter chooses the format: an empty
    query string, so the real one is not parsed before the key is checked."""

    query_params = MappingProxyType({})

    def __init__(self, request):
        self._request = request

    def __getattr__(self, name):
        return getattr(self._request, name)


def _refuses(ranges: list[_MediaType], renderer) -> bool:
    """Whether the most specific of ``ranges`` that matches ``renderer``'s media type has
    quality 0 (RFC 9110: a more specific range overrides a less specific one)."""
    media = _MediaType(renderer.media_type)
    matching = [candidate for candidate in ranges if media.match(candidate)]
    if not matching:
        return False
    return _zero(max(matching, key=lambda candidate: candidate.precedence))


def _zero(media_range: _MediaType) -> bool:
    """Whether ``media_range`` carries a quality of 0; a ``q`` that is no number does not."""
    quality = media_range.params.get("q")
    try:
        return quality is not None and float(quality) == 0
    except ValueError:
        return False
