"""Stage 8: explicit beats inferred, narrower beats broader, newer confirmed beats older."""

from datetime import timedelta

from memory_core.retrieval.conflicts import resolve_conflicts
from memory_core.retrieval.types import Rejection

from .helpers import NOW, cand, policy


def group(*rows):
    for row in rows:
        row.memory_key = row.memory_key or "style.answers"
    return list(rows)


def test_explicit_beats_inferred():
    rows = group(cand("explicit"), cand("inferred", authority="model_inference", score=0.9))
    kept, outcomes, clar, rejected = resolve_conflicts(rows, policy=policy())
    assert [c.id for c in kept] == ["explicit"]
    assert outcomes[0].rule == "authority_class" and outcomes[0].winner_id == "explicit"
    assert rejected[0].reason == "lost_conflict:authority_class" and not clar


def test_narrower_scope_beats_broader():
    rows = group(cand("global"), cand("repo", scope_kind="repo", scope_ref="atlas-api"))
    kept, outcomes, _, _ = resolve_conflicts(rows, policy=policy())
    assert [c.id for c in kept] == ["repo"] and outcomes[0].rule == "narrower_scope"


def test_a_row_of_the_active_environment_beats_one_of_every_environment():
    # The untied row is newer: without the rule, newer_confirmed would pick it.
    rows = group(
        cand("staging", environment="staging", updated_at=NOW - timedelta(days=30)),
        cand("everywhere", updated_at=NOW - timedelta(days=1)),
    )
    kept, outcomes, _, rejected = resolve_conflicts(rows, policy=policy())
    assert [c.id for c in kept] == ["staging"] and outcomes[0].rule == "environment_specific"
    assert rejected[0].reason == "lost_conflict:environment_specific"


def test_the_environment_weighs_after_authority_and_scope():
    explicit = cand("explicit-everywhere")
    inferred = cand("inferred-staging", authority="model_inference", environment="staging")
    _, outcomes, _, _ = resolve_conflicts(group(explicit, inferred), policy=policy())
    assert outcomes[0].winner_id == "explicit-everywhere"
    narrow = cand("repo-everywhere", scope_kind="repo", scope_ref="atlas-api")
    broad = cand("global-staging", environment="staging")
    _, outcomes, _, _ = resolve_conflicts(group(narrow, broad), policy=policy())
    assert (outcomes[0].winner_id, outcomes[0].rule) == ("repo-everywhere", "narrower_scope")


def test_newer_confirmed_version_beats_older():
    rows = group(
        cand("older", updated_at=NOW - timedelta(days=90)),
        cand("newer", updated_at=NOW - timedelta(days=2)),
    )
    kept, outcomes, _, _ = resolve_conflicts(rows, policy=policy())
    assert [c.id for c in kept] == ["newer"] and outcomes[0].rule == "newer_confirmed"


def test_unresolved_high_impact_conflict_returns_a_clarification_and_no_winner():
    rows = [
        cand(
            "a",
            memory_key="deploy.region",
            authority="model_inference",
            memory_type="previous_decision",
        ),
        cand(
            "b",
            memory_key="deploy.region",
            authority="model_inference",
            memory_type="previous_decision",
        ),
        cand("other"),
    ]
    kept, outcomes, clar, rejected = resolve_conflicts(rows, policy=policy())
    assert [c.id for c in kept] == ["other"]
    assert clar[0].memory_key == "deploy.region"
    assert {c.id for c in clar[0].candidates} == {"a", "b"}
    assert outcomes[0].clarification and outcomes[0].high_impact and outcomes[0].winner_id is None
    assert {r.reason for r in rejected} == {"unresolved_high_impact_conflict"}


def test_project_constraints_are_high_impact_whatever_the_key():
    rows = [
        cand(
            "a",
            memory_key="atlas.db",
            memory_type="project_constraint",
            authority="model_inference",
        ),
        cand(
            "b",
            memory_key="atlas.db",
            memory_type="project_constraint",
            authority="model_inference",
        ),
    ]
    _, _, clar, _ = resolve_conflicts(rows, policy=policy())
    assert [c.memory_key for c in clar] == ["atlas.db"]


def test_unresolved_low_impact_conflict_keeps_the_best_score():
    rows = group(
        cand("a", authority="model_inference", score=0.4),
        cand("b", authority="model_inference", score=0.6),
    )
    kept, outcomes, clar, _ = resolve_conflicts(rows, policy=policy())
    assert [c.id for c in kept] == ["b"] and not clar
    assert outcomes[0].rule == "best_score_low_impact"


