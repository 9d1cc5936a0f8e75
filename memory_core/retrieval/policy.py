"""The retrieval part of a tenant's policy document, with defaults for every missing key.

The policy document (``PolicyVersion.document``) may carry ``ranking_weights``,
``half_life_days``, ``budget``, ``retention`` and a ``retrieval`` section; anything absent
falls back to the values here (``retention``: to no limit, as the retention sweep reads it),
so an older policy version keeps working when new knobs appear.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memory_core.policy_defaults import DEFAULT_POLICY, retention_section

RETRIEVAL_DEFAULTS = {
    # Candidate generation.
    "max_candidates": 40,
    # k = 10 (not the usual 60): measured on LoCoMo dev, a small k lets the top of each list
    # through instead of favouring rows both lists rank lower (docs/retrieval.md).
    "rrf_k": 10,
    "rrf_vector_weight": 1.0,
    "rrf_fulltext_weight": 1.0,
    # Relevance gate: below this cosine (and with no full-text hit) a memory is off-topic.
    "relevance_floor": 0.2,
    "fulltext_floor": 0.1,
    "relevance_margin": 0.25,
    # Constraints and rules whose scope is the request's own repo or task apply to every action
    # there, whatever the wording of the request.
    "scope_bound_types": ["project_constraint", "repository_rule"],
    "scope_bound_kinds": ["task", "repo"],
    # Dedup: same-type rows this close are one fact; an inference this close to an explicit
    # memory of the same type only echoes it. Not 0.5: "User prefers answers in Korean." is
    # 0.52 from "User prefers concise answers." and was folded into it, a distinct fact lost
    # (stop 60's audit of retrieval). Measured with the default model, restatements were
    # 0.70-0.74 ("Prefers short, direct explanations." of "Keep explanations short and to the
    # point."), other facts of one person's preferences up to 0.65; cosine cannot fully tell
    # them apart, and an echo left standing is only shown twice, in the inferred section.
    "near_duplicate_cosine": 0.97,
    "inferred_echo_cosine": 0.7,
    # Budget diversity: skip an item this close to one already selected of the same type.
    "diversity_cosine": 0.97,
    # Rerank: penalize an item closer than this to a better one of the same type.
    "redundancy_cosine": 0.95,
    # When hybrid search ran, relevance = share * cosine + (1 - share) * normalized RRF.
    "semantic_cosine_share": 0.2,
    # Freshness: what a model inferred ages at most this fast whatever its type's half-life
    # (the seed: an inference "should decay quickly unless confirmed"; a user's correction or
    # confirmation makes it explicit, with its type's half-life again).
    "inferred_half_life_days": 14,
    # Never put more sensitive memory than this into a prompt (the agent's grant may lower it).
    "max_prompt_sensitivity": "sensitive",
    # Conflicts: a winner and its strongest rival both below this confidence leave the group
    # unresolved (the seed's choose_winner: "memory is ambiguous" is safer than a weak pick).
    "conflict_min_confidence": 0.8,
    # Conflicts: which unresolved groups must come back as a clarification.
    "high_impact_types": ["project_constraint", "repository_rule"],
    "high_impact_key_prefixes": [
        "deploy",
        "deployment",
        "production",
        "prod",
        "release",
        "security",
        "access",
        "billing",
        "payment",
        "database",
        "migration",
        "infra",
    ],
}

DEFAULT_WEIGHTS = DEFAULT_POLICY["ranking_weights"]
DEFAULT_HALF_LIVES = DEFAULT_POLICY["half_life_days"]
DEFAULT_BUDGET = DEFAULT_POLICY["budget"]


@dataclass(frozen=True)
class RetrievalPolicy:
    """The knobs the stages read, resolved from one policy version."""

    version: int | None
    weights: dict = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    half_life_days: dict = field(default_factory=lambda: dict(DEFAULT_HALF_LIVES))
    budget: dict = field(default_factory=lambda: dict(DEFAULT_BUDGET))
    retrieval: dict = field(default_factory=lambda: dict(RETRIEVAL_DEFAULTS))
    # The document's ``retention`` section as the retention sweep reads it: no defaults, so
    # a key the document lacks limits nothing here as it deletes nothing there.
    retention: dict = field(default_factory=dict)

    def __getitem__(self, key):
        return self.retrieval[key]

    @property
    def confidence_floor(self) -> float:
        return float(self.budget.get("confidence_floor", 0.3))

    @classmethod
    def from_document(cls, document: dict | None, version: int | None = None) -> RetrievalPolicy:
        """Return the policy of ``document`` with defaults filled in.

        A section that is not an object counts as absent (``policy_errors`` refuses such a
        document on publication; this keeps one stored another way from failing every read).
        """
        stored, document = document, document if isinstance(document, dict) else {}

        def section(name: str) -> dict:
            value = document.get(name)
            return value if isinstance(value, dict) else {}

        return cls(
            version=version,
            weights={**DEFAULT_WEIGHTS, **section("ranking_weights")},
            half_life_days={**DEFAULT_HALF_LIVES, **section("half_life_days")},
            budget={**DEFAULT_BUDGET, **section("budget")},
            retrieval={**RETRIEVAL_DEFAULTS, **section("retrieval")},
            # No active policy (None) limits nothing, as the sweep, writes and the pages read
            # it; the defaults applied here left a memory unused that nothing ever deleted
            # (stop 55's audit of retrieval).
            retention=retention_section(stored),
        )


# A run of characters that are not letters or digits: where a memory_key's segment ends.
_SEGMENT_BREAK = re.compile(r"[\W_]+")


def is_high_impact(policy: RetrievalPolicy, *, memory_key: str, memory_types) -> bool:
    """Return whether a conflict on ``memory_key`` must be answered with a clarification.

    High impact: any row of the group has a type in ``high_impact_types`` (project
    constraints, repository rules), or the key's first segment is in
    ``high_impact_key_prefixes`` (deploy.region, production.database, ...). A key is free
    text (admission only strips it), so a segment ends at any character that is not a letter
    or a digit: deploy/region, deploy:region and "deploy region" are deploy's too. Read at
    . _ and - only, they were not high impact, and a conflict on them got a winner by score.
    """
    if set(memory_types) & set(policy["high_impact_types"]):
        return True
    head = next((part for part in _SEGMENT_BREAK.split(memory_key.lower()) if part), "")
    return head in set(policy["high_impact_key_prefixes"])
