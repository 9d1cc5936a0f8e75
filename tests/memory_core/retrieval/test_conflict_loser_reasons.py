"""Stage 8's trace names the rule that outranked each loser of a decided group.

Stop 63's audit of retrieval found that when a rule decided a memory_key group, every loser
was given the deciding rule as its reason, whatever left it out: an inference at the
winner's own scope was traced as losing by ``narrower_scope`` (it lost by
``authority_class``), and a global row newer than every other as losing by
``newer_confirmed`` (it lost by ``narrower_scope``). Each loser now gets the rule that left
it out (``_outranked_by``), as in an unresolved group; only the rows left standing to the
end lose by the deciding rule. What agents are given did not change. Stop 63's review found
the same for a row rule 3c (``higher_authority``) left out.
"""

from datetime import timedelta

import pytest

from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.retrieval.conflicts import keyless_rivals, resolve_conflicts
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.types import Rejection, RetrievalRequest
from memory_core.services.memories import memory_store_many
from tests.factories import SubjectFactory
from tests.memory_core.retrieval.conftest import draft
from tests.memory_core.retrieval.helpers import NOW, cand, policy


def test_an_inference_at_the_winners_scope_loses_by_authority_class_not_narrower_scope():
    project = cand("project", memory_key="style.commits", scope_kind="project", scope_ref="atlas")
    broad = cand("global", memory_key="style.commits")
    inferred = cand(
        "inferred", memory_key="style.commits", scope_kind="project", scope_ref="atlas",
        authority="model_inference", confidence=0.9,
    )  # fmt: skip
    kept, outcomes, clar, rejected = resolve_conflicts([project, broad, inferred], policy=policy())
    assert [c.id for c in kept] == ["project"] and not clar
    assert outcomes[0].rule == "narrower_scope"
    assert {r.memory_id: r.reason for r in rejected} == {
        "global": "lost_conflict:narrower_scope",
        # Same scope as the winner: it lost because a model inferred it (rule 2).
        "inferred": "lost_conflict:authority_class",
    }


def test_a_newer_broader_row_is_not_said_to_lose_by_being_older():
    newest = cand(
        "newest", memory_key="style.commits", scope_kind="project", scope_ref="atlas",
        updated_at=NOW - timedelta(days=1),
    )  # fmt: skip
    older = cand(
        "older", memory_key="style.commits", scope_kind="project", scope_ref="atlas",
        updated_at=NOW - timedelta(days=5),
    )  # fmt: skip
    broad_and_newest = cand("global", memory_key="style.commits", updated_at=NOW)
    _, outcomes, _, rejected = resolve_conflicts([newest, older, broad_and_newest], policy=policy())
    assert outcomes[0].winner_id == "newest" and outcomes[0].rule == "newer_confirmed"
    reasons = {r.memory_id: r.reason for r in rejected}
    assert reasons["older"] == "lost_conflict:newer_confirmed"
    # The global row is the newest of all three: it lost to the narrower scope.
    assert reasons["global"] == "lost_conflict:narrower_scope"


def test_a_newest_lower_rank_row_is_not_said_to_lose_by_being_older():
    """Stop 63's review found that a row rule 3c (``higher_authority``) left out before rule
    4 picked the newest was still traced by the deciding rule: ``_outranked_by`` knew rules
    2-3b only, so a user's row newer than two of an administrator's "lost" by
    ``newer_confirmed``. ``_narrowing`` now holds the 3c stage, and the row loses by it."""
    admin_new = cand(
        "admin-new", memory_key="style.commits", authority="explicit_admin",
        updated_at=NOW - timedelta(days=2),
    )  # fmt: skip
    admin_old = cand(
        "admin-old", memory_key="style.commits", authority="explicit_admin",
        updated_at=NOW - timedelta(days=5),
    )  # fmt: skip
    user_newest = cand("user", memory_key="style.commits", updated_at=NOW)
    _, outcomes, _, rejected = resolve_conflicts(
        [admin_new, admin_old, user_newest], policy=policy()
    )
    assert (outcomes[0].winner_id, outcomes[0].rule) == ("admin-new", "newer_confirmed")
    reasons = {r.memory_id: r.reason for r in rejected}
    assert reasons["admin-old"] == "lost_conflict:newer_confirmed"
    # The user's row is the newest of all three: it lost to the administrator's authority.
    assert reasons["user"] == "lost_conflict:higher_authority"