def test_an_outranked_inference_of_another_place_never_wins_a_low_impact_group():
    """Stop 60's audit of retrieval found that a low-impact group whose rule-chosen winner was
    not sure enough was given its best-scored row over every member: two of the user's
    explicit statements for project atlas (confidence 0.6 and 0.5, undecided) lost to a
    model's global inference on ``style.commits`` that rules 2 and 3 had already outranked,
    and the inference was the key's only item. The best score is now taken among the rows
    no rule decides between (``contested``), and the rows the rules outranked lose by their
    rule, as in a high-impact group."""
    formal = cand(
        "formal", memory_key="style.commits", scope_kind="project", scope_ref="atlas",
        confidence=0.6, score=0.50, updated_at=NOW - timedelta(days=1),
    )  # fmt: skip
    relaxed = cand(
        "relaxed", memory_key="style.commits", scope_kind="project", scope_ref="atlas",
        confidence=0.5, score=0.45, updated_at=NOW - timedelta(days=3),
    )  # fmt: skip
    inferred = cand(
        "inferred", memory_key="style.commits", authority="model_inference",
        confidence=0.7, score=0.57,
    )  # fmt: skip
    kept, outcomes, clar, rejected = resolve_conflicts([formal, relaxed, inferred], policy=policy())
    assert not clar
    assert outcomes[0].winner_id == "formal" and outcomes[0].rule == "best_score_low_impact"
    assert [c.id for c in kept] == ["formal"]
    assert set(rejected) == {
        Rejection("relaxed", "conflicts", "lost_conflict:best_score_low_impact"),
        Rejection("inferred", "conflicts", "lost_conflict:authority_class"),
    }


def test_a_group_a_reviewer_kept_keeps_both():
    rows = [
        cand("a", memory_key="deploy.region", authority="model_inference"),
        cand("b", memory_key="deploy.region", authority="model_inference"),
    ]
    kept, outcomes, clar, _ = resolve_conflicts(
        rows, policy=policy(), acknowledged={"deploy.region": {frozenset({"a", "b"})}}
    )
    assert len(kept) == 2 and not clar and outcomes[0].rule == "kept_both_by_reviewer"


def test_a_group_within_a_kept_set_is_kept_and_one_with_a_new_row_is_not():
    """A reviewer who kept a, b and c let each of them stand beside the others; a new row d
    is not covered."""
    rows = [cand(name, memory_key="deploy.region", authority="model_inference") for name in "abd"]
    acknowledged = {"deploy.region": {frozenset("xy"), frozenset("abc")}}
    kept, outcomes, clar, _ = resolve_conflicts(
        rows[:2], policy=policy(), acknowledged=acknowledged
    )
    assert len(kept) == 2 and not clar and outcomes[0].rule == "kept_both_by_reviewer"
    kept, outcomes, clar, _ = resolve_conflicts(rows, policy=policy(), acknowledged=acknowledged)
    assert kept == [] and clar[0].memory_key == "deploy.region"


def test_a_weak_winner_against_a_weak_rival_is_ambiguous():
    # The seed's choose_winner: top and second both below 0.8 confidence return no winner
    # ("memory is ambiguous" is safer than a weak pick). Two tool observations on a
    # high-impact key, the newer one would have won by newer_confirmed.
    def observed(name, confidence, days):
        return cand(name, memory_key="deploy.region", memory_type="previous_decision",
                    authority="tool_observation", confidence=confidence,
                    updated_at=NOW - timedelta(days=days))  # fmt: skip

    weak = [observed("old", 0.6, 9), observed("new", 0.7, 1)]
    kept, outcomes, clar, _ = resolve_conflicts(weak, policy=policy())
    assert kept == [] and clar[0].memory_key == "deploy.region"
    assert outcomes[0].winner_id is None and outcomes[0].clarification
    # One of them sure enough: the rule decides again.
    sure = [observed("old", 0.6, 9), observed("new", 0.9, 1)]
    kept, outcomes, clar, _ = resolve_conflicts(sure, policy=policy())
    assert [c.id for c in kept] == ["new"] and outcomes[0].rule == "newer_confirmed" and not clar
    # A tenant can lower the bar.
    kept, _, _, _ = resolve_conflicts(weak, policy=policy(conflict_min_confidence=0.5))
    assert [c.id for c in kept] == ["new"]


def test_within_a_class_the_write_paths_authority_order_decides_before_recency():
    """The write path keeps a user's write on an admin's key as a separate, non-winning
    chain (and a system fact's on a tool's): retrieval handed the newer, lower one out."""
    admin = cand("admin", authority="explicit_admin", updated_at=NOW - timedelta(days=90))
    user = cand("user", authority="explicit_user", updated_at=NOW - timedelta(days=1))
    kept, outcomes, _, rejected = resolve_conflicts(group(admin, user), policy=policy())
    assert [c.id for c in kept] == ["admin"] and outcomes[0].rule == "higher_authority"
    assert rejected[0].reason == "lost_conflict:higher_authority"

    system = cand("system", authority="confirmed_system", updated_at=NOW - timedelta(days=90))
    tool = cand("tool", authority="tool_observation", updated_at=NOW - timedelta(days=1))
    _, outcomes, _, _ = resolve_conflicts(group(system, tool), policy=policy())
    assert (outcomes[0].winner_id, outcomes[0].rule) == ("system", "higher_authority")

    # A narrower scope still comes first: a user's repo rule beats an admin's global one.
    narrow = cand("user-repo", authority="explicit_user", scope_kind="repo", scope_ref="a")
    _, outcomes, _, _ = resolve_conflicts(group(admin, narrow), policy=policy())
    assert (outcomes[0].winner_id, outcomes[0].rule) == ("user-repo", "narrower_scope")


