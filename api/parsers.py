"""The JSON parser: DRF's, plus a clean 400 for bodies nested too deep to decode.

Python's json module raises RecursionError (not ValueError) on a body like ``[[[[...]]]]``
a hundred thousand levels deep, which DRF's parser would let through as a 500.
"""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class SafeJSONParser(JSONParser):
    """DRF's strict JSON parser (no NaN/Infinity) that also refuses pathological nesting."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError("JSON parse error - nested too deeply.") from exc
