"""A conflict at one place is between the rows tied there, not the rows its rules outranked.

A key's rule for every environment loses to staging's own rules in staging
(``environment_specific``) and is what production uses; a key's global rule loses to a
project's (``narrower_scope``) and is what every other project uses. Both were candidates of
the place's clarification and review item, and a reviewer choosing one of the tied rows
revoked them: production, or every other project, lost the key's value though nobody decided
anything about it.
"""

from dataclasses import replace

import pytest

from memory_core.models import Memory, ReviewItem, ScopeKind, Status
from memory_core.principals import SystemPrincipal
from memory_core.retrieval.pipeline import retrieve
from memory_core.services.conflicts import conflict_resolve
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.factories import SubjectFactory

from .test_conflict_service import REQUEST

pytestmark = pytest.mark.django_db


def _store(tenant, rows, confidence=0.8):
    """Store inferences on ``deploy.region``, one per (region, scope kind, ref, environment),
    by default as sure as admission lets an inference be (``inferred_max_confidence``): a
    rule's winner among them is sure enough to win (``conflict_min_confidence``)."""
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    drafts = [
        MemoryDraft(subject=subject, memory_type="previous_decision", memory_key="deploy.region",
                    content=f"Deploy the API to {region}.", authority="model_inference",
                    source_type="model_inference", confidence=confidence, scope_kind=kind,
                    scope_ref=ref, environment=environment)
        for region, kind, ref, environment in rows
    ]  # fmt: skip
    return memory_store_many(drafts=drafts, principal=SystemPrincipal(tenant_id=tenant.id))


def _tied_at_staging(tenant):
    """Lunest's rule for every environment, and two rules of its staging, tied."""
    return _store(tenant, [
        ("eu-west-1", ScopeKind.PROJECT, "lunest", ""),
        ("us-east-1", ScopeKind.PROJECT, "lunest", "staging"),
        ("ap-south-1", ScopeKind.PROJECT, "lunest", "staging"),
    ])  # fmt: skip


def _ids(rows) -> set[str]:
    return {str(row.id) for row in rows}


def test_a_staging_conflict_leaves_out_the_rule_for_every_environment(
    agent_principal, tenant, reviewer
):
    everywhere, staging, other = _tied_at_staging(tenant)
    in_staging = replace(REQUEST, environment="staging")
    in_production = replace(REQUEST, environment="production")
    assert [i.id for i in retrieve(principal=agent_principal, request=in_production).items] == [
        str(everywhere.id)
    ]
    result = retrieve(principal=agent_principal, request=in_staging)
    [clarification] = result.clarifications
    assert {c.id for c in clarification.candidates} == _ids([staging, other])
    item = ReviewItem.objects.get(pk=clarification.review_item_id)
    assert set(item.candidate_ids) == {staging.id, other.id}
    assert (item.scope, item.environment) == ("project:lunest", "staging")
    rejected = {r["id"]: r["reason"] for r in result.trace["rejections"]}
    assert rejected[str(everywhere.id)] == "lost_conflict:environment_specific"

    conflict_resolve(principal=reviewer, item_id=item.id, outcome="choose_winner",
                     winner_id=other.id, reason="Staging uses ap-south-1.")  # fmt: skip
    assert Memory.objects.get(pk=everywhere.pk).status == Status.ACTIVE
    assert Memory.objects.get(pk=staging.pk).status == Status.REVOKED
    assert [i.id for i in retrieve(principal=agent_principal, request=in_production).items] == [
        str(everywhere.id)
    ]
    after = retrieve(principal=agent_principal, request=in_staging)
    assert after.clarifications == [] and [i.id for i in after.items] == [str(other.id)]


