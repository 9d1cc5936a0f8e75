"""Stage 6: one fact, one candidate. Merge supersession links, equal content, near duplicates.

Rules, in order (each merge is logged with its rule and the merged ids are kept on the
survivor as ``merged_from``):

1. ``supersedes``: a row and the row it replaced; the newer one stays.
2. ``content_hash``: the same normalized text of the same type (repeated summaries, a key's
   identical versions); the strongest row stays (authority, confidence, version, recency), a
   keyed row before an unkeyed one (``keeper_order``).
3. ``near_duplicate``: same memory type and cosine >= ``near_duplicate_cosine``.
4. ``inferred_echo``: a model inference whose cosine to an explicit memory of the same type is
   >= ``inferred_echo_cosine`` only restates it; the explicit memory stays, its reason stating
   its own match (``_absorb``).

Two rows that both carry a memory_key and differ in content are never merged by similarity:
that is a conflict, and stage 8 decides it in the open. Rules 2-4 merge only rows of the same
scope and environment (a repository's rule and a global preference with the same words apply
in different places; so do a staging fact and its copy for every environment, and stage 8
prefers the staging one), and a keyed row only into a row of its own key: merged into another
key's row, or into an unkeyed one, it would leave its key's conflict group and the group could
look settled. Every rule but the first merges only rows of one memory type: a type decides
the row's section, gate and high impact.
Pure: no ORM, no I/O.
"""

from __future__ import annotations

import numpy as np

from memory_core.models.choices import AUTHORITY_RANK

from .policy import RetrievalPolicy
from .types import Candidate, ConflictPlace, Merge

EXPLICIT = {"explicit_user", "explicit_admin"}


def strength(c: Candidate) -> tuple:
    """Return the sort key of the row that should survive a merge (higher is stronger)."""
    return (AUTHORITY_RANK.get(c.authority, 0), c.confidence, c.version, c.updated_at, c.id)


def keeper_order(c: Candidate) -> tuple:
    """The order rows 2-4 are visited in, keepers first: a keyed row before any unkeyed one,
    then the stronger. An unkeyed copy of a keyed fact folds into the keyed row even when it
    is the stronger of the two; kept as the survivor, it stayed in the package beside the
    clarification that asks about its key's conflict (and the keyed row, with its key, was
    the one folded or dropped)."""
    return (bool(c.memory_key), strength(c))


def _absorb(keeper: Candidate, other: Candidate, *, echo: bool = False) -> None:
    """Fold ``other`` into ``keeper``, which takes the better of their relevance signals.

    An ``echo``'s words are not the keeper's: given its cosine and keyword match, the
    keeper's reason claimed a match it does not have ("semantic match 0.80; keyword match"
    for a row of cosine 0.24 to the query: stop 60's audit of retrieval), so the keeper keeps
    its own for its reason (``own_match``). It still passes the relevance gate and scores by
    its echo's: judged by its own, an explicit row of cosine 0.3 was rejected below the
    margin, and the inference folded into it, the best match of the request, was gone with
    it (stop 60's review)."""
    keeper.merged_from = sorted({*keeper.merged_from, other.id, *other.merged_from})
    if echo and keeper.own_match is None:
        keeper.own_match = (keeper.semantic, "fulltext" in keeper.sources)
    keeper.sources |= other.sources
    if other.semantic is not None and (keeper.semantic is None or other.semantic > keeper.semantic):
        keeper.semantic = other.semantic
    keeper.fused = max(keeper.fused, other.fused)
    keeper.fulltext_score = max(keeper.fulltext_score, other.fulltext_score)


def _may_absorb(keeper: Candidate, other: Candidate) -> bool:
    """Whether ``other`` may be merged into ``keeper`` by content or similarity (rules 2-4).

    Only a row of the same type and place, scope and environment (``ConflictPlace.of``). A row
    tied to the request's environment folded into an untied copy (the stronger of the two, so
    the keeper) left its key's group without the row stage 8's ``environment_specific`` rule
    picks, and the group's newest untied row won in staging over staging's own fact. A
    project constraint folded into a decision with its words took the group's high-impact
    type with it (a clarification became a winner), and a repository rule folded into a
    preference was gated as a preference, not as a rule of the repository.
    """
    same_place = ConflictPlace.of(keeper) == ConflictPlace.of(other)
    same_type = keeper.memory_type == other.memory_type
    return same_type and same_place and other.memory_key in ("", keeper.memory_key)


def _matrix(candidates: list[Candidate]):
    if not candidates or any(c.embedding is None for c in candidates):
        return None
    m = np.asarray([c.embedding for c in candidates], dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    m = m / norms
    return m @ m.T


def _similar_pairs(sims, floor: float) -> list[tuple[int, int]]:
    """Return the pairs (i, j), i < j, whose cosine is at least ``floor``, in the order a
    walk over i, then j, meets them: rules 3 and 4 merge no pair below both thresholds, and
    testing every pair in Python cost ~1 ms a retrieval (docs/performance.md, section 20)."""
    # In float64, as the walk compares each pair's float(sim): never a pair fewer.
    rows, columns = np.nonzero(np.triu(sims.astype(np.float64) >= floor, k=1))
    return list(zip(rows.tolist(), columns.tolist(), strict=True))  # row-major: sorted


def deduplicate(
    candidates: list[Candidate], *, policy: RetrievalPolicy
) -> tuple[list[Candidate], list[Merge]]:
    """Return one candidate per fact and the merges that made it so."""
    merges: list[Merge] = []
    alive: dict[str, Candidate] = {c.id: c for c in candidates}

    def merge(keeper: Candidate, other: Candidate, rule: str) -> None:
        _absorb(keeper, other, echo=rule == "inferred_echo")
        merges.append(Merge(kept=keeper.id, merged=other.id, rule=rule))
        alive.pop(other.id, None)

    # 1. Supersession links.
    for c in list(alive.values()):
        if c.id in alive and c.supersedes_id and c.supersedes_id in alive:
            merge(c, alive[c.supersedes_id], "supersedes")
    # 2. Equal normalized content.
    by_hash: dict[str, list[Candidate]] = {}
    for c in sorted(alive.values(), key=keeper_order, reverse=True):
        if not c.content_hash:
            continue
        keepers = by_hash.setdefault(c.content_hash, [])
        keeper = next((k for k in keepers if _may_absorb(k, c)), None)
        if keeper is not None:
            merge(keeper, c, "content_hash")
        else:
            keepers.append(c)
    # 3 and 4. Similar embeddings.
    ordered = sorted(alive.values(), key=keeper_order, reverse=True)
    sims = _matrix(ordered)
    if sims is not None:
        near = float(policy["near_duplicate_cosine"])
        echo = float(policy["inferred_echo_cosine"])
        gone: set[int] = set()
        for i, j in _similar_pairs(sims, min(near, echo)):
            if i in gone or j in gone:
                continue
            keeper, other = ordered[i], ordered[j]
            if other.memory_type != keeper.memory_type:
                continue
            if keeper.memory_key and other.memory_key:
                continue  # two keyed facts that differ: a conflict, not a duplicate
            if not _may_absorb(keeper, other):
                continue
            sim = float(sims[i, j])
            if sim >= near:
                merge(keeper, other, "near_duplicate")
                gone.add(j)
            elif (
                sim >= echo
                and keeper.authority in EXPLICIT
                and other.authority == "model_inference"
            ):
                merge(keeper, other, "inferred_echo")
                gone.add(j)
    kept = [c for c in candidates if c.id in alive]
    return kept, merges
