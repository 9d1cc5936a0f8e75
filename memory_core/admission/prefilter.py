"""A sound prefilter for the guards' regular expressions: literals every match must contain.

``required_literals(pattern)`` walks the parsed pattern and returns strings such that any
match of the pattern contains at least one of them (or ``None`` when it cannot say). A reading
that holds none of them cannot match, so the regex need not run: on ordinary memories 9 of 10
(rule, reading) pairs are settled without a regex scan, and the guards are the bulk of a batch
write's admission cost (docs/performance.md, "Ingest"). ``LiteralIndex`` finds, in one scan of
a reading, the literals of every rule at once.

Soundness is kept narrow on purpose:

- only literals, groups, alternations (every branch must require something) and repeats of at
  least one are read; anything else (classes, lookarounds, backreferences, optional parts)
  adds no requirement, which can only make the prefilter let more through; so does a group
  whose case mode differs from the pattern's;
- a requirement holding a non-ASCII character is dropped, and ``may_match`` runs the regex for
  every reading that is not pure ASCII: for ASCII text and ASCII literals, IGNORECASE matching
  is exactly equality after ``str.lower()`` (Unicode's extra case pairs such as "s"/"ſ" or
  "k"/Kelvin sign need a non-ASCII character on one side).

``tests/memory_core/admission/test_prefilter.py`` checks it against every rule and the
security corpus: no reading the prefilter turns away is matched by the rule's regex.
"""

from __future__ import annotations

import re
from re import _constants as sre_constants  # noqa: PLC2701 - the parser's own node kinds
from re import _parser as sre_parser  # noqa: PLC2701

_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT}


def _required(items, ignorecase: bool) -> frozenset[str] | None:
    """Strings one of which every match of the node sequence ``items`` contains, or None."""
    candidates: list[frozenset[str]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            candidates.append(frozenset(["".join(run)]))
            run.clear()

    for op, av in items:
        if op is sre_constants.LITERAL:
            char = chr(av)
            run.append(char.lower() if ignorecase else char)
            continue
        flush()
        if op is sre_constants.SUBPATTERN:
            _group, add_flags, del_flags, sub = av
            sub_ignorecase = (ignorecase or bool(add_flags & re.IGNORECASE)) and not (
                del_flags & re.IGNORECASE
            )
            # A group of the other case mode would be looked for in the wrong haystack (the
            # pattern's mode decides between the reading and its lower-cased form).
            found = _required(sub, ignorecase) if sub_ignorecase == ignorecase else None
        elif op is sre_constants.BRANCH:
            branches = [_required(branch, ignorecase) for branch in av[1]]
            found = None if any(b is None for b in branches) else frozenset().union(*branches)
        elif op in _REPEATS:
            low, _high, sub = av
            found = _required(sub, ignorecase) if low >= 1 else None
        elif op is sre_constants.ATOMIC_GROUP:
            found = _required(av, ignorecase)
        else:  # classes, anchors, lookarounds, backreferences: no requirement
            found = None
        if found is not None:
            candidates.append(found)
    flush()
    usable = [c for c in candidates if c and all(s and s.isascii() for s in c)]
    if not usable:
        return None
    # The most selective requirement: the one whose shortest literal is longest.
    return max(usable, key=lambda c: (min(map(len, c)), -len(c)))


def required_literals(pattern: re.Pattern) -> tuple[tuple[str, ...], bool] | None:
    """Return (literals, ignorecase) for ``pattern``, or None when it requires nothing."""
    ignorecase = bool(pattern.flags & re.IGNORECASE)
    found = _required(list(sre_parser.parse(pattern.pattern, pattern.flags)), ignorecase)
    return None if found is None else (tuple(sorted(found)), ignorecase)


class Reading:
    """One reading of a text with its lower-cased form, computed once for all rules."""

    __slots__ = ("lower", "text")

    def __init__(self, text: str):
        self.text = text
        self.lower = text.lower() if text.isascii() else None


def may_match(literals: tuple[tuple[str, ...], bool] | None, reading: Reading) -> bool:
    """False only when the rule with ``literals`` cannot match ``reading``."""
    if literals is None or reading.lower is None:
        return True
    needles, ignorecase = literals
    haystack = reading.lower if ignorecase else reading.text
    return any(needle in haystack for needle in needles)


class LiteralIndex:
    """The required literals of a list of patterns, looked for once per reading for them all.

    ``possible(reading)[i]`` is ``may_match(required_literals(patterns[i]), reading)``: the same
    answer, but found in one scan of the reading. The guards' 56 rules require 1,121 literals
    (870 distinct); testing them rule by rule cost about 3 ms per memory of a batch write.

    The scan is one regular expression shaped as a trie of the literals, inside a lookahead so
    it is tried at every position: there it matches the longest literal starting at that
    position (each character picks one branch; backtracking falls back to the deepest literal
    on the path). Every other literal starting there is a prefix of that one, so the literals
    present in the reading are the longest matches and their prefixes among the literals.
    """

    def __init__(self, patterns: list[re.Pattern]):
        self.required = [required_literals(pattern) for pattern in patterns]
        self._folded = _Scanner({n for r in self.required if r and r[1] for n in r[0]})
        self._exact = _Scanner({n for r in self.required if r and not r[1] for n in r[0]})

    def possible(self, reading: Reading) -> list[bool]:
        """Per pattern: False only when it cannot match ``reading``."""
        if reading.lower is None:
            return [True] * len(self.required)
        folded = self._folded.present(reading.lower)
        exact = self._exact.present(reading.text)
        return [
            r is None or not (folded if r[1] else exact).isdisjoint(r[0]) for r in self.required
        ]


class _Scanner:
    """Finds which of a set of literals occur in a text, in one regex scan."""

    def __init__(self, literals: set[str]):
        self._pattern = re.compile(f"(?=({_trie(literals)}))") if literals else None
        self._with_prefixes = {
            literal: frozenset(other for other in literals if literal.startswith(other))
            for literal in literals
        }

    def present(self, text: str) -> set[str]:
        found: set[str] = set()
        if self._pattern is not None:
            for match in self._pattern.finditer(text):
                found |= self._with_prefixes[match.group(1)]
        return found


def _trie(literals: set[str]) -> str:
    """The regex source of a trie of ``literals``: longest match first at every node."""
    root: dict = {}
    for literal in literals:
        node = root
        for char in literal:
            node = node.setdefault(char, {})
        node[""] = {}  # a literal ends here

    def source(node: dict) -> str:
        branches = [re.escape(char) + source(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        return f"(?:{body})?" if "" in node else body

    return source(root)
