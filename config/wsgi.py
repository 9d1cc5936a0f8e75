"""WSGI entry point (gunicorn config.wsgi)."""

import os
from email.message import Message

import django
from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest, get_bytes_from_wsgi
from django.http import QueryDict
from django.utils.functional import cached_property
from django.utils.http import parse_header_parameters

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")


def unreadable_rfc2231_charset(line: str) -> str | None:
    """The first charset of an RFC 2231 parameter of the header ``line`` (``x*=<charset>'
    <lang>'<value>``, any parameter) that ``api.parsers`` does not read, or None, read as
    Django's ``parse_header_parameters`` reads them: it looks each one up (``codecs.lookup``),
    and Python's codec search keeps every name it is asked for, one it does not know too, for
    the worker's life (stop 64's review of the API's charsets)."""
    from api.parsers import is_readable_charset

    if ";" not in line:
        return None  # Django's fast path: no parameters, nothing looked up
    header = Message()
    header["content-type"] = line
    for _, value in (header.get_params() or [])[1:]:
        if isinstance(value, tuple) and value[0] and not is_readable_charset(value[0]):
            return value[0]
    return None


def _readable_accept(accept: str) -> str:
    """``accept`` with each media range (as DRF splits them, at commas) whose parameters name
    a charset this server does not read (``unreadable_rfc2231_charset``) reduced to its
    media type: DRF's negotiation parses every range with ``parse_header_parameters``."""
    ranges = accept.split(",")
    return ",".join(
        media_range.split(";", 1)[0] if unreadable_rfc2231_charset(media_range) else media_range
        for media_range in ranges
    )


class MemledgerWSGIRequest(WSGIRequest):
    """Django's request, built even when its Content-Type cannot be read.

    Django parses the header's parameters while it builds the request, before any
    middleware: a parameter it refuses (an RFC 2231 charset it does not know,
    ``charset*=bogus''utf-8``) raised ValueError there, and the server answered a bare 500.
    Here the request is built with the media type alone and ``content_type_error`` says why;
    ``api.middleware.UnreadableContentTypeMiddleware`` answers it 400 (415 under /api/ for a
    charset, ``unreadable_charset``).

    A charset Django can look up becomes the request's encoding, and Django decoded the query
    string with it as it built the request: one that names a codec but no text encoding
    (``base64``, ``rot13``, ``bz2_codec``) raised LookupError there, a bare 500 for any request
    with a query string. Such a charset is refused as unreadable, and so is any charset the
    JSON parser does not read (``api.parsers.READABLE_CHARSETS``): ``punycode`` and ``idna``
    decode in quadratic time, a portal form's fields too. And the query string is read
    as UTF-8 whatever the charset says: a URL is percent-encoded UTF-8, and a charset such as
    ``unicode_escape`` turned ``?q=%5Cud800`` into a lone surrogate, which no answer or column
    can hold.

    A POST's multipart body (``multipart/form-data``) is marked ``multipart_form``, and
    ``UnreadableContentTypeMiddleware`` refuses it (415) before anything reads ``request.POST``:
    Django's ``MultiPartParser`` reads each part's headers with ``parse_header_parameters``,
    which looks up the charset of every RFC 2231 parameter (``filename*=<charset>''...``),
    out of this class's reach, so a made-up name per part was kept for the worker's life
    (stop 64's review of the API's charsets). Nothing this server serves takes one: the
    portal's and the admin's forms post ``application/x-www-form-urlencoded`` (no template
    asks for ``enctype="multipart/form-data"``, no model has a file field) and the API reads
    JSON only. Django's test client posts multipart by default but builds its own request,
    so the tests' posts are unaffected.
    """

    content_type_error: str | None = None
    unreadable_charset: str | None = None
    multipart_form: bool = False

    def __init__(self, environ):
        super().__init__(environ)
        # Exactly what Django's request.POST would parse as multipart (HttpRequest.
        # _load_post_and_files): a POST of that media type, whatever its parameters.
        self.multipart_form = self.method == "POST" and self.content_type == "multipart/form-data"

    def _set_content_type_params(self, meta):
        if "HTTP_ACCEPT" in meta:  # Django rewrites its environ too (PATH_INFO)
            meta["HTTP_ACCEPT"] = _readable_accept(meta["HTTP_ACCEPT"])
        try:
            unreadable = unreadable_rfc2231_charset(meta.get("CONTENT_TYPE", ""))
            if unreadable is not None:  # refused before Django looks it up, as Django does
                raise ValueError(f"Invalid encoding {unreadable[:40]!r} for RFC 2231 param.")
            content_type, params = parse_header_parameters(meta.get("CONTENT_TYPE", ""))
        except ValueError as exc:
            self.content_type = meta.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()
            self.content_params = {}
            self.content_type_error = str(exc)
            return
        # Imported here: api.parsers needs the apps, which are not ready when gunicorn
        # imports this module.
        from api.parsers import is_readable_charset

        charset = params.get("charset")
        if charset is None or is_readable_charset(charset):
            super()._set_content_type_params(meta)
            return
        # Refused before Django looks the charset up: Python keeps every name it is asked for.
        self.content_type, self.content_params = content_type, params
        self.unreadable_charset = charset
        shown = charset[:40].encode("ascii", "backslashreplace").decode("ascii")
        self.content_type_error = f'the charset "{shown}" is not one this server reads'

    @cached_property
    def GET(self):
        """Return the query string's parameters, decoded as UTF-8 (not as the charset)."""
        return QueryDict(get_bytes_from_wsgi(self.environ, "QUERY_STRING", ""), encoding="utf-8")


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