@pytest.mark.django_db
def test_the_stored_trace_states_the_rule_that_left_each_row_out(tenant, agent):
    me = SubjectFactory(tenant=tenant, external_id="dana")
    project, broad, inferred = memory_store_many(
        drafts=[
            draft(me, "Commit messages use the imperative mood.", memory_key="style.commits",
                  scope_kind="project", scope_ref="atlas"),
            draft(me, "Commit messages use the past tense.", memory_key="style.commits"),
            draft(me, "Commit messages start with an emoji.", memory_key="style.commits",
                  scope_kind="project", scope_ref="atlas", authority="model_inference",
                  source_type="model_inference", confidence=0.9),
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )  # fmt: skip
    result = retrieve(
        principal=AgentPrincipal.from_agent(agent),
        request=RetrievalRequest(
            query="How should I write commit messages?", user_id="dana", project_id="atlas"
        ),
    )
    assert [c.id for c in result.items] == [str(project.id)]
    reasons = {
        r["id"]: r["reason"] for r in result.trace["rejections"] if r["stage"] == "conflicts"
    }
    assert reasons == {
        str(broad.id): "lost_conflict:narrower_scope",
        str(inferred.id): "lost_conflict:authority_class",
    }


def test_a_users_keyless_row_below_an_administrators_is_traced_by_higher_authority():
    """Stop 64's audit of retrieval: a keyless conflict's rows are measured by class and,
    among stated or confirmed ones, by rank (rule 3c), as a key's group is, but every row
    ``keyless_rivals`` dropped was traced ``lost_conflict:authority_class``, a user's row
    beside an administrator's too: both are explicit, one class, and rule 3c left it out.
    Each is now traced by the rule that left it out (``_lost_by``)."""
    admin = cand("admin", memory_type="incident", authority="explicit_admin")
    user = cand("user", memory_type="incident", authority="explicit_user")
    inferred = cand("inferred", memory_type="incident", authority="model_inference")
    kept, rejected = keyless_rivals(
        [admin, user, inferred],
        [[("admin", "explicit_admin"), ("user", "explicit_user"), ("inferred", "model_inference")]],
    )
    assert [c.id for c in kept] == ["admin"]
    assert rejected == [
        Rejection("inferred", "conflicts", "lost_conflict:authority_class"),
        Rejection("user", "conflicts", "lost_conflict:higher_authority"),
    ]


@pytest.mark.parametrize("reversed_", [False, True], ids=["read-first", "read-last"])
def test_a_keyless_row_two_conflicts_leave_out_is_traced_by_the_first_rule(reversed_):
    """Stop 64's audit of retrieval (its fix): a tool's observation below a system's fact in one
    keyless conflict (rule 3c) and below the user's account in another (rule 2) is traced by
    rule 2, whichever conflict the query returned first."""
    tool = cand("tool", memory_type="incident", authority="tool_observation")
    system = cand("system", memory_type="incident", authority="confirmed_system")
    user = cand("user", memory_type="incident", authority="explicit_user")
    cited = [
        [("system", "confirmed_system"), ("tool", "tool_observation")],
        [("user", "explicit_user"), ("tool", "tool_observation")],
    ]
    _, rejected = keyless_rivals([tool, system, user], cited[::-1] if reversed_ else cited)
    assert rejected == [Rejection("tool", "conflicts", "lost_conflict:authority_class")]
