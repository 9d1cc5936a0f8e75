"""How an error message names the JSON type of a value: "Must be a string, not an integer."

Shared by the write parser (``memory_core.admission.candidate``), the API's strict fields and
the environment parser (``memory_core.environments``), so every field of a body names another
type in the same words; and ``json_loads``, which the commands read their files with, and
``unique_keys``, the hook that refuses an object naming a key twice (the write parser's and the
import's). Pure: no ORM, no I/O.
"""

import json
import math


class DuplicateKey(ValueError):
    """An object of the JSON names ``key`` twice."""

    def __init__(self, key: str):
        self.key = key
        super().__init__(key)


def unique_keys(pairs: list) -> dict:
    """Build one JSON object (``object_pairs_hook``); raise DuplicateKey for a key named
    twice: parsers disagree about which value wins, so a checker and the service could read
    two records in one."""
    built = dict(pairs)
    if len(built) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return built


class NumberOutOfRange(ValueError):
    """A JSON number beyond a float's range (``float_in_range``)."""


def float_in_range(text: str) -> float:
    """Return the float ``text`` writes; refuse one beyond a float's range, which decodes to
    infinity, or to 0.0 where its mantissa holds a non-zero digit (``1e-400``: stored as zero
    until stop 61's audit of the API)."""
    value = float(text)
    mantissa = text.lower().partition("e")[0]
    underflow = value == 0 and any(digit in "123456789" for digit in mantissa)
    if not math.isfinite(value) or underflow:
        raise NumberOutOfRange(f"Number out of range: {text[:40]}")
    return value


def json_loads(text: str, *, as_api: bool = False):
    """Return the JSON ``text`` parsed, as ``json.loads`` does; arrays or objects nested too
    deeply for Python's parser (it raises RecursionError, ~1,000 levels on) are a
    ``json.JSONDecodeError`` too, so a command names the file or line as for any bad JSON
    instead of dying in a traceback. So is an integer too long for Python to read (over 4,300
    digits: a plain ValueError, a traceback in every command until stop 52's audit). With
    ``as_api``, read as the API reads a body: an object naming a key twice is one too, naming
    the key (at most 40 characters of it), and so is a number beyond a float's range."""
    hook = unique_keys if as_api else None
    parse_float = float_in_range if as_api else None
    try:
        return json.loads(text, object_pairs_hook=hook, parse_float=parse_float)
    except DuplicateKey as exc:
        key = exc.key[:40].encode("utf-8", "backslashreplace").decode("utf-8")
        message = f"the key '{key}' appears twice in one object"
        raise json.JSONDecodeError(message, text, 0) from None
    except RecursionError:
        raise json.JSONDecodeError("arrays or objects nested too deeply to read", text, 0) from None
    except json.JSONDecodeError:
        raise
    except NumberOutOfRange as exc:
        raise json.JSONDecodeError(str(exc), text, 0) from None
    except ValueError:  # int() past sys.get_int_max_str_digits()
        raise json.JSONDecodeError("a number too long to read", text, 0) from None


def json_type(value) -> str:
    """Return the JSON type of a parsed JSON ``value``, as a message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: True is an int to Python
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "NaN or an infinity"
        return "a number with a fraction or an exponent"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def wrong_type(expected: str, value) -> str:
    """Return the message of a value of another JSON type: "Must be a string, not an integer."
    (code ``invalid``)."""
    return f"Must be {expected}, not {json_type(value)}."
