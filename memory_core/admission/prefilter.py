"""A sound prefilter for the guards' regular expressions: literals every match must contain.

``required_literals(pattern)`` walks the parsed pattern and returns its requirements: sets of
strings such that any match of the pattern contains one string of each set (or ``None`` when
it cannot say). A reading that misses a set cannot match, so the regex need not run: on
the benchmark's memories 98 of 100 (rule, reading) pairs are settled without a regex scan
(97 of 100 with each rule's most selective set alone), and the guards are the bulk of a batch
write's admission cost (docs/performance.md, sections 8 and 16).
``LiteralIndex`` finds, in one scan of a reading, the literals of every rule at once.

Soundness is kept narrow on purpose:

- only literals, classes of a few literal characters, groups, alternations (every branch must
  require something), optional parts and repeats of at least one are read; anything else
  (wider classes, backreferences) adds no requirement, which can only make the prefilter let
  more through; so does a group whose case mode differs from the pattern's;
- adjacent parts that match one of a few fixed strings each (``(?:which|it) (?:is|means)``)
  require one of their concatenations (at most ``MAX_EXACT`` of them); zero-width parts
  (``\b``, lookarounds) keep their neighbours adjacent;
- ``may_match`` runs the regex for every reading that is not pure ASCII, so a requirement
  only ever turns away ASCII readings. For ASCII text and ASCII literals, IGNORECASE matching
  is exactly equality after ``str.lower()`` (Unicode's extra case pairs such as "s"/"ſ" or
  "k"/Kelvin sign need a non-ASCII character on one side). A required string holding a
  non-ASCII character that matches no ASCII one (the pattern is case-sensitive, or the
  character has no case, like "€") is in no ASCII reading and is left out; one holding any
  other non-ASCII character makes its requirement unusable.

``tests/memory_core/admission/test_prefilter.py`` checks it against every rule and the
security corpus: no reading the prefilter turns away is matched by the rule's regex.
"""

from __future__ import annotations

import _sre  # noqa: PLC2701 - the case tables re itself uses
import re
from re import _constants as sre_constants  # noqa: PLC2701 - the parser's own node kinds
from re import _parser as sre_parser  # noqa: PLC2701

import ahocorasick

_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT}
_ZERO_WIDTH = {sre_constants.AT, sre_constants.ASSERT, sre_constants.ASSERT_NOT}
# The most strings an exact set may hold: a product that would exceed it is cut there.
MAX_EXACT = 64
_EMPTY = frozenset([""])


def _never_in_ascii(char: str, ignorecase: bool) -> bool:
    """Whether the pattern character ``char`` can match no ASCII character.

    A non-ASCII character matches only itself, unless IGNORECASE pairs it with a case variant
    (Python's ``re`` pairs "ſ" with "s", the Kelvin sign with "k"): uncased ones never.
    """
    return not char.isascii() and not (ignorecase and _sre.unicode_iscased(ord(char)))


def _chars(codes, ignorecase: bool) -> frozenset[str]:
    """The strings pattern characters ``codes`` stand for in an ASCII reading's haystack.

    An ASCII character is looked for lower-cased when the pattern ignores case. A character
    no ASCII one matches stands for nothing (no ASCII reading holds it). Any other non-ASCII
    character stays as it is, so a requirement holding it is unusable: ``str.lower`` is not
    how ``re`` pairs cases ("İ".lower() is two characters; IGNORECASE pairs "İ" with "i").
    """
    found = set()
    for code in codes:
        char = chr(code)
        if char.isascii():
            found.add(char.lower() if ignorecase else char)
        elif not _never_in_ascii(char, ignorecase):
            found.add(char)
    return frozenset(found)


def _exact_node(op, av, ignorecase: bool) -> frozenset[str] | None:
    """Every string the node can match, when it is one of a few fixed strings, or None."""
    if op is sre_constants.LITERAL:
        return _chars([av], ignorecase)  # empty: this node is in no ASCII reading
    if op is sre_constants.IN:
        if len(av) > MAX_EXACT or any(kind is not sre_constants.LITERAL for kind, _ in av):
            return None  # ranges, categories, negation: too many strings
        return _chars([code for _, code in av], ignorecase)
    if op in _ZERO_WIDTH:
        return _EMPTY  # consumes nothing: its neighbours' strings stay adjacent
    if op is sre_constants.SUBPATTERN:
        _group, add_flags, del_flags, sub = av
        if _case_mode(ignorecase, add_flags, del_flags) != ignorecase:
            return None
        return _exact(sub, ignorecase)
    if op is sre_constants.ATOMIC_GROUP:
        return _exact(av, ignorecase)
    if op is sre_constants.BRANCH:
        branches = [_exact(branch, ignorecase) for branch in av[1]]
        if any(b is None for b in branches):
            return None
        union = frozenset().union(*branches)
        return union if len(union) <= MAX_EXACT else None
    if op in _REPEATS:
        low, high, sub = av
        if high > 1:
            return None
        one = _exact(sub, ignorecase)
        if one is None:
            return None
        if high == 0:
            return _EMPTY
        return one if low == 1 else one | _EMPTY
    return None


