"""Text normalization shared by hashing, dedup and the guards."""

import hashlib
import re
import unicodedata

_SPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Return ``text`` in NFKC, lower case, with runs of whitespace collapsed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip().lower()


def format_scope(kind: str, ref: str) -> str:
    """Return a scope as one string: ``global``, or ``kind:ref`` (the inverse of parse_scope)."""
    return "global" if kind == "global" else f"{kind}:{ref}"


def content_hash(text: str) -> str:
    """Return the SHA-256 of the normalized text: equal for trivially different copies."""
    return hashlib.sha256(normalize_text(text).encode()).hexdigest()
