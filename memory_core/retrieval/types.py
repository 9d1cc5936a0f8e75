"""The data the retrieval stages pass along: context, request, plan, one candidate contract.

Everything here is plain data (no ORM), so the stages after candidate generation are pure
functions over it and can be unit-tested without a database.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

import numpy as np

from memory_core.environments import environment_applies
from memory_core.policy_check import RetentionCutoff
from memory_core.text import format_scope


class RetrievalMode(StrEnum):
    """What the intent gate decided to query."""

    NONE = "none"
    STRUCTURED_ONLY = "structured_only"
    EPISODIC_ONLY = "episodic_only"
    HYBRID = "hybrid"


# Scope kinds from narrowest to broadest; the rank is used by scoring and conflicts.
SCOPE_SPECIFICITY = {"task": 5, "repo": 4, "project": 3, "user": 2, "global": 1}


@dataclass(frozen=True)
class Budget:
    """How much memory may enter the prompt."""

    max_items: int = 8
    max_tokens: int = 800
    max_items_per_type: int = 3


@dataclass(frozen=True)
class RetrievalRequest:
    """What an agent asked for (the body of ``POST /api/v1/retrieve``), already validated."""

    query: str
    user_id: str
    intent: str = ""
    has_complete_context: bool = False
    session_id: str = ""
    task_id: str = ""
    project_id: str = ""
    repository_id: str = ""
    locale: str = ""
    environment: str = ""  # the active one, already normalised (memory_core.environments)
    budget: Budget | None = None
    # Part of a budget (the API's): each field given replaces the policy's, the rest stay.
    budget_overrides: dict | None = None


@dataclass(frozen=True)
class RetrievalContext:
    """Stage 1: who is asking, about whom, and in which scopes. Built from the credential."""

    tenant_id: uuid.UUID
    agent_id: uuid.UUID | None
    subject_id: uuid.UUID | None
    user_id: str
    session_id: str = ""
    task_id: str = ""
    project_id: str = ""
    repository_id: str = ""
    locale: str = ""
    # The active environment ("" when the caller named none): a memory tied to another one,
    # or to any one when this is empty, is not eligible (memory_core.environments).
    environment: str = ""
    # The agent's read grant; an empty grant reads nothing. None: not an agent (no type limit).
    read_types: tuple[str, ...] | None = None
    max_sensitivity: str = "sensitive"
    # A memory_key of the subject whose deletion is queued for a worker ("" for none): from
    # the ask on, its memories are read by no store (the subject's other keys are).
    fenced_key: str = ""
    # The tenant's retention rules at the request's moment (``policy_check.retention_cutoffs``):
    # a memory past its class's period, or an inference past ``inferred_days``, is overdue and
    # read by no store, as the retention sweep will delete it.
    retention_cutoffs: tuple[RetentionCutoff, ...] = ()
    # The policy's rules of stage 5 that no request changes (``filters.policy_reason``): every
    # store leaves out a row below ``budget.confidence_floor`` or above
    # ``max_prompt_sensitivity`` (the agent's grant may lower it), so that a row no prompt may
    # hold never takes one of a store's LIMIT slots (stop 60's audit of retrieval).
    confidence_floor: float = 0.0
    max_prompt_sensitivity: str = "restricted"

    @property
    def allowed_scopes(self) -> list[tuple[str, str]]:
        """Return the (kind, ref) scopes this context may read, narrowest first."""
        scopes: list[tuple[str, str]] = []
        if self.task_id:
            scopes.append(("task", self.task_id))
        if self.repository_id:
            scopes.append(("repo", self.repository_id))
        if self.project_id:
            scopes.append(("project", self.project_id))
        if self.user_id:
            scopes.append(("user", self.user_id))
        if self.subject_id:
            scopes.append(("user", str(self.subject_id)))
        scopes.append(("global", ""))
        return scopes

    def allows_scope(self, kind: str, ref: str) -> bool:
        """Return whether a memory of scope ``kind:ref`` may be used in this context."""
        return (kind, ref) in self.allowed_scopes

    def allows_environment(self, environment: str) -> bool:
        """Return whether a memory tied to ``environment`` ("" for none) may be used here."""
        return environment_applies(environment, self.environment)


@dataclass(frozen=True)
class RetrievalPlan:
    """Stage 3: which stores to ask, for which types, in which scopes, how many candidates."""

    mode: RetrievalMode
    intent: str
    structured_types: tuple[str, ...] = ()
    semantic_types: tuple[str, ...] = ()
    task_state: bool = False
    excluded_types: tuple[str, ...] = ()
    preferred_scopes: tuple[str, ...] = ()
    max_candidates: int = 40
    semantic_limit: int = 40
    fulltext_limit: int = 40
    query_terms: int = 0
    # Named things of the request ("iOS", "atlas-api", "eu-west-1"), lower-cased: a memory
    # that mentions one fits the task better (stage 7). The trace keeps their count only.
    entities: tuple[str, ...] = ()
    # The structured types and scope kinds bound to the request by structure (the request's
    # own repo and task: ``rerank.scope_bound``). Such rows apply to every action there,
    # whatever its wording, so the structured store takes them before any row it ranks by
    # distance (both empty when the request names no such scope).
    bound_types: tuple[str, ...] = ()
    bound_kinds: tuple[str, ...] = ()

    @property
    def stores(self) -> list[str]:
        """Return the names of the stores this plan queries."""
        stores = []
        if self.structured_types:
            stores.append("structured")
        if self.task_state:
            stores.append("task_state")
        if self.semantic_types:
            stores += ["vector", "fulltext"]
        return stores

    def as_trace(self) -> dict:
        return {
            "mode": str(self.mode),
            "intent": self.intent,
            "structured_types": list(self.structured_types),
            "semantic_types": list(self.semantic_types),
            "task_state": self.task_state,
            "excluded_types": list(self.excluded_types),
            "preferred_scopes": list(self.preferred_scopes),
            "max_candidates": self.max_candidates,
            "query_terms": self.query_terms,
            "entities": len(self.entities),
        }


@dataclass
class Candidate:
    """Stage 6's one candidate contract: every store's rows become this."""

    id: str
    memory_type: str
    memory_key: str
    scope_kind: str
    scope_ref: str
    content: str
    content_hash: str
    authority: str
    confidence: float
    sensitivity: str
    status: str
    created_at: datetime
    updated_at: datetime
    valid_until: datetime | None = None
    version: int = 1
    supersedes_id: str | None = None
    session_id: str = ""
    task_id: str = ""
    environment: str = ""  # "" applies in every environment
    tenant_id: str = ""
    subject_id: str = ""
    agent_id: str | None = None
    # Retrieval signals.
    sources: set[str] = field(default_factory=set)
    semantic: float | None = None  # cosine similarity to the query, when the query was embedded
    vector_rank: int | None = None
    fulltext_rank: int | None = None
    fulltext_score: float = 0.0
    fused: float = 0.0  # reciprocal-rank fusion of the vector and full-text ranks
    # The row's own (cosine, keyword match) once an echo lent it its relevance (dedup rule 4):
    # what its reason states, and the trace's cosine.
    own_match: tuple[float | None, bool] | None = None
    # float32, unit length; not compared (an array has no single truth value).
    embedding: np.ndarray | None = field(default=None, compare=False, repr=False)
    # Filled by the stages.
    merged_from: list[str] = field(default_factory=list)
    components: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    reason: str = ""
    section: str = ""

    @property
    def scope(self) -> str:
        return format_scope(self.scope_kind, self.scope_ref)

    @property
    def specificity(self) -> int:
        return SCOPE_SPECIFICITY.get(self.scope_kind, 0)


@dataclass(frozen=True)
class Rejection:
    """One candidate a stage removed, and why (the trace keeps these, never content)."""

    memory_id: str
    stage: str
    reason: str


@dataclass(frozen=True)
class Merge:
    """Stage 6: ``merged`` was folded into ``kept`` (same fact), and the rule that decided."""

    kept: str
    merged: str
    rule: str


class ConflictPlace(NamedTuple):
    """Where a conflict on a key stands: a scope and an environment ("" for every one).

    A write's conflict stands at the written memory's place (a chain's identity holds both);
    a retrieval's at its group's narrowest rows (``conflicts.conflict_place``). With the key,
    the place names the conflict's review item.
    """

    scope_kind: str
    scope_ref: str
    environment: str

    @classmethod
    def of(cls, row) -> ConflictPlace:
        """The place of a memory row or a candidate: its own scope and environment."""
        return cls(row.scope_kind, row.scope_ref, row.environment)


@dataclass
class ConflictOutcome:
    """Stage 8: one memory_key group with more than one live fact, and how it ended."""

    memory_key: str
    candidate_ids: list[str]
    winner_id: str | None
    rule: str
    high_impact: bool = False
    clarification: bool = False
    review_item_id: str | None = None


@dataclass
class Clarification:
    """An unresolved high-impact conflict handed back to the agent instead of a winner."""

    memory_key: str
    candidates: list[Candidate]
    review_item_id: str | None = None


@dataclass
class RetrievalResult:
    """What ``retrieve`` returns: the package, the prompt and the stored trace's id."""

    trace_id: str
    mode: str
    degraded: bool
    items: list[Candidate]
    clarifications: list[Clarification]
    prompt: str
    prompt_tokens: int
    trace: dict = field(default_factory=dict)
