"""Text normalization shared by hashing, dedup and the guards."""

import hashlib
import re
import unicodedata

from django.core.exceptions import ValidationError

_SPACE = re.compile(r"\s+")
# An absolute path of the server's disks, as errors write them: quoted, whole up to its
# closing quote (an OSError's "Permission denied: '/srv/my evals/a.jsonl'"), or bare, a slash
# (or "~/") not inside a word or a relative path, up to a space, a quote or a separator.
_QUOTED_PATH = re.compile(r"""(['"])~?/[^'"\n]*\1""")
_BARE_PATH = re.compile(r"""(?<![\w.~/-])~?/[^\s'"`,:;()\[\]{}<>]*""")


# Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069). In an id
# they reorder how it, and the text after it, is shown: "\u202eecila" read as "alice" in the
# reviewer's queue, and the rest of its line backwards ("Trojan Source"; stop 51's audit).
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
BIDI_CONTROLS_MESSAGE = (
    "Bidirectional control characters (U+202A to U+202E, U+2066 to U+2069) are not allowed in "
    "an id: they change how it, and the text shown after it, read."
)


def lone_surrogate(text: str) -> str | None:
    """Return the first lone surrogate (U+D800 to U+DFFF) of ``text``, or None. No UTF-8 text
    holds one; a JSON string's escape (``"\\ud800"``) can, as a request read with a charset
    such as ``unicode_escape`` could until stop 64 (the charsets read: ``api.parsers``)."""
    return next((c for c in text if 0xD800 <= ord(c) <= 0xDFFF), None)


def refuse_lone_surrogates(value) -> None:
    """A form field's validator: refuse text holding a lone surrogate (``\\ud800``), which
    PostgreSQL could not be sent (a search), nor a hasher (a password), nor an answer encode
    (the form shown again): a 500 each. The API refuses it with the same code (DRF's
    ProhibitSurrogateCharactersValidator, whose error a Django form would not catch)."""
    surrogate = lone_surrogate(value) if isinstance(value, str) else None
    if surrogate is not None:
        raise ValidationError(
            "This text holds a character that is not Unicode text (U+%(code)X): remove it.",
            code="surrogate_characters_not_allowed",
            params={"code": ord(surrogate)},
        )


def identifier(text: str) -> str:
    """Return an id (a subject's, a key, a scope's ref) as every path stores and looks it up:
    without surrounding whitespace, in Unicode NFC. "José" typed on most systems and "José"
    from a macOS client (NFD) are the same text; stored as sent they were two subjects, and a
    deletion of one left the other's memories (stop 51's audit)."""
    return unicodedata.normalize("NFC", text.strip())


def normalize_text(text: str) -> str:
    """Return ``text`` in NFKC, lower case, with runs of whitespace collapsed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip().lower()


def format_scope(kind: str, ref: str) -> str:
    """Return a scope as one string: ``global``, or ``kind:ref`` (the inverse of parse_scope)."""
    return "global" if kind == "global" else f"{kind}:{ref}"


def content_hash(text: str) -> str:
    """Return the SHA-256 of the normalized text: equal for trivially different copies."""
    return hashlib.sha256(normalize_text(text).encode()).hexdigest()


def without_paths(text: str) -> str:
    """Return ``text`` with each absolute path in it replaced by ``<path>``: an error's words as
    a tenant's reviewers are shown them (the server's folders and files are the operator's,
    whom the admin and the log show them whole)."""
    return _BARE_PATH.sub("<path>", _QUOTED_PATH.sub(r"\1<path>\1", text))
