"""The JSON parser: DRF's strict one, plus a clean 400 for what it would let through.

- Python's json module raises RecursionError (not ValueError) on a body like ``[[[[...]]]]``
  a hundred thousand levels deep, which DRF's parser would let through as a 500.
- A body a little shallower parses, but later code walks it recursively with a deeper stack
  (DRF's ``JSONField`` calls ``json.dumps``) and raised RecursionError there: a 500 for
  bodies ~900 levels deep. So the parser measures the depth (iteratively) and refuses any
  body nested deeper than ``MAX_DEPTH``: no value may be deeper than
  ``HARD_MAX_VALUE_DEPTH`` anyway, and the margin leaves the envelope (a batch's items) and a
  value somewhat too deep to the field error ``value: too_deep``.
- A number too large for a float (``1e400``) decodes to infinity, which strict JSON refuses
  when it is spelt ``Infinity``: it is refused here too, as malformed JSON. So is one too
  small (``1e-400``), which decoded to 0.0 and was stored as zero (stop 61's audit); a zero
  written so (``0e5``, ``-0.0``) is kept, and so is a subnormal (``5e-324``).
- A UTF-8 body may start with a byte order mark (RFC 8259 lets a parser ignore it).
- An object key holding a lone surrogate (``"\\ud800"``) is no text: a value holding one is
  refused by its field, but an unknown key is named in the error, which could not be encoded
  (a 500). It is refused here, as malformed JSON.
- A charset that names no text encoding Python knows (``application/json; charset=bogus``)
  was dropped by Django, and the body read as UTF-8 as if none were named; one that names a
  codec but no text encoding (``bz2_codec``) was DRF's ParseError, a 400 ``malformed_json``
  for a body nobody had read. Either is now a 415 naming the charset: the JSON may be fine, the
  media type is what the API cannot read. So is a text encoding outside
  ``READABLE_CHARSETS``: ``punycode`` and ``idna`` decode in quadratic time, and 600 KB of
  punycode kept a worker 35 s (stop 64's audit of the API).
- An object that names a key twice (``{"subject": "a", "subject": "b"}``) has no one
  meaning: Python's json kept the last and every field read it, while a proxy or a log
  reading the first saw another request. It is refused here, as malformed JSON naming the key.
- A Content-Type that is a media range (``*/*``, ``application/*``) names no type: DRF's
  parser selection let its wildcard match ``application/json`` and the body was stored. It is
  a 415, as any body not sent as ``application/json`` is.
"""

import codecs
import encodings
import encodings.aliases
import json

from django.utils.http import parse_header_parameters
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils.json import strict_constant

from memory_core.admission.candidate import HARD_MAX_VALUE_DEPTH
from memory_core.json_types import DuplicateKey, float_in_range, unique_keys

MAX_DEPTH = HARD_MAX_VALUE_DEPTH + 16


# The charsets a body is read in, as Python's codec search names them once it has applied its
# aliases (``charset_name``): JSON's, UTF-8, UTF-16 and UTF-32 (RFC 8259, 8.1), Latin-1, which
# docs/api.md promises, and ASCII, a part of UTF-8. Each decodes in linear time. The portal's
# forms are refused in any other (config/wsgi.py).
READABLE_CHARSETS = frozenset(
    {"utf_8", "utf_16", "utf_16_le", "utf_16_be", "utf_32", "utf_32_le", "utf_32_be"}
    | {"latin_1", "ascii"}
)


class UnsupportedCharset(UnsupportedMediaType):
    """A Content-Type whose charset is none of ``READABLE_CHARSETS`` (a 415 with its own
    message)."""

    def __init__(self, charset: str):
        shown = charset[:40].encode("ascii", "backslashreplace").decode("ascii")
        super().__init__(
            charset,
            detail=(
                f'The Content-Type names the charset "{shown}", which this API does not '
                "read: send the JSON as UTF-8, with Content-Type: application/json "
                "(charset=utf-8, or none)."
            ),
        )


def declared_charset(parser_context: dict) -> str | None:
    """Return the charset the request's Content-Type names, or None. Django keeps only one
    it can look up (``request.encoding``), so the header is read again here."""
    request = parser_context.get("request")
    content_type = getattr(request, "content_type", "") or ""
    _, params = parse_header_parameters(content_type)
    return params.get("charset")


