"""Stage 9: the prompt budget. Max items, max tokens (real tokenizer), per-type quotas, diversity.

Greedy by score: each candidate is taken if its type's quota has room, it is not a near copy
of an item of the same type already taken (``diversity_cosine``; rows of one memory_key are
never each other's copies: after stage 8 two of them are left only when a reviewer kept both,
``keep_both_scoped``, and "eu-west-1" against "eu-west-2" is the difference they kept), and
the whole rendered package (``render``) still fits ``max_tokens`` as counted by
``count_tokens``, the embedding model's own tokenizer. Because the walk is greedy, a smaller
``max_items`` always selects a prefix of what a larger one selects. Pure but for a
per-process cache of the markup's token counts (``_count_repeated``): the tokenizer and
renderer are passed in.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from . import assembly
from .policy import RetrievalPolicy
from .types import Budget, Candidate, Rejection

STAGE = "budget"


def _unit(c: Candidate):
    if c.embedding is None:
        return None
    v = np.asarray(c.embedding, dtype=np.float32)
    n = float(np.linalg.norm(v))
    return v / n if n else None


def select_within_budget(
    ranked: list[Candidate],
    *,
    budget: Budget,
    policy: RetrievalPolicy,
    count_tokens: Callable[[str], int],
    render: Callable[[list[Candidate]], str],
    additive: bool = False,
) -> tuple[list[Candidate], list[Rejection], int]:
    """Return the selected candidates (best first), the rejections and the package's tokens.

    ``additive``: the tokenizer counts lines joined by a newline as the sum of their counts
    (true of the default model's WordPiece tokenizer, which splits at whitespace and
    punctuation: ``Embedder.additive_token_counts``). The running sum is then the package's
    exact count, and the final recount of the whole package is skipped.
    """
    selected: list[Candidate] = []
    rejections: list[Rejection] = []
    per_type: dict[str, int] = {}
    units: list[tuple[str, str, object]] = []  # type, memory_key, unit embedding
    diversity = float(policy["diversity_cosine"])
    # Tokens are counted per rendered item and per section wrapper and summed (the package
    # is whitespace-joined lines, so a wordpiece count adds up); unless the tokenizer is known
    # to be additive, the exact count of the whole rendered package is checked at the end and
    # the weakest items dropped if it is over.
    counter = _Counter(count_tokens, additive)
    tokens = counter.text(render([]))
    sections: set[str] = set()
    for c in sorted(ranked, key=lambda c: (-c.score, c.id)):
        if len(selected) >= budget.max_items:
            rejections.append(Rejection(c.id, STAGE, "over_max_items"))
            continue
        if per_type.get(c.memory_type, 0) >= budget.max_items_per_type:
            rejections.append(Rejection(c.id, STAGE, "type_quota_full"))
            continue
        unit = _unit(c)
        if unit is not None and any(
            t == c.memory_type
            and not (c.memory_key and k == c.memory_key)
            and u is not None
            and float(unit @ u) >= diversity
            for t, k, u in units
        ):
            rejections.append(Rejection(c.id, STAGE, "redundant_with_selected"))
            continue
        cost = counter.item(c)
        section = assembly.section_for(c)
        if section not in sections:
            cost += counter.text(f"<{section}>\n</{section}>")
        if not selected:
            cost = counter.text(render([c])) - tokens  # the first item adds the notice too
        if tokens + cost > budget.max_tokens:
            rejections.append(Rejection(c.id, STAGE, "over_token_budget"))
            continue
        selected.append(c)
        tokens += cost
        sections.add(section)
        per_type[c.memory_type] = per_type.get(c.memory_type, 0) + 1
        units.append((c.memory_type, c.memory_key, unit))
    if not additive:
        tokens = count_tokens(render(selected))
    while selected and tokens > budget.max_tokens:
        dropped = selected.pop()
        rejections.append(Rejection(dropped.id, STAGE, "over_token_budget"))
        tokens = count_tokens(render(selected))
    return selected, rejections, tokens


class _Counter:
    """Token counts of rendered text: whole, or, with an additive tokenizer, summed over parts.

    Additive: a text is the sum of its lines, and an item the sum of its parts
    (``assembly.render_item_parts``). What every package repeats, and what holds no memory
    data, is counted once per process (``_count_repeated``): the markup lines
    (``assembly.MARKUP_LINES``) and an item's markup parts. An item's id, scope and content are
    counted each time, so no memory's data outlives its request here. The tokenizer costs
    ~0.7 us a token; this cuts the stage by a third to a half (docs/performance.md, section
    11).
    """

    def __init__(self, count_tokens: Callable[[str], int], additive: bool):
        self._count = count_tokens
        self._additive = additive
        self._items: dict[str, int] = {}

    def text(self, text: str) -> int:
        if not self._additive:
            return self._count(text)
        return sum(self._line(line) for line in text.split("\n"))

    def item(self, c: Candidate) -> int:
        if not self._additive:
            return self._count(assembly.render_item(c))
        parts = assembly.render_item_parts(c)
        count = sum(
            self._count(part) if i % 2 else _count_repeated(self._count, part)
            for i, part in enumerate(parts)
        )
        self._items["".join(parts)] = count
        return count

    def _line(self, line: str) -> int:
        count = self._items.get(line)  # an item line, counted above
        if count is not None:
            return count
        if line in assembly.MARKUP_LINES:
            return _count_repeated(self._count, line)
        return self._count(line)  # e.g. the clarifications, which name memory keys


@functools.lru_cache(maxsize=1024)
def _count_repeated(count_tokens: Callable[[str], int], text: str) -> int:
    return count_tokens(text)
