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


def json_loads(text: str, *, refuse_duplicate_keys: bool = False):
    """Return the JSON ``text`` parsed, as ``json.loads`` does; arrays or objects nested too
    deeply for Python's parser (it raises RecursionError, ~1,000 levels on) are a
    ``json.JSONDecodeError`` too, so a command names the file or line as for any bad JSON
    instead of dying in a traceback. So is an integer too long for Python to read (over 4,300
    digits: a plain ValueError, a traceback in every command until stop 52's audit). With
    ``refuse_duplicate_keys``, an object naming a key twice is one too, naming the key (at most
    40 characters of it)."""
    hook = unique_keys if refuse_duplicate_keys else None
    try:
        return json.loads(text, object_pairs_hook=hook)
    except DuplicateKey as exc:
        key = exc.key[:40].encode("utf-8", "backslashreplace").decode("utf-8")
        message = f"the key '{key}' appears twice in one object"
        raise json.JSONDecodeError(message, text, 0) from None
    except RecursionError:
        raise json.JSONDecodeError("arrays or objects nested too deeply to read", text, 0) from None
    except json.JSONDecodeError:
        raise
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
