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
- requirements are ASCII strings. For ASCII text, IGNORECASE matching of them is exactly
  equality after ``str.lower()``. A required string holding a non-ASCII character that
  matches no ASCII one (``re`` itself says which: under IGNORECASE only "İ", "ı", "ſ" and
  the Kelvin sign match one) is in no ASCII reading and is left out, and a requirement
  left with no string is one no ASCII reading meets; one holding any other non-ASCII
  character makes its requirement unusable;
- a reading that is not ASCII is read against the requirements made without leaving any
  character out (``required_literals(..., any_reading=True)``), its letters folded as
  IGNORECASE pairs them with ASCII ones (``Reading.lower``): of all non-ASCII characters only
  "İ", "ı", "ſ" and the Kelvin sign match an ASCII one. Such readings ran every pattern until
  stop 66's audit of the guards' regular expressions: one em dash in a 4,000-character memory
  took its admission from 5 to 174 ms.

``tests/memory_core/admission/test_prefilter.py`` checks it against every rule and the
security corpus: no reading the prefilter turns away is matched by the rule's regex.
"""

from __future__ import annotations

import functools
import math
import re
from re import _constants as sre_constants  # noqa: PLC2701 - the parser's own node kinds
from re import _parser as sre_parser  # noqa: PLC2701

import ahocorasick

_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT}
_ZERO_WIDTH = {sre_constants.AT, sre_constants.ASSERT, sre_constants.ASSERT_NOT}
# The most strings an exact set may hold: a product that would exceed it is cut there.
MAX_EXACT = 64
_EMPTY = frozenset([""])


@functools.cache
def _never_in_ascii(char: str, ignorecase: bool) -> bool:
    """Whether the pattern character ``char`` can match no ASCII character.

    A non-ASCII character matches only itself, unless IGNORECASE pairs it with an ASCII one
    (Python's ``re`` pairs "ſ" with "s", the Kelvin sign with "k", "İ" with "i", "ı" with
    "I"): asked of ``re`` itself, one character at a time. Until stop 70 every cased
    character counted as paired ("ł" with "Ł" too), so a rule holding "słuchaj" among its
    words had no usable literal and ran on every ASCII reading: the Polish and Chinese
    overrides of stop 69 cost the split-write rule ~0.12 ms a pair, batch ingest some 13 %.
    """
    if char.isascii():
        return False
    if not ignorecase:
        return True
    pattern = re.compile(re.escape(char), re.IGNORECASE)
    return not any(pattern.fullmatch(chr(code)) for code in range(128))


def _chars(codes, ignorecase: bool, any_reading: bool) -> frozenset[str]:
    """The strings pattern characters ``codes`` stand for in a reading's haystack.

    An ASCII character is looked for lower-cased when the pattern ignores case. A character
    no ASCII one matches stands for nothing in an ASCII reading's (none holds it); for
    ``any_reading``, and for any other non-ASCII character, it stays as it is, so a
    requirement holding it is unusable: ``str.lower`` is not how ``re`` pairs cases
    ("İ".lower() is two characters; IGNORECASE pairs "İ" with "i").
    """
    found = set()
    for code in codes:
        char = chr(code)
        if char.isascii():
            found.add(char.lower() if ignorecase else char)
        elif any_reading or not _never_in_ascii(char, ignorecase):
            found.add(char)
    return frozenset(found)


def _exact_node(op, av, ignorecase: bool, any_reading: bool) -> frozenset[str] | None:
    """Every string the node can match, when it is one of a few fixed strings, or None."""
    if op is sre_constants.LITERAL:
        return _chars([av], ignorecase, any_reading)  # empty: in no ASCII reading
    if op is sre_constants.IN:
        if len(av) > MAX_EXACT or any(kind is not sre_constants.LITERAL for kind, _ in av):
            return None  # ranges, categories, negation: too many strings
        return _chars([code for _, code in av], ignorecase, any_reading)
    if op in _ZERO_WIDTH:
        return _EMPTY  # consumes nothing: its neighbours' strings stay adjacent
    if op is sre_constants.SUBPATTERN:
        _group, add_flags, del_flags, sub = av
        if _case_mode(ignorecase, add_flags, del_flags) != ignorecase:
            return None
        return _exact(sub, ignorecase, any_reading)
    if op is sre_constants.ATOMIC_GROUP:
        return _exact(av, ignorecase, any_reading)
    if op is sre_constants.BRANCH:
        branches = [_exact(branch, ignorecase, any_reading) for branch in av[1]]
        if any(b is None for b in branches):
            return None
        union = frozenset().union(*branches)
        return union if len(union) <= MAX_EXACT else None
    if op in _REPEATS:
        low, high, sub = av
        if high > 1:
            return None
        one = _exact(sub, ignorecase, any_reading)
        if one is None:
            return None
        if high == 0:
            return _EMPTY
        return one if low == 1 else one | _EMPTY
    return None


def _exact(items, ignorecase: bool, any_reading: bool) -> frozenset[str] | None:
    """Every string the node sequence ``items`` can match, when they are few, or None."""
    strings = _EMPTY
    for op, av in items:
        one = _exact_node(op, av, ignorecase, any_reading)
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


def _required(items, ignorecase: bool, any_reading: bool) -> frozenset[str] | None:
    """Strings one of which every match of the node sequence ``items`` contains, or None."""
    usable = _requirements(items, ignorecase, any_reading)
    if not usable:
        return None
    return max(usable, key=_selectivity)


def _requirements(items, ignorecase: bool, any_reading: bool) -> list[frozenset[str]]:
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
        exact = _exact_node(op, av, ignorecase, any_reading)
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
                candidates.extend(_requirements(sub, ignorecase, any_reading))
        elif op is sre_constants.BRANCH:
            # Any one branch: one string of a requirement of each, whichever matched.
            branches = [_required(branch, ignorecase, any_reading) for branch in av[1]]
            if not any(b is None for b in branches):
                candidates.append(frozenset().union(*branches))
        elif op in _REPEATS:
            low, _high, sub = av
            if low >= 1:
                candidates.extend(_requirements(sub, ignorecase, any_reading))
        elif op is sre_constants.ATOMIC_GROUP:
            candidates.extend(_requirements(av, ignorecase, any_reading))
        # Anything else (classes of many characters, backreferences): no requirement.
    flush()
    usable = []
    for candidate in candidates:
        # Empty: the parts match nothing an ASCII reading holds (every string they can match
        # holds a character no ASCII one matches), so neither does the pattern: a requirement
        # no reading meets (until stop 70 no requirement, and the Chinese and Japanese
        # overrides ran on every ASCII reading). A string holding a non-ASCII character is
        # no requirement.
        if not candidate:
            usable.append(candidate)
        elif all(s and s.isascii() for s in candidate):
            # A reading holding a string holds every string inside it: keep the inner ones.
            usable.append(
                frozenset(s for s in candidate if not any(t in s for t in candidate - {s}))
            )
    return usable


Requirement = tuple[tuple[tuple[str, ...], ...], bool, bool]


def required_literals(pattern: re.Pattern, *, any_reading: bool = False) -> Requirement | None:
    """Return (conjuncts, ignorecase, any_reading) for ``pattern``, or None when it requires
    nothing: for ASCII readings, or with ``any_reading`` for every reading (no character left
    out of a string, ``_chars``).

    Every match of the pattern contains one literal of each conjunct: ``(("gamma",),
    ("alpha", "beta"))`` for ``(?:alpha|beta)\\s+gamma``.
    """
    ignorecase = bool(pattern.flags & re.IGNORECASE)
    parsed = list(sre_parser.parse(pattern.pattern, pattern.flags))
    return _ranked(_requirements(parsed, ignorecase, any_reading), ignorecase, any_reading)


def _for_both_readings(pattern: re.Pattern) -> tuple[Requirement | None, Requirement | None]:
    """``required_literals(pattern)`` and with ``any_reading``, the pattern parsed once: the
    same requirements when it holds no character that is not ASCII (``_chars`` reads those
    alone another way). Made twice for every pattern, the guards' literal indexes took twice
    as long to build (about half a second more at a process's first write)."""
    ignorecase = bool(pattern.flags & re.IGNORECASE)
    parsed = list(sre_parser.parse(pattern.pattern, pattern.flags))
    found = _requirements(parsed, ignorecase, False)
    if not _holds_non_ascii(parsed):
        return _ranked(found, ignorecase, False), _ranked(found, ignorecase, True)
    any_found = _requirements(parsed, ignorecase, True)
    return _ranked(found, ignorecase, False), _ranked(any_found, ignorecase, True)


def _holds_non_ascii(items) -> bool:
    """Whether a literal or a class of literals of the node sequence ``items`` (what
    ``_chars`` reads) holds a character that is not ASCII."""
    for op, av in items:
        if op is sre_constants.LITERAL:
            if av > 127:
                return True
        elif op is sre_constants.IN:
            if any(kind is sre_constants.LITERAL and code > 127 for kind, code in av):
                return True
        elif op is sre_constants.SUBPATTERN:
            if _holds_non_ascii(av[3]):
                return True
        elif op is sre_constants.BRANCH:
            if any(_holds_non_ascii(branch) for branch in av[1]):
                return True
        elif op in _REPEATS:
            if _holds_non_ascii(av[2]):
                return True
        elif op is sre_constants.ATOMIC_GROUP:
            if _holds_non_ascii(av):
                return True
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            if _holds_non_ascii(av[1]):
                return True
    return False


def _ranked(found: list[frozenset[str]], ignorecase: bool, any_reading: bool) -> Requirement | None:
    if not found:
        return None
    # The most selective requirement first (the one whose shortest literal is longest), and
    # so on: ``LiteralIndex`` visits a pattern when a reading holds a literal of its first,
    # and then checks the others against the literals its scan found.
    ranked = sorted(set(found), key=lambda c: (_selectivity(c), sorted(c)), reverse=True)
    return tuple(tuple(sorted(c)) for c in ranked), ignorecase, any_reading


def _selectivity(requirement: frozenset[str]) -> tuple[float, int]:
    # One no reading meets (empty) is the most selective of all.
    return min(map(len, requirement), default=math.inf), -len(requirement)


# The characters IGNORECASE matches an ASCII literal with: its letters' other case and, of
# all other characters, only these four (``test_prefilter`` checks every code point). Each
# stands for one character, so a reading folded so keeps its length and its literals in place.
_ASCII_CASE_FOLD = str.maketrans(
    {
        **{chr(code): chr(code).lower() for code in range(ord("A"), ord("Z") + 1)},
        "\u0130": "i",  # "İ", capital i with a dot
        "\u0131": "i",  # "ı", dotless i
        "\u017f": "s",  # "ſ", long s
        "\u212a": "k",  # the Kelvin sign
    }
)


class Reading:
    """One reading of a text with its lower-cased form, computed once for all rules: an ASCII
    reading's ``str.lower()``, any other's letters folded as IGNORECASE pairs them with ASCII
    ones (``_ASCII_CASE_FOLD``), the rest left as they are."""

    __slots__ = ("ascii", "lower", "text")

    def __init__(self, text: str):
        self.text = text
        self.ascii = text.isascii()
        self.lower = text.lower() if self.ascii else text.translate(_ASCII_CASE_FOLD)


def may_match(literals: Requirement | None, reading: Reading) -> bool:
    """False only when the rule with ``literals`` cannot match ``reading`` (a reading that is
    not ASCII, only by ``literals`` made for any reading)."""
    if literals is None:
        return True
    conjuncts, ignorecase, any_reading = literals
    if not (reading.ascii or any_reading):
        return True
    haystack = reading.lower if ignorecase else reading.text
    return all(any(needle in haystack for needle in needles) for needles in conjuncts)


class LiteralIndex:
    """The required literals of a list of patterns, looked for once per reading for them all.

    ``possible(reading)[i]`` is ``may_match(required_literals(patterns[i]), reading)`` (with
    ``any_reading`` for a reading that is not ASCII): the same answer, but found in one scan of
    the reading. The guards' 78 rules require 2,140 distinct
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
        both = [_for_both_readings(pattern) for pattern in patterns]
        self.required = [for_ascii for for_ascii, _ in both]
        self._for_ascii = _Literals(self.required)
        self._for_any = _Literals([for_any for _, for_any in both])

    def possible(self, reading: Reading) -> list[bool]:
        """Per pattern: False only when it cannot match ``reading``."""
        mask = self.possible_mask(reading)
        return [bool(mask >> i & 1) for i in range(len(self.required))]

    def possible_mask(self, reading: Reading) -> int:
        """``possible(reading)`` as the bits of an int: bit i for pattern i."""
        return (self._for_ascii if reading.ascii else self._for_any).possible_mask(reading)


class _Literals:
    """One requirement per pattern (``required_literals``), looked for in one scan."""

    def __init__(self, required: list[Requirement | None]):
        self.required = required
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
        self._unconditional_mask = sum(1 << i for i, r in enumerate(self.required) if r is None)

    def possible_mask(self, reading: Reading) -> int:
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
