"""Stage 5: hard filters. A forbidden memory never survives on a low score.

The SQL of stage 4 already keeps only the caller's rows; these checks run again over the
candidates (defence in depth: SQL already keeps only rows of the active environment, or of
none, and within the tenant's retention; and they carry the policy rules SQL does not:
confidence floor, sensitivity for the prompt, types the plan excludes). Pure: no ORM, no I/O.
"""

from __future__ import annotations

from datetime import datetime

from memory_core.models.choices import SENSITIVITY_RANK, TYPE_CLASS
from memory_core.policy_check import retention_overdue

from .policy import RetrievalPolicy
from .types import Candidate, Rejection, RetrievalContext, RetrievalPlan

STAGE = "hard_filters"


def rejection_reason(
    c: Candidate,
    *,
    ctx: RetrievalContext,
    plan: RetrievalPlan,
    policy: RetrievalPolicy,
    now: datetime,
) -> str | None:
    """Return why ``c`` may not be used in this context, or None if it may."""
    if c.tenant_id and c.tenant_id != str(ctx.tenant_id):
        return "other_tenant"
    if c.subject_id and c.subject_id != str(ctx.subject_id):
        return "other_subject"
    if c.agent_id and ctx.agent_id and c.agent_id != str(ctx.agent_id):
        return "other_agent"
    if not ctx.allows_scope(c.scope_kind, c.scope_ref):
        return "scope_not_allowed"
    if not ctx.allows_environment(c.environment):
        return "environment_mismatch"
    if c.status != "active":
        return f"status_{c.status}"
    if c.valid_until is not None and c.valid_until <= now:
        return "expired"
    if retention_overdue(
        ctx.retention_cutoffs,
        memory_class=TYPE_CLASS.get(c.memory_type, ""),
        authority=c.authority,
        created_at=c.created_at,
    ):
        return "retention_overdue"
    if ctx.read_types is not None and c.memory_type not in ctx.read_types:
        return "type_not_readable"
    if c.memory_type in plan.excluded_types:
        return "type_excluded_by_plan"
    return policy_reason(
        confidence=c.confidence,
        sensitivity=c.sensitivity,
        max_sensitivity=ctx.max_sensitivity,
        policy=policy,
    )


def policy_reason(
    *, confidence: float, sensitivity: str, max_sensitivity: str, policy: RetrievalPolicy
) -> str | None:
    """Return why the policy keeps a row of this ``confidence`` and ``sensitivity`` out of
    every prompt of a caller whose grant reads up to ``max_sensitivity``, or None: the rules
    of this stage that no request can change.

    ``pipeline.keyless_measured`` measures a keyless conflict only against the rows these
    rules let through, ``selectors.portal.given_now`` says which of a conflict's rows agents
    are given, and ``selectors.approvals.agents_reaching`` whom a conflict's winner reaches,
    by this very function, so that none of them can drift apart.
    """
    if confidence < policy.confidence_floor:
        return "below_confidence_floor"
    cap = min(
        SENSITIVITY_RANK.get(max_sensitivity, 2),
        SENSITIVITY_RANK.get(policy["max_prompt_sensitivity"], 2),
    )
    if SENSITIVITY_RANK.get(sensitivity, 3) > cap:
        return "too_sensitive_for_prompt"
    return None


def apply_hard_filters(
    candidates: list[Candidate],
    *,
    ctx: RetrievalContext,
    plan: RetrievalPlan,
    policy: RetrievalPolicy,
    now: datetime,
) -> tuple[list[Candidate], list[Rejection]]:
    """Return the eligible candidates and a rejection (with its reason) for each other one."""
    kept: list[Candidate] = []
    rejected: list[Rejection] = []
    for c in candidates:
        reason = rejection_reason(c, ctx=ctx, plan=plan, policy=policy, now=now)
        if reason:
            rejected.append(Rejection(c.id, STAGE, reason))
        else:
            kept.append(c)
    return kept, rejected