def _exact(items, ignorecase: bool) -> frozenset[str] | None:
    """Every string the node sequence ``items`` can match, when they are few, or None."""
    strings = _EMPTY
    for op, av in items:
        one = _exact_node(op, av, ignorecase)
        if one is None:
            return None
        strings = _product(strings, one)
        if strings is None:
            return None
    return strings


def _product(left: frozenset[str], right: frozenset[str]) -> frozenset[str] | None:
    if len(left) * len(right) > MAX_EXACT:
        return None
    return frozenset(a + b for a in left for b in right)


def _case_mode(ignorecase: bool, add_flags: int, del_flags: int) -> bool:
    return (ignorecase or bool(add_flags & re.IGNORECASE)) and not (del_flags & re.IGNORECASE)


def _required(items, ignorecase: bool) -> frozenset[str] | None:
    """Strings one of which every match of the node sequence ``items`` contains, or None."""
    usable = _requirements(items, ignorecase)
    if not usable:
        return None
    return max(usable, key=_selectivity)


def _requirements(items, ignorecase: bool) -> list[frozenset[str]]:
    """Every requirement of the node sequence ``items``: sets of strings such that each match
    contains one string of every set (the nodes follow one another, so each match holds what
    each of them requires)."""
    candidates: list[frozenset[str]] = []
    run = _EMPTY  # the strings the latest adjacent exact nodes can match, one after another

    def flush(following: frozenset[str] = _EMPTY) -> None:
        nonlocal run
        if run != _EMPTY:
            candidates.append(run)
        run = following

    for op, av in items:
        exact = _exact_node(op, av, ignorecase)
        if exact is not None:
            joined = _product(run, exact)
            if joined is None:
                flush(exact)  # too many strings: a new run starts here
            else:
                run = joined
            continue
        flush()
        # A part every match goes through requires all that its own parts require.
        if op is sre_constants.SUBPATTERN:
            _group, add_flags, del_flags, sub = av
            # A group of the other case mode would be looked for in the wrong haystack (the
            # pattern's mode decides between the reading and its lower-cased form).
            if _case_mode(ignorecase, add_flags, del_flags) == ignorecase:
                candidates.extend(_requirements(sub, ignorecase))
        elif op is sre_constants.BRANCH:
            # Any one branch: one string of a requirement of each, whichever matched.
            branches = [_required(branch, ignorecase) for branch in av[1]]
            if not any(b is None for b in branches):
                candidates.append(frozenset().union(*branches))
        elif op in _REPEATS:
            low, _high, sub = av
            if low >= 1:
                candidates.extend(_requirements(sub, ignorecase))
        elif op is sre_constants.ATOMIC_GROUP:
            candidates.extend(_requirements(av, ignorecase))
        # Anything else (classes of many characters, backreferences): no requirement.
    flush()
    usable = []
    for candidate in candidates:
        # Empty: the parts match nothing an ASCII reading holds; left as no requirement.
        if candidate and all(s and s.isascii() for s in candidate):
            # A reading holding a string holds every string inside it: keep the inner ones.
            usable.append(
                frozenset(s for s in candidate if not any(t in s for t in candidate - {s}))
            )
    return usable


Requirement = tuple[tuple[tuple[str, ...], ...], bool]


def required_literals(pattern: re.Pattern) -> Requirement | None:
    """Return (conjuncts, ignorecase) for ``pattern``, or None when it requires nothing.

    Every match of the pattern contains one literal of each conjunct: ``(("gamma",),
    ("alpha", "beta"))`` for ``(?:alpha|beta)\\s+gamma``.
    """
    ignorecase = bool(pattern.flags & re.IGNORECASE)
    found = _requirements(list(sre_parser.parse(pattern.pattern, pattern.flags)), ignorecase)
    if not found:
        return None
    # The most selective requirement first (the one whose shortest literal is longest), and
    # so on: ``LiteralIndex`` visits a pattern when a reading holds a literal of its first,
    # and then checks the others against the literals its scan found.
    ranked = sorted(set(found), key=lambda c: (_selectivity(c), sorted(c)), reverse=True)
    return tuple(tuple(sorted(c)) for c in ranked), ignorecase