def charset_name(charset: str) -> str:
    """The name Python's codec search gives ``charset`` (``UTF8``, ``utf-8`` and ``u8`` are
    ``utf_8``), read off its alias table, never looked up: the search keeps every name it is
    asked for, one it does not know too, for the life of the process, so a charset made up
    for each request grew a worker without end (stop 64's fix of the API audit)."""
    name = encodings.normalize_encoding(charset.lower())
    return encodings.aliases.aliases.get(name, name)


def is_readable_charset(charset: str) -> bool:
    """Whether ``charset`` names one of ``READABLE_CHARSETS``, by any of its aliases, in
    ASCII: ``encodings.normalize_encoding`` drops a letter outside it (``uétf-8`` is
    ``utf_8``) where ``codecs.lookup`` reads it as a separator (``u_tf_8``), so such a name
    counted as readable and Django then looked it up, and kept it, by its raw name (stop 64's
    review of the API's charsets)."""
    return charset.isascii() and charset_name(charset) in READABLE_CHARSETS


def _quoted(key: str) -> str:
    """Return ``key`` as an error message quotes it: at most 40 characters, a lone surrogate
    escaped (it could not be encoded in the answer)."""
    return key[:40].encode("utf-8", "backslashreplace").decode("utf-8")


def json_depth_exceeds(data, limit: int) -> bool:
    """Return whether ``data`` nests objects and arrays more than ``limit`` levels deep (a
    scalar is 0 levels, ``[]`` one); iterative, so any depth is measured without recursion."""
    stack = [(data, 1)] if isinstance(data, (dict, list)) else []
    while stack:
        container, depth = stack.pop()
        if depth > limit:
            return True
        for inner in container.values() if isinstance(container, dict) else container:
            if isinstance(inner, (dict, list)):
                stack.append((inner, depth + 1))
    return False


def lone_surrogate_key(data) -> str | None:
    """Return the first object key in ``data`` that holds a lone surrogate, escaped, or None."""
    stack = [data] if isinstance(data, (dict, list)) else []
    while stack:
        container = stack.pop()
        if isinstance(container, dict):
            for key in container:
                try:
                    key.encode("utf-8")
                except UnicodeEncodeError:
                    return key.encode("utf-8", "backslashreplace").decode("ascii", "replace")
            inner = container.values()
        else:
            inner = container
        stack.extend(value for value in inner if isinstance(value, (dict, list)))
    return None


class SafeJSONParser(JSONParser):
    """DRF's strict JSON parser (no NaN/Infinity) that also refuses pathological nesting and
    numbers beyond a float's range."""

    def parse(self, stream, media_type=None, parser_context=None):
        main_type, _, sub_type = parse_header_parameters(media_type or "")[0].partition("/")
        if "*" in (main_type, sub_type):
            raise UnsupportedMediaType(media_type)
        charset = declared_charset(parser_context or {})
        if charset is not None and not is_readable_charset(charset):
            raise UnsupportedCharset(charset)
        try:
            # The charset checked above (the request's encoding), or UTF-8 if none is named.
            encoding = get_encoding(parser_context or {})
            if codecs.lookup(encoding).name == "utf-8":
                # A leading byte order mark is ignored, as RFC 8259 (8.1) allows: some
                # editors and shells write one, and json refused it in Python's words.
                encoding = "utf-8-sig"
            decoded = codecs.getreader(encoding)(stream)
            data = json.load(
                decoded,
                parse_constant=strict_constant,
                parse_float=float_in_range,
                object_pairs_hook=unique_keys,
            )
        except DuplicateKey as exc:
            raise ParseError(
                f"JSON parse error - the key '{_quoted(exc.key)}' appears twice in one object: "
                "send each key once."
            ) from exc
        except RecursionError as exc:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels.") from exc
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
        if json_depth_exceeds(data, MAX_DEPTH):
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels.")
        key = lone_surrogate_key(data)
        if key is not None:
            raise ParseError(
                # Escaped already (lone_surrogate_key): quoted as is, since repr() would
                # double the escape's backslash.
                f"JSON parse error - the key '{key[:40]}' holds a lone surrogate (no text)."
            )
        return data