def _tied_at_staging():
    """Two inferences tied in staging, and the key's inference for every environment."""
    return [
        cand(name, memory_key="deploy.region", authority="model_inference", environment=env)
        for name, env in (("everywhere", ""), ("staging-a", "staging"), ("staging-b", "staging"))
    ]


def test_a_clarification_holds_the_tied_rows_not_the_ones_the_rules_outranked():
    """The rule for every environment loses to staging's own in staging and holds in
    production: a candidate of staging's clarification, a reviewer's choice there revoked it
    (the review item's candidates are the clarification's)."""
    kept, outcomes, clar, rejected = resolve_conflicts(_tied_at_staging(), policy=policy())
    assert kept == [] and {c.id for c in clar[0].candidates} == {"staging-a", "staging-b"}
    assert set(outcomes[0].candidate_ids) == {"everywhere", "staging-a", "staging-b"}
    assert {r.memory_id: r.reason for r in rejected} == {
        "everywhere": "lost_conflict:environment_specific",
        "staging-a": "unresolved_high_impact_conflict",
        "staging-b": "unresolved_high_impact_conflict",
    }
    broad = cand("global", memory_key="deploy.region", authority="model_inference")
    narrow = [
        cand(name, memory_key="deploy.region", authority="model_inference",
             scope_kind="project", scope_ref="atlas")
        for name in ("atlas-a", "atlas-b")
    ]  # fmt: skip
    _, _, clar, rejected = resolve_conflicts([broad, *narrow], policy=policy())
    assert {c.id for c in clar[0].candidates} == {"atlas-a", "atlas-b"}
    assert rejected[0] == Rejection("global", "conflicts", "lost_conflict:narrower_scope")


def test_a_weak_winner_is_ambiguous_against_its_rivals_at_its_place_only():
    """A winner not sure enough (``conflict_min_confidence``) stood against every other row:
    the key's rule for every environment, which staging's own rule outranks and which holds
    in production, made staging's weak rule ambiguous, was a candidate of its clarification,
    and was revoked when a reviewer chose staging's (stop 48's left-open corner)."""
    staging = cand("staging", memory_key="deploy.region", authority="model_inference",
                   environment="staging", confidence=0.6)  # fmt: skip
    everywhere = cand("everywhere", memory_key="deploy.region", authority="model_inference",
                      confidence=0.6)  # fmt: skip
    kept, outcomes, clar, rejected = resolve_conflicts([staging, everywhere], policy=policy())
    assert [c.id for c in kept] == ["staging"] and not clar
    assert (outcomes[0].winner_id, outcomes[0].rule) == ("staging", "environment_specific")
    assert rejected == [Rejection("everywhere", "conflicts", "lost_conflict:environment_specific")]
    # A rival at its place, even of a lower authority class, still makes a weak winner
    # ambiguous, and the two are asked about; the row of every environment is not.
    stated = cand("stated", memory_key="deploy.region", authority="explicit_user",
                  environment="staging", confidence=0.5)  # fmt: skip
    _, outcomes, clar, _ = resolve_conflicts([stated, staging, everywhere], policy=policy())
    assert outcomes[0].winner_id is None
    assert {c.id for c in clar[0].candidates} == {"stated", "staging"}
    # A weak rule the user stated for every project wins over a project's inference: the
    # inference holds only where the rule does, and a reviewer choosing it would have
    # revoked the user's rule in every project.
    broad = cand("broad", memory_key="deploy.region", authority="explicit_user",
                 confidence=0.5)  # fmt: skip
    inferred = cand("inferred", memory_key="deploy.region", authority="model_inference",
                    scope_kind="project", scope_ref="atlas", confidence=0.6)  # fmt: skip
    kept, outcomes, clar, _ = resolve_conflicts([broad, inferred], policy=policy())
    assert [c.id for c in kept] == ["broad"] and not clar
    assert outcomes[0].rule == "authority_class"


def test_the_tied_rows_a_reviewer_kept_stand_and_an_outranked_row_still_loses():
    """The item (and so the kept set) holds the tied rows only: the group with the rule for
    every environment is within it, and that rule loses in staging as it would anyway."""
    acknowledged = {"deploy.region": {frozenset({"staging-a", "staging-b"})}}
    kept, outcomes, clar, rejected = resolve_conflicts(
        _tied_at_staging(), policy=policy(), acknowledged=acknowledged
    )
    assert {c.id for c in kept} == {"staging-a", "staging-b"} and not clar
    assert outcomes[0].rule == "kept_both_by_reviewer"
    assert rejected == [Rejection("everywhere", "conflicts", "lost_conflict:environment_specific")]
    # A new tied row is not covered.
    extra = cand("staging-c", memory_key="deploy.region", authority="model_inference",
                 environment="staging")  # fmt: skip
    _, _, clar, _ = resolve_conflicts(
        [*_tied_at_staging(), extra], policy=policy(), acknowledged=acknowledged
    )
    assert {c.id for c in clar[0].candidates} == {"staging-a", "staging-b", "staging-c"}