def _selectivity(requirement: frozenset[str]) -> tuple[int, int]:
    return min(map(len, requirement)), -len(requirement)


class Reading:
    """One reading of a text with its lower-cased form, computed once for all rules."""

    __slots__ = ("lower", "text")

    def __init__(self, text: str):
        self.text = text
        self.lower = text.lower() if text.isascii() else None


def may_match(literals: Requirement | None, reading: Reading) -> bool:
    """False only when the rule with ``literals`` cannot match ``reading``."""
    if literals is None or reading.lower is None:
        return True
    conjuncts, ignorecase = literals
    haystack = reading.lower if ignorecase else reading.text
    return all(any(needle in haystack for needle in needles) for needles in conjuncts)


class LiteralIndex:
    """The required literals of a list of patterns, looked for once per reading for them all.

    ``possible(reading)[i]`` is ``may_match(required_literals(patterns[i]), reading)``: the same
    answer, but found in one scan of the reading. The guards' 78 rules require 2,140 distinct
    literals (1,472 in their first requirements); testing them rule by rule cost about 3 ms
    per memory of a batch write, and so did testing each rule's set against the literals
    found (now: the rules whose first requirement a literal found meets, and their other
    requirements against the found set).

    The scan is one Aho-Corasick pass over the reading (``_Scanner``), which finds every
    literal present, overlapping ones and prefixes included. Until stop 34 it was a regular
    expression shaped as a trie inside a lookahead, seven times slower, and only each
    pattern's first requirement was checked: a pattern such as ``(?:if|when) ... send ...``
    ran on every reading holding "send" (docs/performance-history.md, "Stop 34").
    """

    def __init__(self, patterns: list[re.Pattern]):
        self.required = [required_literals(pattern) for pattern in patterns]
        literals = {
            (literal, r[1]) for r in self.required if r for needles in r[0] for literal in needles
        }
        self._folded = _Scanner({literal for literal, folded in literals if folded})
        self._exact = _Scanner({literal for literal, folded in literals if not folded})
        # Per case mode and literal, the patterns whose first requirement it meets: a reading
        # holds few, so only their patterns are visited, and their other requirements
        # checked against the literals found.
        self._first_of: dict[bool, dict[str, list[int]]] = {True: {}, False: {}}
        for i, r in enumerate(self.required):
            for literal in r[0][0] if r else ():
                self._first_of[r[1]].setdefault(literal, []).append(i)
        self._others = [
            [frozenset(needles) for needles in r[0][1:]] if r else [] for r in self.required
        ]
        self._all = (1 << len(self.required)) - 1
        self._unconditional_mask = sum(1 << i for i, r in enumerate(self.required) if r is None)

    def possible(self, reading: Reading) -> list[bool]:
        """Per pattern: False only when it cannot match ``reading``."""
        mask = self.possible_mask(reading)
        return [bool(mask >> i & 1) for i in range(len(self.required))]

    def possible_mask(self, reading: Reading) -> int:
        """``possible(reading)`` as the bits of an int: bit i for pattern i."""
        if reading.lower is None:
            return self._all
        mask = self._unconditional_mask
        for ignorecase, found in (
            (True, self._folded.present(reading.lower)),
            (False, self._exact.present(reading.text)),
        ):
            first_of = self._first_of[ignorecase]
            for literal in found & first_of.keys():
                for i in first_of[literal]:
                    if not mask >> i & 1 and all(not found.isdisjoint(o) for o in self._others[i]):
                        mask |= 1 << i
        return mask


class _Scanner:
    """Finds which of a set of literals occur in a text (overlapping ones included), in one
    Aho-Corasick pass."""

    def __init__(self, literals: set[str]):
        self._automaton = None
        if literals:
            self._automaton = ahocorasick.Automaton(ahocorasick.STORE_ANY, ahocorasick.KEY_STRING)
            for literal in literals:
                self._automaton.add_word(literal, literal)
            self._automaton.make_automaton()

    def present(self, text: str) -> set[str]:
        if self._automaton is None:
            return set()
        return {literal for _end, literal in self._automaton.iter(text)}


def trie_source(literals: set[str]) -> str:
    """The regex source of a trie of ``literals``: longest match first at every node, one
    branch tried per character (a flat alternation of many words tries each at every position)."""
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
