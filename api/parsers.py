"""The JSON parser: DRF's strict one, plus a clean 400 for what it would let through.

- Python's json module raises RecursionError (not ValueError) on a body like ``[[[[...]]]]``
  a hundred thousand levels deep, which DRF's parser would let through as a 500.
- A number too large for a float (``1e400``) decodes to infinity, which strict JSON refuses
  when it is spelt ``Infinity``: it is refused here too, as malformed JSON.
"""

import codecs
import json
import math

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils.json import strict_constant


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"Number out of range: {text[:40]}")
    return value


class SafeJSONParser(JSONParser):
    """DRF's strict JSON parser (no NaN/Infinity) that also refuses pathological nesting and
    numbers beyond a float's range."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            # DRF's get_encoding refuses the charsets that would decompress the body.
            decoded = codecs.getreader(get_encoding(parser_context or {}))(stream)
            return json.load(decoded, parse_constant=strict_constant, parse_float=_finite_float)
        except RecursionError as exc:
            raise ParseError("JSON parse error - nested too deeply.") from exc
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
