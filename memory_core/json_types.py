"""How an error message names the JSON type of a value: "Must be a string, not an integer."

Shared by the write parser (``memory_core.admission.candidate``), the API's strict fields and
the environment parser (``memory_core.environments``), so every field of a body names another
type in the same words; and ``json_loads``, which the commands read their files with. Pure: no
ORM, no I/O.
"""

import json
import math


def json_loads(text: str):
    """Return the JSON ``text`` parsed, as ``json.loads`` does; arrays or objects nested too
    deeply for Python's parser (it raises RecursionError, ~1,000 levels on) are a
    ``json.JSONDecodeError`` too, so a command names the file or line as for any bad JSON
    instead of dying in a traceback. So is an integer too long for Python to read (over 4,300
    digits: a plain ValueError, a traceback in every command until stop 52's audit)."""
    try:
        return json.loads(text)
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
