"""Stage 7: score every candidate with explicit, logged components; drop the off-topic ones.

``score = w.semantic*semantic + w.task_fit*task_fit + w.scope*scope + w.authority*authority
+ w.freshness*freshness + w.confidence*confidence - conflict_penalty - redundancy_penalty``,
weights from the tenant's policy (``ranking_weights``), freshness from the per-type
half-life (``half_life_days``), and for what a model inferred at most
``inferred_half_life_days`` (14 by default). Every component is stored on the candidate and in
the trace.

Relevance gate: a candidate whose cosine to the query is below ``relevance_floor``, or more
than ``relevance_margin`` below the best candidate's cosine, is off-topic (a full-text match
only needs the lower ``fulltext_floor``), unless it is bound to the request by structure
(active state of this session/task, or a constraint/rule scoped to this repository or task).
A row of a type a structured-only plan asked for is held to the margin only: such an intent
(load_preferences, apply_project_rules, resume_task, ...) is a lookup by type whose query
names what to load, not what the rows say.
When the query could not be embedded (degraded), rows of the deterministic stores pass. The
rows of one memory_key pass or fail together, so conflicts are never hidden by the gate.
Pure: no ORM, no I/O.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import datetime

import numpy as np

from .policy import RetrievalPolicy
from .types import Candidate, Rejection, RetrievalContext, RetrievalMode, RetrievalPlan

STAGE = "rerank"

AUTHORITY_WEIGHT = {
    "explicit_user": 1.0,
    "explicit_admin": 1.0,
    "confirmed_system": 0.95,
    "tool_observation": 0.75,
    "model_inference": 0.45,
}
SCOPE_WEIGHT = {"task": 1.0, "repo": 0.95, "project": 0.85, "user": 0.7, "global": 0.55}


def freshness(
    c: Candidate, *, now: datetime, half_life_days: dict, inferred_half_life: float | None = None
) -> float:
    """Return exp(-ln2 * age / half-life) for the candidate (1.0 when brand new): its type's
    half-life, or ``inferred_half_life`` when shorter and a model inferred it."""
    age_days = max((now - (c.updated_at or c.created_at)).total_seconds() / 86400.0, 0.0)
    half_life = float(half_life_days.get(c.memory_type) or 90)
    if c.authority == "model_inference" and inferred_half_life:
        half_life = min(half_life, float(inferred_half_life))
    return math.exp(-math.log(2) * age_days / half_life)


ENTITY_FIT = 0.8  # a memory that names one of the request's entities (below a bound one)


def task_fit(
    c: Candidate, *, ctx: RetrievalContext, plan: RetrievalPlan, policy, entities=None
) -> float:
    """Return how directly ``c`` bears on the current task (1 = bound to it by structure;
    ``ENTITY_FIT`` when it names one of the request's entities, ``entities`` being
    ``entity_patterns(plan)``)."""
    if c.memory_type == "task_state" and (
        # This task's: its task_id, or its scope (``task:<id>``), as the store reads it.
        (
            ctx.task_id
            and (c.task_id == ctx.task_id or (c.scope_kind, c.scope_ref) == ("task", ctx.task_id))
        )
        or (
            ctx.session_id
            and c.session_id == ctx.session_id
            and (not ctx.task_id or not c.task_id)  # the session's, bound to no other task
        )
    ):
        return 1.0
    if scope_bound(c, ctx=ctx, policy=policy):
        return 1.0
    # In NFC, as the plan's entities are: a row stored in NFD before stop 60 (a macOS
    # client's "Müller") named none of them (stop 60's audit of retrieval). Each field on its
    # own: an entity's parts may be apart by a line break, so content ending "release" and a
    # key starting "notes" named "release-notes" across their seam (stop 61's).
    if entities is not None and any(
        entities.search(unicodedata.normalize("NFC", text))
        for text in (c.content, c.memory_key, c.scope_ref)
        if text
    ):
        return ENTITY_FIT
    if c.memory_type in plan.structured_types:
        return 0.7
    if c.memory_type in plan.semantic_types:
        return 0.5
    return 0.3


def entity_patterns(plan: RetrievalPlan) -> re.Pattern | None:
    """One pattern matching any of the plan's entities as a whole word, case-insensitively;
    an entity joined by - . _ or / also matches with spaces ("network-state", "network
    state"). None without entities.

    An entity made of separators only is skipped: its alternative would be empty, and an
    empty alternative matches at almost any position of any text.
    """
    alternatives = []
    for entity in plan.entities:
        parts = [re.escape(part) for part in re.split(r"[\s\-._/]+", entity) if part]
        if parts:
            alternatives.append(r"[\s\-._/]+".join(parts))
    if not alternatives:
        return None
    return re.compile(rf"(?<!\w)(?:{'|'.join(alternatives)})(?!\w)", re.IGNORECASE)


def scope_bound(c: Candidate, *, ctx: RetrievalContext, policy) -> bool:
    """Return whether ``c`` is a constraint scoped to this very repository or task."""
    return (
        c.memory_type in policy["scope_bound_types"]
        and c.scope_kind in policy["scope_bound_kinds"]
        and ctx.allows_scope(c.scope_kind, c.scope_ref)
    )


def looked_up(c: Candidate, *, plan: RetrievalPlan) -> bool:
    """Return whether ``c`` is of a type a structured-only plan asked the structured store for.

    Such a plan's query names what to load ("Apply the project rules", "Load the user
    profile"), not what the rows say, so its cosine to every one of them may be below the
    floor: held to it, a structured lookup answered nothing (stop 56's audit of retrieval).
    The margin below the best row still applies, so a lookup whose query does say what it is
    about ("Write the commit message") keeps to the rows that say it, and the budget's
    per-type quota takes the best of the rest.
    """
    return plan.mode == RetrievalMode.STRUCTURED_ONLY and c.memory_type in plan.structured_types


def relevant(
    c: Candidate,
    *,
    fit: float,
    policy: RetrievalPolicy,
    degraded: bool,
    best: float | None,
    asked: bool = False,
) -> bool:
    """Return whether ``c`` passes the relevance gate (see the module docstring); ``asked``:
    whether a structured lookup asked for it (``looked_up``), which waives the floor."""
    if fit >= 1.0:
        return True
    if c.semantic is None:
        return "fulltext" in c.sources or (
            degraded and bool(c.sources & {"structured", "task_state"})
        )
    if "fulltext" in c.sources and c.semantic >= float(policy["fulltext_floor"]):
        return True
    floors = [] if asked else [float(policy["relevance_floor"])]
    if best is not None:
        floors.append(best - float(policy["relevance_margin"]))
    return c.semantic >= max(floors, default=c.semantic)


def semantic_component(c: Candidate, policy: RetrievalPolicy, *, searched: bool) -> float:
    """Return the relevance signal.

    When the plan ran hybrid search: ``share * cosine + (1 - share) * RRF / max RRF`` (the
    rank fusion carries the keyword evidence the cosine misses). Otherwise the cosine alone.
    """
    cosine = max(0.0, min(1.0, c.semantic)) if c.semantic is not None else None
    if not searched:
        return cosine or 0.0
    k = float(policy["rrf_k"])
    best = (float(policy["rrf_vector_weight"]) + float(policy["rrf_fulltext_weight"])) / (k + 1)
    fused = c.fused / best if best > 0 else 0.0
    if cosine is None:
        return fused
    share = float(policy["semantic_cosine_share"])
    return share * cosine + (1 - share) * fused


def rerank(
    candidates: list[Candidate],
    *,
    ctx: RetrievalContext,
    plan: RetrievalPlan,
    policy: RetrievalPolicy,
    now: datetime,
    degraded: bool = False,
) -> tuple[list[Candidate], list[Rejection]]:
    """Return the relevant candidates, best first, each with its components and score."""
    w = policy.weights
    kept: list[Candidate] = []
    rejected: list[Rejection] = []
    keyed: dict[str, set[str]] = {}
    for c in candidates:
        if c.memory_key:
            keyed.setdefault(c.memory_key, set()).add(c.content_hash)
    searched = bool(plan.semantic_types)
    cosines = [c.semantic for c in candidates if c.semantic is not None]
    best = max(cosines) if cosines else None
    entities = entity_patterns(plan)
    fits = {
        c.id: task_fit(c, ctx=ctx, plan=plan, policy=policy, entities=entities) for c in candidates
    }
    passed = {
        c.id
        for c in candidates
        if relevant(
            c,
            fit=fits[c.id],
            policy=policy,
            degraded=degraded,
            best=best,
            asked=looked_up(c, plan=plan),
        )
    }
    # Rows on one memory_key govern one decision: if one is relevant, so are its rivals, and
    # stage 8 must see them all.
    relevant_keys = {c.memory_key for c in candidates if c.memory_key and c.id in passed}
    for c in candidates:
        fit = fits[c.id]
        if c.id not in passed and c.memory_key not in relevant_keys:
            rejected.append(Rejection(c.id, STAGE, "below_relevance_floor"))
            continue
        contested = bool(c.memory_key) and len(keyed.get(c.memory_key, ())) > 1
        # The row's own cosine, not an echo's it scores by (``dedup._absorb``).
        cosine = c.own_match[0] if c.own_match else c.semantic
        comp = {
            "semantic": round(semantic_component(c, policy, searched=searched), 4),
            "cosine": round(cosine, 4) if cosine is not None else None,
            "fused": round(c.fused, 5),
            "task_fit": fit,
            "scope": SCOPE_WEIGHT.get(c.scope_kind, 0.3),
            "authority": AUTHORITY_WEIGHT.get(c.authority, 0.3),
            "freshness": round(
                freshness(
                    c,
                    now=now,
                    half_life_days=policy.half_life_days,
                    inferred_half_life=policy["inferred_half_life_days"],
                ),
                4,
            ),
            "confidence": c.confidence,
            "conflict_penalty": float(w.get("conflict_penalty", 0.0)) if contested else 0.0,
            "redundancy_penalty": 0.0,
        }
        c.components = comp
        c.score = _total(comp, w)
        kept.append(c)
    kept.sort(key=lambda c: (-c.score, c.id))
    _redundancy(kept, w, float(policy["redundancy_cosine"]))
    kept.sort(key=lambda c: (-c.score, c.id))
    for c in kept:
        c.reason = explain(c, ctx=ctx)
    return kept, rejected


def _total(comp: dict, w: dict) -> float:
    score = sum(
        float(w.get(name, 0.0)) * float(comp[name])
        for name in ("semantic", "task_fit", "scope", "authority", "freshness", "confidence")
    )
    return round(score - comp["conflict_penalty"] - comp["redundancy_penalty"], 6)


def _redundancy(ranked: list[Candidate], w: dict, start: float) -> None:
    """Penalize a candidate close to a better one of the same type (diversity), not of its
    own memory_key: rows of one key are rivals, not copies (``budget``), and stage 8 leaves
    at most one of them but for a set a reviewer kept. Penalized for its rival, a key's
    winner carried ~0.12 for a row no longer in the package, and an unrelated lower item took
    its slot (stop 60's audit of retrieval)."""
    weight = float(w.get("redundancy_penalty", 0.0))
    if not weight or len(ranked) < 2 or any(c.embedding is None for c in ranked):
        return
    m = np.asarray([c.embedding for c in ranked], dtype=np.float32)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)
    sims = m @ m.T
    for i, c in enumerate(ranked):
        same = [
            j
            for j in range(i)
            if ranked[j].memory_type == c.memory_type
            and not (c.memory_key and ranked[j].memory_key == c.memory_key)
        ]
        if not same:
            continue
        # At most 1: float32 makes a row's cosine to its own copy 1.0000001, which with a
        # policy's redundancy_cosine of 1 divided by zero (and above the weight near it).
        top = min(1.0, float(max(sims[i, j] for j in same)))
        if top > start:
            penalty = weight * (top - start) / (1 - start)
            c.components["redundancy_penalty"] = round(penalty, 4)
            c.score = _total(c.components, w)


def explain(c: Candidate, *, ctx: RetrievalContext) -> str:
    """Return a short, content-free reason why ``c`` was kept."""
    comp = c.components
    if c.memory_type == "task_state" and comp.get("task_fit") == 1.0:
        return "active state of this task"
    if comp.get("task_fit") == 1.0:
        return f"{c.memory_type.replace('_', ' ')} bound to {c.scope}"
    parts = []
    if comp.get("task_fit") == ENTITY_FIT:
        parts.append("names what the request is about")
    if comp.get("cosine") is not None:
        parts.append(f"semantic match {comp['cosine']:.2f}")
    keyword = c.own_match[1] if c.own_match else "fulltext" in c.sources
    if keyword:
        parts.append("keyword match")
    parts.append(f"{c.authority.replace('_', ' ')}, {c.scope}")
    return "; ".join(parts)
