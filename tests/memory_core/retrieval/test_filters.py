"""Stage 5: every forbidden candidate is removed with its reason, whatever its score."""

from datetime import timedelta

import pytest

from memory_core.retrieval.filters import apply_hard_filters, rejection_reason

from .helpers import AGENT, NOW, cand, ctx, plan, policy


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"tenant_id": "other"}, "other_tenant"),
        ({"subject_id": "other"}, "other_subject"),
        ({"agent_id": "another-agent"}, "other_agent"),
        ({"scope_kind": "repo", "scope_ref": "atlas-web"}, "scope_not_allowed"),
        ({"scope_kind": "project", "scope_ref": "orion"}, "scope_not_allowed"),
        ({"status": "revoked"}, "status_revoked"),
        ({"status": "superseded"}, "status_superseded"),
        ({"valid_until": NOW - timedelta(seconds=1)}, "expired"),
        ({"confidence": 0.1}, "below_confidence_floor"),
        ({"sensitivity": "restricted"}, "too_sensitive_for_prompt"),
        ({"memory_type": "task_state"}, "type_excluded_by_plan"),
        ({"environment": "staging"}, "environment_mismatch"),
    ],
)
def test_each_forbidden_candidate_is_rejected_with_its_reason(overrides, reason):
    bad = cand("bad", semantic=0.99, **overrides)
    kept, rejected = apply_hard_filters(
        [bad, cand("good")],
        ctx=ctx(),
        plan=plan(excluded_types=("task_state",)),
        policy=policy(),
        now=NOW,
    )
    assert [c.id for c in kept] == ["good"]
    assert [(r.memory_id, r.stage, r.reason) for r in rejected] == [("bad", "hard_filters", reason)]


def test_allowed_scopes_and_own_agent_pass():
    rows = [
        cand("repo", scope_kind="repo", scope_ref="atlas-api"),
        cand("project", scope_kind="project", scope_ref="atlas"),
        cand("user", scope_kind="user", scope_ref="user-1"),
        cand("mine", agent_id=str(AGENT)),
        cand("future", valid_until=NOW + timedelta(days=1)),
    ]
    kept, rejected = apply_hard_filters(rows, ctx=ctx(), plan=plan(), policy=policy(), now=NOW)
    assert len(kept) == 5 and rejected == []


def test_agent_grant_limits_readable_types_and_sensitivity():
    rows = [cand("pref"), cand("inc", memory_type="incident"), cand("s", sensitivity="sensitive")]
    kept, rejected = apply_hard_filters(
        rows,
        ctx=ctx(read_types=("user_preference",), max_sensitivity="personal"),
        plan=plan(),
        policy=policy(),
        now=NOW,
    )
    assert [c.id for c in kept] == ["pref"]
    assert {r.reason for r in rejected} == {"type_not_readable", "too_sensitive_for_prompt"}


@pytest.mark.parametrize(
    ("memory_environment", "active", "reason"),
    [
        ("staging", "production", "environment_mismatch"),
        ("staging", "", "environment_mismatch"),  # the request named none: only untied ones
        ("staging", "staging", None),
        ("", "production", None),
        ("", "", None),
    ],
)
def test_environment_tied_memories_pass_only_in_their_environment(
    memory_environment, active, reason
):
    found = rejection_reason(
        cand("m", environment=memory_environment, semantic=0.99),
        ctx=ctx(environment=active),
        plan=plan(),
        policy=policy(),
        now=NOW,
    )
    assert found == reason
