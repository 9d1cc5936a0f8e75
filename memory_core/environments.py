"""Environments: the deployment a memory holds in ("staging", "eu-west-1/prod"), or every one.

A memory's ``environment`` is empty when it applies everywhere (most memories: a preference
does not depend on where an agent runs). A non-empty one ties it to that environment alone:
an incident workaround for staging must never steer a production action (the seed's hard
filter, "tied to an environment that no longer matches the active environment").

One parser serves the write body, the import file and the retrieval context, so a name is
spelt the same way everywhere: lower-cased (``Staging`` and ``staging`` are one environment;
operators do not mean two), at most ``MAX_ENVIRONMENT_CHARS``, letters, digits and ``._:/-``,
starting with a letter or digit. The database checks the stored form again
(``memory_environment_valid``). Pure: no ORM, no I/O.
"""

from __future__ import annotations

import re

from memory_core.json_types import wrong_type

MAX_ENVIRONMENT_CHARS = 64
ENVIRONMENT_ALPHABET = "letters, digits and . _ : / -"
# The stored (lower-cased) form; the model's CHECK constraint uses the same expression
# (fullmatch here: Python's ``$`` also matches before a final newline).
ENVIRONMENT_REGEX = r"^([a-z0-9][a-z0-9._:/-]*)?$"
_ENVIRONMENT = re.compile(ENVIRONMENT_REGEX)


class InvalidEnvironment(ValueError):
    """A value that is not an environment name; ``code`` is the API's stable field code."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def normalize_environment(raw) -> str:
    """Return ``raw`` as a stored environment name ("" for none); raise InvalidEnvironment.

    ``None`` and "" both mean "no environment". Nothing is trimmed or replaced: a name with a
    space or an unexpected character is refused, not silently turned into another name.
    """
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise InvalidEnvironment("invalid", wrong_type("a string", raw))
    if len(raw) > MAX_ENVIRONMENT_CHARS:
        raise InvalidEnvironment("max_length", f"At most {MAX_ENVIRONMENT_CHARS} characters.")
    name = raw.lower()
    # ``str.lower`` of a non-ASCII letter may give an ASCII one (the Kelvin sign gives "k"):
    # only ASCII input can be a name.
    if not raw.isascii() or not _ENVIRONMENT.fullmatch(name):
        raise InvalidEnvironment(
            "invalid_environment",
            f"Use {ENVIRONMENT_ALPHABET}, starting with a letter or digit (e.g. 'staging').",
        )
    return name


def validate_stored_environment(value: str) -> None:
    """Model field validator (the admin's form): refuse what the database's CHECK would, with
    a message instead of an integrity error."""
    from django.core.exceptions import ValidationError

    try:
        stored = normalize_environment(value)
    except InvalidEnvironment as exc:
        raise ValidationError(exc.message, code=exc.code) from exc
    if stored != value:
        raise ValidationError(f"Write it in lower case: {stored!r}.", code="invalid_environment")


def environment_applies(memory_environment: str, active_environment: str) -> bool:
    """Return whether a memory tied to ``memory_environment`` may be used where
    ``active_environment`` is active.

    A memory without an environment applies everywhere. A tied one applies only where its own
    environment is the active one; a request that names none gets no tied memory, since
    "the caller did not say" must not let a staging workaround reach production.
    """
    return not memory_environment or memory_environment == active_environment
