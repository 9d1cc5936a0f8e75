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