def test_a_projects_conflict_leaves_out_the_keys_global_rule(agent_principal, tenant, reviewer):
    everywhere, lunest, other = _store(tenant, [
        ("eu-west-1", ScopeKind.GLOBAL, "", ""),
        ("us-east-1", ScopeKind.PROJECT, "lunest", ""),
        ("ap-south-1", ScopeKind.PROJECT, "lunest", ""),
    ])  # fmt: skip
    in_orbit = replace(REQUEST, query="Deploy the orbit API to production.", project_id="orbit")
    [clarification] = retrieve(principal=agent_principal, request=REQUEST).clarifications
    assert {c.id for c in clarification.candidates} == _ids([lunest, other])
    conflict_resolve(principal=reviewer, item_id=clarification.review_item_id,
                     outcome="choose_winner", winner_id=other.id,
                     reason="Lunest deploys to ap-south-1.")  # fmt: skip
    assert Memory.objects.get(pk=everywhere.pk).status == Status.ACTIVE
    assert [i.id for i in retrieve(principal=agent_principal, request=in_orbit).items] == [
        str(everywhere.id)
    ]


def test_keeping_both_tied_rows_holds_beside_an_outranked_one(agent_principal, tenant, reviewer):
    """A reviewer kept both staging rules: the group (with the rule for every environment)
    is not asked about again, and the outranked rule is left out in staging as before."""
    everywhere, staging, other = _tied_at_staging(tenant)
    in_staging = replace(REQUEST, environment="staging")
    [clarification] = retrieve(principal=agent_principal, request=in_staging).clarifications
    conflict_resolve(principal=reviewer, item_id=clarification.review_item_id,
                     outcome="keep_both_scoped", reason="Staging uses both.")  # fmt: skip
    after = retrieve(principal=agent_principal, request=in_staging)
    assert after.clarifications == []
    assert {i.id for i in after.items} == _ids([staging, other])
    assert ReviewItem.objects.filter(kind="conflict", state="open").count() == 0
    assert Memory.objects.get(pk=everywhere.pk).status == Status.ACTIVE


def test_a_weak_staging_rule_is_not_asked_about_against_the_rule_for_every_environment(
    agent_principal, tenant
):
    """A winner not sure enough stood against every other row of its key: staging's weak
    rule was "ambiguous" beside the rule for every environment, which it outranks and which
    holds in production; both were the clarification's candidates, and a reviewer choosing
    staging's revoked production's (stop 48's left-open corner). Rivals are the rows at the
    winner's place only."""
    everywhere, staging = _store(tenant, [
        ("eu-west-1", ScopeKind.PROJECT, "lunest", ""),
        ("us-east-1", ScopeKind.PROJECT, "lunest", "staging"),
    ], confidence=0.6)  # fmt: skip
    result = retrieve(principal=agent_principal, request=replace(REQUEST, environment="staging"))
    assert result.clarifications == [] and [i.id for i in result.items] == [str(staging.id)]
    assert not ReviewItem.objects.filter(kind="conflict").exists()
    in_production = replace(REQUEST, environment="production")
    assert [i.id for i in retrieve(principal=agent_principal, request=in_production).items] == [
        str(everywhere.id)
    ]


def test_a_weak_winners_clarification_stands_at_its_candidates_place(agent_principal, tenant):
    """A weak rule the user stated for every project, an inference beside it as weak, and a
    project's inference they both outrank: the clarification asks about the first two, at
    their place (global), and its review item stood at the project's, where a reviewer's
    "keep both" was then kept for rows that do not hold there (stop 49's review)."""
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    drafts = [
        MemoryDraft(subject=subject, memory_type="previous_decision", memory_key="deploy.region",
                    content=content, authority=authority, source_type=source, confidence=0.5,
                    scope_kind=kind, scope_ref=ref)
        for content, authority, source, kind, ref in (
            ("Deploy the API to eu-west-1.", "explicit_user", "user_input", ScopeKind.GLOBAL, ""),
            ("Deploy the API to us-east-1.", "model_inference", "model_inference",
             ScopeKind.GLOBAL, ""),
            ("Deploy the API to ap-south-1.", "model_inference", "model_inference",
             ScopeKind.PROJECT, "lunest"),
        )
    ]  # fmt: skip
    stated, inferred, _ = memory_store_many(
        drafts=drafts, principal=SystemPrincipal(tenant_id=tenant.id)
    )
    [clarification] = retrieve(principal=agent_principal, request=REQUEST).clarifications
    assert {c.id for c in clarification.candidates} == _ids([stated, inferred])
    item = ReviewItem.objects.get(pk=clarification.review_item_id)
    assert (item.scope, item.environment) == ("global", "")
