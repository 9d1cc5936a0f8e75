"""Unresolved high-impact conflicts: clarification + review item; resolution changes retrieval."""

import json
from dataclasses import replace
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from memory_core.embeddings import get_embedder
from memory_core.exceptions import Conflict, NotFound, PermissionDenied, ValidationFailed
from memory_core.models import Memory, MemoryEvent, ReviewItem
from memory_core.principals import AgentPrincipal, SubjectPrincipal, SystemPrincipal
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.types import RetrievalRequest
from memory_core.services.conflicts import conflict_resolve
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.factories import AgentFactory, SubjectFactory, approve_workflow_consent, write_body
from tests.memory_core.conftest import INFERRED, keep_both_open_conflict, stated_then_inferred

pytestmark = pytest.mark.django_db

REQUEST = RetrievalRequest(
    query="Deploy the Lunest API to production.",
    user_id="dana",
    intent="apply_project_rules",
    project_id="lunest",
)


def tied_regions(tenant, *regions):
    """Dana's inferred decisions on ``deploy.region`` for the Lunest project, one per region
    (tied: a conflict); return the rows stored."""
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    drafts = [
        MemoryDraft(subject=subject, memory_type="previous_decision", memory_key="deploy.region",
                    content=f"Deploy the Lunest API to {region}.", authority="model_inference",
                    source_type="model_inference", confidence=0.7, scope_kind="project",
                    scope_ref="lunest")
        for region in regions
    ]  # fmt: skip
    return memory_store_many(drafts=drafts, principal=SystemPrincipal(tenant_id=tenant.id))


@pytest.fixture
def rivals(tenant):
    return tied_regions(tenant, "eu-west-1", "us-east-1")


def test_unresolved_conflict_is_a_clarification_with_one_open_review_item(agent_principal, rivals):
    first = retrieve(principal=agent_principal, request=REQUEST)
    assert first.items == [] or all(c.memory_key != "deploy.region" for c in first.items)
    [clarification] = first.clarifications
    assert clarification.memory_key == "deploy.region"
    assert {c.id for c in clarification.candidates} == {str(m.id) for m in rivals}
    item = ReviewItem.objects.get(pk=clarification.review_item_id)
    assert item.kind == "conflict" and item.state == "open"
    assert {str(i) for i in item.candidate_ids} == {str(m.id) for m in rivals}
    assert (
        MemoryEvent.objects.filter(action="conflict", memory_id__in=[m.id for m in rivals]).count()
        == 2
    )
    second = retrieve(principal=agent_principal, request=REQUEST)
    assert second.clarifications[0].review_item_id == str(item.id)  # reused, not duplicated
    assert ReviewItem.objects.filter(kind="conflict").count() == 1
    assert "deploy.region" in second.prompt
    # The clarification is in the prompt, and in its token count.
    assert second.prompt_tokens == get_embedder().count_tokens(second.prompt)


def test_choose_winner_revokes_the_loser_and_the_next_retrieval_returns_the_winner(
    agent_principal, rivals, reviewer
):
    item_id = retrieve(principal=agent_principal, request=REQUEST).clarifications[0].review_item_id
    winner, loser = rivals
    item = conflict_resolve(
        principal=reviewer, item_id=item_id, outcome="choose_winner", winner_id=winner.id,
        reason="Confirmed with the team: eu-west-1.",
    )  # fmt: skip
    assert item.state == "resolved" and item.resolution == "choose_winner"
    assert item.resolved_by_id == reviewer.user_id
    loser.refresh_from_db()
    assert loser.status == "revoked"
    assert MemoryEvent.objects.filter(memory_id=loser.id, action="revoked",
                                      reason_code="conflict_lost").exists()  # fmt: skip
    after = retrieve(principal=agent_principal, request=REQUEST)
    assert [c.id for c in after.items] == [str(winner.id)] and after.clarifications == []


def test_keep_both_scoped_returns_both(agent_principal, rivals, reviewer):
    item_id = retrieve(principal=agent_principal, request=REQUEST).clarifications[0].review_item_id
    conflict_resolve(principal=reviewer, item_id=item_id, outcome="keep_both_scoped",
                     reason="Both regions are used.")  # fmt: skip
    after = retrieve(principal=agent_principal, request=REQUEST)
    assert {c.id for c in after.items} == {str(m.id) for m in rivals}
    assert after.clarifications == []
    assert Memory.objects.filter(status="active", id__in=[m.id for m in rivals]).count() == 2


def test_a_new_version_of_a_kept_row_opens_the_conflict_again(agent_principal, rivals, reviewer):
    """Stop 62's audit of conflicts found that a ``keep_both_scoped`` decision does not follow
    a kept chain to its new version of the same authority (a rewording): the next retrieval
    asks for clarification again and a new item waits for a reviewer. Kept so, by decision
    (docs/retrieval.md, stage 8): a reviewer kept the rows whose words they read, and a new
    version is a new row (a model's rewording may say something else: "us-east-1 only"), so,
    as a new row d does, it opens the conflict again, beside the row kept with it, and the
    decision stays as it was made, on the rows it named."""
    from memory_core.services.writes import memory_correct

    eu, us = rivals
    item_id = retrieve(principal=agent_principal, request=REQUEST).clarifications[0].review_item_id
    conflict_resolve(principal=reviewer, item_id=item_id, outcome="keep_both_scoped",
                     reason="The API is deployed to both regions.")  # fmt: skip
    kept = retrieve(principal=agent_principal, request=REQUEST)
    assert {c.id for c in kept.items} == {str(eu.id), str(us.id)} and not kept.clarifications

    reworded = memory_correct(principal=SystemPrincipal(tenant_id=eu.tenant_id), memory_id=us.id,
                              data={"content": "Deploy the Lunest API to us-east-1 (N. Virginia).",
                                    "source": {"type": "model_inference", "conversation_id": "c",
                                               "message_id": "m2"},
                                    "confidence": 0.7}).memory  # fmt: skip
    assert reworded.supersedes_id == us.id  # the same chain, a new version

    [asked] = retrieve(principal=agent_principal, request=REQUEST).clarifications
    assert {c.id for c in asked.candidates} == {str(eu.id), str(reworded.id)}
    item = ReviewItem.objects.get(kind="conflict", state="open")
    assert str(item.id) == asked.review_item_id != item_id
    assert set(item.candidate_ids) == {eu.id, reworded.id}
    decided = ReviewItem.objects.get(pk=item_id)
    assert decided.resolution == "keep_both_scoped" and set(decided.candidate_ids) == {eu.id, us.id}


def test_a_reworded_row_kept_beside_a_stronger_one_opens_the_conflict_again(tenant, reviewer):
    """Stop 65's audit of conflicts and reviews: a reviewer kept the user's statement H and a
    model's inference L on a key both; the model reworded L (a correction of the same
    authority), and retrieval measured the new version against H by its rules: it was
    dropped (``lost_conflict:authority_class``), withheld from every agent, with no
    clarification and no review item, where docs/retrieval.md (stage 8) promises that a new
    version of a kept row opens the conflict again beside the rows kept with it. The write
    opens it now (``conflicts_reopen_kept``), and the decision stays on the rows it named."""
    from memory_core.services.writes import memory_correct

    request = RetrievalRequest(
        query="What food does the user like?", user_id="user-1", intent="load_preferences"
    )
    approve_workflow_consent(tenant, "user_preference")
    agent = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))
    written, inferred = stated_then_inferred(
        agent, agent, key="food.likes", inference="User enjoys grilled salmon on Fridays."
    )
    stated = written.memory
    assert "supersession.conflict_lower_authority" in inferred.rule_codes
    conflict = keep_both_open_conflict(
        reviewer, "Both hold: vegetarian most days, salmon on Fridays."
    )
    kept = retrieve(principal=agent, request=request)
    assert {str(stated.id), str(inferred.memory.id)} <= {c.id for c in kept.items}

    reworded = memory_correct(
        principal=agent,
        memory_id=inferred.memory.id,
        data={"content": "User enjoys grilled salmon, usually on Fridays.",
              "source": INFERRED},
    )  # fmt: skip
    assert "supersession.supersedes" in reworded.rule_codes

    again = ReviewItem.objects.get(kind="conflict", state="open")
    assert set(again.candidate_ids) == {stated.id, reworded.memory.id}
    decided = ReviewItem.objects.get(pk=conflict.id)
    assert decided.resolution == "keep_both_scoped"
    assert set(decided.candidate_ids) == {stated.id, inferred.memory.id}
    assert MemoryEvent.objects.filter(
        memory_id=reworded.memory.id, action="conflict", actor_id="admission"
    ).exists()
    # Until a reviewer decides, agents are given the rows the rules pick, as for any write of
    # lower authority on the key; a reviewer keeping both again lets both stand.
    conflict_resolve(principal=reviewer, item_id=again.id, outcome="keep_both_scoped",
                     reason="Still both.")  # fmt: skip
    after = retrieve(principal=agent, request=request)
    assert {str(stated.id), str(reworded.memory.id)} <= {c.id for c in after.items}


def test_a_reopened_conflict_names_no_row_above_the_writers_grant(tenant, reviewer):
    """Stop 65's audit of conflicts: a reviewer kept the person's statement S and a model's
    inference L both, then S was corrected to a sensitive version S2 and kept beside L
    again. An agent capped at ``personal`` reworded L: ``conflicts_reopen_kept`` checked the
    kept rows against its grant before ``conflict_open`` followed them to their newest
    versions, so the old S passed and became S2, a row the agent may not read, and a
    reviewer choosing its rewording would revoke the person's sensitive statement. The
    grant is checked on the newest versions now."""
    from memory_core.services.reviews import review_approve
    from memory_core.services.writes import memory_correct

    approve_workflow_consent(tenant, "user_preference")
    strong = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))  # max sensitive
    capped = AgentPrincipal.from_agent(AgentFactory(tenant=tenant, max_sensitivity="personal"))
    stated, inferred = (
        write.memory
        for write in stated_then_inferred(
            strong, capped, key="food.likes", inference="User enjoys grilled salmon on Fridays."
        )
    )
    keep_both_open_conflict(reviewer, "Both hold.")
    waiting = memory_correct(
        principal=strong,
        memory_id=stated.id,
        data={"content": "User prefers vegetarian meals; the user has diabetes.",
              "source": {"type": "user_input", "conversation_id": "c-3", "message_id": "m-3"}},
    )  # fmt: skip
    assert waiting.decision == "pending_approval", waiting.rule_codes
    review_approve(principal=reviewer, item_id=waiting.review_item.id, reason="ok")
    sensitive = Memory.objects.get(pk=waiting.memory.id)
    assert sensitive.status == "active" and sensitive.sensitivity == "sensitive"
    keep_both_open_conflict(reviewer, "Still both.")
    assert not Memory.objects.visible_to(capped).filter(pk=sensitive.pk).exists()

    reworded = memory_correct(
        principal=capped,
        memory_id=inferred.id,
        data={"content": "User enjoys grilled salmon, usually on Fridays.",
              "source": INFERRED},
    )  # fmt: skip
    assert "supersession.supersedes" in reworded.rule_codes
    opened = ReviewItem.objects.filter(kind="conflict", state="open")
    assert sensitive.id not in {i for item in opened for i in item.candidate_ids}


def test_ask_user_keeps_the_clarification_on_the_same_item(agent_principal, rivals, tenant):
    item_id = retrieve(principal=agent_principal, request=REQUEST).clarifications[0].review_item_id
    subject = rivals[0].subject
    person = SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1)
    conflict_resolve(principal=person, item_id=item_id, outcome="ask_user", reason="I'll decide.")
    after = retrieve(principal=agent_principal, request=REQUEST)
    assert after.clarifications[0].review_item_id == item_id
    assert ReviewItem.objects.filter(kind="conflict").count() == 1


def test_ask_user_is_not_forgotten_once_another_conflict_at_its_place_is_resolved(
    tenant, agent_principal, reviewer
):
    """Stop 62's audit of conflicts found that the review state of a key's place kept only its
    newest resolved item (``conflict_lookup``): once another conflict there was resolved (a
    model's inference a reviewer settled by keeping the user's decision), the next retrieval
    opened a new item for the very rows a reviewer had resolved "ask the user", back in the
    reviewers' queue. Every item resolved ``ask_user`` at the place counts now
    (``ConflictState.asked_about``): with no row outside its candidates in the group, the
    clarification keeps pointing at it, and nothing is opened."""
    from memory_core.services.writes import memory_write

    common = dict(subject=SubjectFactory(tenant=tenant, external_id="dana"),
                  memory_key="deploy.region", authority="explicit_user", source_type="user_input",
                  confidence=0.7, scope_kind="project", scope_ref="lunest")  # fmt: skip
    system = SystemPrincipal(tenant_id=tenant.id)
    decision, constraint = memory_store_many(drafts=[
        MemoryDraft(memory_type="previous_decision", content="Deploy the Lunest API to eu-west-1.",
                    **common),
        MemoryDraft(memory_type="project_constraint",
                    content="Deploy the Lunest API to us-east-1.", **common),
    ], principal=system)  # fmt: skip
    [asked] = retrieve(principal=agent_principal, request=REQUEST).clarifications
    assert {c.id for c in asked.candidates} == {str(decision.id), str(constraint.id)}
    conflict_resolve(principal=reviewer, item_id=asked.review_item_id, outcome="ask_user",
                     reason="Dana decides.")  # fmt: skip

    # A model's inference on the decision's chain: a conflict of its own at the same place,
    # which a reviewer settles by keeping the user's decision.
    inferred = memory_write(principal=system, data=write_body(
        subject="dana", memory_type="previous_decision", memory_key="deploy.region",
        scope="project:lunest", content="Deploy the Lunest API to ap-south-1.",
        source={"type": "model_inference", "conversation_id": "c", "message_id": "m"},
    ))  # fmt: skip
    assert inferred.review_item.kind == "conflict"
    conflict_resolve(principal=reviewer, item_id=inferred.review_item.id,
                     outcome="choose_winner", winner_id=decision.id,
                     reason="The inference is wrong.")  # fmt: skip

    [again] = retrieve(principal=agent_principal, request=REQUEST).clarifications
    assert again.review_item_id == asked.review_item_id
    assert not ReviewItem.objects.filter(kind="conflict", state="open").exists()


def test_resolution_is_validated_and_scoped(agent_principal, rivals, reviewer, other_tenant):
    item_id = retrieve(principal=agent_principal, request=REQUEST).clarifications[0].review_item_id
    with pytest.raises(ValidationFailed) as bad:
        conflict_resolve(principal=reviewer, item_id=item_id, outcome="flip_a_coin", reason="x")
    assert bad.value.code == "invalid_outcome"
    with pytest.raises(ValidationFailed) as bad:
        conflict_resolve(principal=reviewer, item_id=item_id, outcome="choose_winner",
                         winner_id=rivals[0].tenant_id, reason="x")  # fmt: skip
    assert bad.value.code == "winner_not_candidate"
    with pytest.raises(ValidationFailed) as bad:
        conflict_resolve(principal=reviewer, item_id=item_id, outcome="ask_user", reason=" ")
    assert bad.value.code == "reason_required"
    with pytest.raises(PermissionDenied):
        conflict_resolve(principal=agent_principal, item_id=item_id, outcome="ask_user", reason="x")
    with pytest.raises(NotFound):
        conflict_resolve(principal=SystemPrincipal(tenant_id=other_tenant.id), item_id=item_id,
                         outcome="ask_user", reason="x")  # fmt: skip
    conflict_resolve(principal=reviewer, item_id=item_id, outcome="ask_user", reason="x")
    with pytest.raises(ValidationFailed) as bad:
        conflict_resolve(principal=reviewer, item_id=item_id, outcome="ask_user", reason="x")
    assert bad.value.code == "review_not_open"


def test_approving_a_conflict_item_says_to_resolve_it_and_names_no_portal_page(
    agent_principal, rivals, reviewer
):
    """The domain's message named the portal's URL, /portal/review/conflicts/: where a
    reviewer resolves it is the API's and the portal's to say."""
    from memory_core.exceptions import Conflict
    from memory_core.services.reviews import review_approve, review_reject

    item_id = retrieve(principal=agent_principal, request=REQUEST).clarifications[0].review_item_id
    for decide in (review_approve, review_reject):
        with pytest.raises(Conflict) as refused:
            decide(principal=reviewer, item_id=item_id, reason="x")
        assert refused.value.code == "not_a_sensitive_write"
        assert refused.value.message == (
            "This item is a conflict between memories, not a write waiting for approval: "
            "resolve the conflict by choosing its outcome (approve and reject are for "
            "sensitive writes)."
        )
    assert ReviewItem.objects.get(pk=item_id).state == "open"


def test_an_approval_of_lower_authority_keeps_every_chain_in_the_keys_conflict(tenant):
    """A lower-authority write opened the key's conflict with the head; approving a
    lower-authority sensitive write on the key adds it to the conflict, dropping no chain
    (the approval replaced the candidates with the head and itself)."""
    from memory_core.services.reviews import review_approve
    from memory_core.services.writes import memory_write
    from tests.factories import write_body

    system = SystemPrincipal(tenant_id=tenant.id)
    inferred = {"type": "model_inference", "conversation_id": "c", "message_id": "m"}
    common = {"subject": "dana", "memory_type": "project_constraint"}
    common |= {"scope": "project:atlas", "memory_key": "backend.language"}
    head = memory_write(
        principal=system, data=write_body(**common, content="Backend is Python.")
    ).memory
    rival = memory_write(
        principal=system,
        data=write_body(**common, content="Backend is Ruby.", source=inferred),
    )
    assert rival.review_item.kind == "conflict"
    pending = memory_write(
        principal=system,
        data=write_body(**common, content="Backend is Go; its owner has asthma.", source=inferred),
    )
    assert pending.decision == "pending_approval"

    review_approve(principal=system, item_id=pending.review_item.id, reason="confirmed")

    conflict = ReviewItem.objects.get(kind="conflict", state="open", memory_key="backend.language")
    assert set(conflict.candidate_ids) == {head.id, rival.memory.id, pending.memory.id}


def test_after_ask_user_a_new_conflict_on_the_key_holds_every_standing_chain(
    agent_principal, reviewer
):
    """Stop 57's audit of reviews found a keyless conflict opened after one resolved "ask
    the user" leaving out its first rival; the keyed path held, and still does: the new item
    takes in every chain standing on the key, and its winner is the key's only active row."""
    from memory_core.services.writes import memory_write

    def data(content, source):
        return {
            "subject": "user-5",
            "memory_type": "project_constraint",
            "memory_key": "backend.language",
            "scope": "project:atlas",
            "content": content,
            "source": {"type": source, "conversation_id": "c", "message_id": content[:20]},
        }

    memory_write(
        principal=agent_principal, data=data("Atlas's backend is in Python.", "user_input")
    )
    memory_write(
        principal=agent_principal, data=data("Atlas's backend is in Ruby.", "model_inference")
    )
    first = ReviewItem.objects.get(kind="conflict", state="open")
    conflict_resolve(principal=reviewer, item_id=first.pk, outcome="ask_user", reason="a")
    third = memory_write(
        principal=agent_principal, data=data("Atlas's backend is in Elixir.", "model_inference")
    )
    second = ReviewItem.objects.get(kind="conflict", state="open")
    assert len(second.candidate_ids) == 3
    conflict_resolve(
        principal=reviewer,
        item_id=second.pk,
        outcome="choose_winner",
        winner_id=third.memory.id,
        reason="b",
    )
    active = Memory.objects.filter(memory_key="backend.language", status="active")
    assert set(active.values_list("content", flat=True)) == {"Atlas's backend is in Elixir."}


def _rival_drafts(subject, *, project, regions, environment=""):
    return [
        MemoryDraft(subject=subject, memory_type="previous_decision", memory_key="deploy.region",
                    content=f"Deploy the {project} API to {region}.", authority="model_inference",
                    source_type="model_inference", confidence=0.7, scope_kind="project",
                    scope_ref=project, environment=environment)
        for region in regions
    ]  # fmt: skip


def _open_conflicts():
    return {str(i.id): i for i in ReviewItem.objects.filter(kind="conflict", state="open")}


def test_conflicts_on_one_key_in_two_projects_have_an_item_each(
    agent_principal, rivals, reviewer, tenant
):
    """A request in each project sees its own project's rivals on the key: each conflict has
    its own item, which the other project's requests leave alone (one item per key was
    rewritten by each request in turn, and a reviewer's decision on one set was lost)."""
    orbit = memory_store_many(
        drafts=_rival_drafts(
            rivals[0].subject, project="orbit", regions=("ap-south-1", "sa-east-1")
        ),
        principal=SystemPrincipal(tenant_id=tenant.id),
    )
    in_orbit = replace(REQUEST, query="Deploy the orbit API to production.", project_id="orbit")
    lunest_item = retrieve(principal=agent_principal, request=REQUEST).clarifications[0]
    orbit_item = retrieve(principal=agent_principal, request=in_orbit).clarifications[0]
    assert lunest_item.review_item_id != orbit_item.review_item_id
    again = retrieve(principal=agent_principal, request=REQUEST).clarifications[0]
    assert again.review_item_id == lunest_item.review_item_id

    items = _open_conflicts()
    assert set(items) == {lunest_item.review_item_id, orbit_item.review_item_id}
    lunest, orbit_conflict = items[lunest_item.review_item_id], items[orbit_item.review_item_id]
    assert set(lunest.candidate_ids) == {m.id for m in rivals}
    assert set(orbit_conflict.candidate_ids) == {m.id for m in orbit}
    assert (lunest.scope, orbit_conflict.scope) == ("project:lunest", "project:orbit")

    # Keeping both in lunest holds, however often orbit asks again about its own rivals.
    conflict_resolve(principal=reviewer, item_id=lunest.id, outcome="keep_both_scoped",
                     reason="Lunest runs in both regions.")  # fmt: skip
    assert retrieve(principal=agent_principal, request=in_orbit).clarifications[
        0
    ].review_item_id == str(orbit_conflict.id)
    after = retrieve(principal=agent_principal, request=REQUEST)
    assert after.clarifications == []
    assert {str(m.id) for m in rivals} <= {c.id for c in after.items}


def test_a_loser_of_one_place_closes_the_conflict_it_settles_at_another(tenant, reviewer):
    """A global row in conflict in two projects: choosing the lunest row revoked it, and the
    orbit conflict stayed open with it and one row in use, nothing left to choose, where a
    revoke of it closes both (stop 47's audit)."""
    from memory_core.models import ScopeKind
    from memory_core.services.conflicts import ConflictPlace, conflict_open

    subject = SubjectFactory(tenant=tenant, external_id="dana")
    shared, lunest, orbit = memory_store_many(
        drafts=[
            MemoryDraft(subject=subject, memory_type="previous_decision",
                        memory_key="deploy.region", content=f"Deploy the API to {region}.",
                        authority="model_inference", source_type="model_inference",
                        confidence=0.7, scope_kind=kind, scope_ref=ref)
            for region, kind, ref in [("eu-west-1", ScopeKind.GLOBAL, ""),
                                      ("us-east-1", ScopeKind.PROJECT, "lunest"),
                                      ("ap-south-1", ScopeKind.PROJECT, "orbit")]
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )  # fmt: skip
    items = {
        ref: conflict_open(
            tenant_id=tenant.id, subject_id=subject.id, memory_key="deploy.region",
            place=ConflictPlace("project", ref, ""), candidate_ids=[shared.id, row.id],
        )
        for ref, row in (("lunest", lunest), ("orbit", orbit))
    }  # fmt: skip
    conflict_resolve(principal=reviewer, item_id=items["lunest"].id, outcome="choose_winner",
                     winner_id=lunest.id, reason="Lunest deploys to us-east-1.")  # fmt: skip
    states = dict(ReviewItem.objects.values_list("id", "state"))
    resolutions = dict(ReviewItem.objects.values_list("id", "resolution"))
    assert Memory.objects.get(pk=shared.pk).status == "revoked"
    assert states[items["lunest"].id] == "resolved"
    assert resolutions[items["lunest"].id] == "choose_winner"  # its own outcome, kept
    assert (states[items["orbit"].id], resolutions[items["orbit"].id]) == (
        "resolved",
        "conflict_lost",
    )


def test_conflicts_on_one_key_in_two_environments_have_an_item_each(agent_principal, tenant):
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    system = SystemPrincipal(tenant_id=tenant.id)
    for environment, regions in (("staging", ("eu-west-1", "eu-west-2")),
                                 ("production", ("us-east-1", "us-west-2"))):  # fmt: skip
        memory_store_many(
            drafts=_rival_drafts(subject, project="lunest", regions=regions,
                                 environment=environment),
            principal=system,
        )  # fmt: skip
    asked = {
        environment: retrieve(
            principal=agent_principal, request=replace(REQUEST, environment=environment)
        ).clarifications[0]
        for environment in ("staging", "production", "staging")
    }
    items = _open_conflicts()
    assert {str(i.id): i.environment for i in items.values()} == {
        asked["staging"].review_item_id: "staging",
        asked["production"].review_item_id: "production",
    }
    for environment, clarification in asked.items():
        cited = Memory.objects.filter(id__in=items[clarification.review_item_id].candidate_ids)
        assert {m.environment for m in cited} == {environment}


def test_lower_authority_writes_in_two_projects_open_a_conflict_each(tenant):
    from memory_core.services.writes import memory_write
    from tests.factories import write_body

    system = SystemPrincipal(tenant_id=tenant.id)
    inferred = {"type": "model_inference", "conversation_id": "c", "message_id": "m"}
    opened = {}
    for project in ("atlas", "orbit"):
        common = {"subject": "dana", "memory_type": "project_constraint",
                  "scope": f"project:{project}", "memory_key": "backend.language"}  # fmt: skip
        head = memory_write(principal=system, data=write_body(**common, content="Python."))
        rival = memory_write(
            principal=system, data=write_body(**common, content="Ruby.", source=inferred)
        )
        opened[project] = (rival.review_item.id, {head.memory.id, rival.memory.id})
    items = _open_conflicts()
    assert len(items) == 2
    for project, (item_id, candidates) in opened.items():
        item = items[str(item_id)]
        assert (item.scope, set(item.candidate_ids)) == (f"project:{project}", candidates)


def test_requests_seeing_other_rows_at_one_place_each_keep_what_a_reviewer_kept(tenant, reviewer):
    """Two agents at one place see the shared rival and each its own private one. A reviewer
    keeps both for each set in turn; each agent's next request keeps its own set (only the
    last resolution counted: the other agent's request opened its conflict again, forever)."""
    from memory_core.principals import AgentPrincipal
    from tests.factories import AgentFactory

    subject = SubjectFactory(tenant=tenant, external_id="dana")
    system = SystemPrincipal(tenant_id=tenant.id)
    [shared] = _rival_drafts(subject, project="lunest", regions=("eu-west-1",))
    memory_store_many(drafts=[shared], principal=system)
    principals = []
    for region in ("us-east-1", "ap-south-1"):
        agent = AgentFactory(tenant=tenant)
        [own] = _rival_drafts(subject, project="lunest", regions=(region,))
        memory_store_many(drafts=[replace(own, agent_id=agent.id)], principal=system)
        principals.append(AgentPrincipal.from_agent(agent))

    for principal in principals:
        [clarification] = retrieve(principal=principal, request=REQUEST).clarifications
        conflict_resolve(
            principal=reviewer,
            item_id=clarification.review_item_id,
            outcome="keep_both_scoped",
            reason="Both regions serve Lunest.",
        )
    for principal in principals:
        again = retrieve(principal=principal, request=REQUEST)
        assert again.clarifications == []
        assert len([c for c in again.items if c.memory_key == "deploy.region"]) == 2
    assert not ReviewItem.objects.filter(kind="conflict", state="open").exists()


def _two_agents_with_private_rivals(tenant):
    """A shared rival on deploy.region at lunest, and two agents each with a private one."""
    from memory_core.principals import AgentPrincipal
    from tests.factories import AgentFactory

    subject = SubjectFactory(tenant=tenant, external_id="dana")
    system = SystemPrincipal(tenant_id=tenant.id)
    [shared] = memory_store_many(
        drafts=_rival_drafts(subject, project="lunest", regions=("eu-west-1",)), principal=system
    )
    principals, private = [], []
    for region in ("us-east-1", "ap-south-1"):
        agent = AgentFactory(tenant=tenant)
        [own] = _rival_drafts(subject, project="lunest", regions=(region,))
        private += memory_store_many(drafts=[replace(own, agent_id=agent.id)], principal=system)
        principals.append(AgentPrincipal.from_agent(agent))
    return shared, private, principals


def test_requests_seeing_other_rows_at_one_place_share_one_item_that_holds_them_all(
    tenant, reviewer
):
    """Each agent's request used to replace the open item's candidates with its own set: a
    reviewer decided on whichever set came last, and the other agent's next request opened
    the conflict again. The item now holds every row either saw, and one decision covers
    both agents."""
    shared, private, principals = _two_agents_with_private_rivals(tenant)
    asked = [retrieve(principal=p, request=REQUEST).clarifications[0] for p in principals]
    assert asked[0].review_item_id == asked[1].review_item_id
    item = ReviewItem.objects.get(pk=asked[0].review_item_id)
    everyone = {shared.id, *(m.id for m in private)}
    assert set(item.candidate_ids) == everyone
    # The row that joined has its conflict event, as the first two have.
    assert (
        set(
            MemoryEvent.objects.filter(
                action="conflict", details__review_item=str(item.id)
            ).values_list("memory_id", flat=True)
        )
        == everyone
    )
    retrieve(principal=principals[0], request=REQUEST)  # a subset: nothing to rewrite
    item.refresh_from_db()
    assert set(item.candidate_ids) == everyone

    conflict_resolve(principal=reviewer, item_id=item.id, outcome="keep_both_scoped",
                     reason="Every region serves Lunest.")  # fmt: skip
    for principal in principals:
        again = retrieve(principal=principal, request=REQUEST)
        assert again.clarifications == []
        assert len([c for c in again.items if c.memory_key == "deploy.region"]) == 2
    assert not ReviewItem.objects.filter(kind="conflict", state="open").exists()


def test_one_winner_chosen_for_the_shared_item_settles_every_agents_conflict(tenant, reviewer):
    shared, private, principals = _two_agents_with_private_rivals(tenant)
    for principal in principals:
        [clarification] = retrieve(principal=principal, request=REQUEST).clarifications
    conflict_resolve(principal=reviewer, item_id=clarification.review_item_id,
                     outcome="choose_winner", winner_id=shared.id,
                     reason="eu-west-1 only.")  # fmt: skip
    assert set(
        Memory.objects.filter(id__in=[m.id for m in private]).values_list("status", flat=True)
    ) == {"revoked"}
    for principal in principals:
        again = retrieve(principal=principal, request=REQUEST)
        assert again.clarifications == []
        assert [c.id for c in again.items if c.memory_key == "deploy.region"] == [str(shared.id)]


def test_choosing_an_agents_private_winner_over_a_shared_candidate_is_refused(tenant, reviewer):
    """Stop 60's audit of reviewers found that choosing agent X's private memory as the
    winner of a conflict with a memory every agent shares revoked the shared one: X's
    retrieval had opened the conflict, agent Y was never shown one, and from then on Y was
    given nothing on the key (``conflict_resolve`` revoked every other candidate in use,
    whoever could read the winner). Such a choice is refused, 409 ``winner_narrower``, its
    message naming both reaches and Y, and nothing changes: Y is still given the shared one."""
    from memory_core.principals import AgentPrincipal
    from tests.factories import AgentFactory

    subject = SubjectFactory(tenant=tenant, external_id="dana")
    x = AgentFactory(tenant=tenant, name="agent-x")
    y = AgentFactory(tenant=tenant, name="agent-y")
    shared_draft, private_draft = _rival_drafts(
        subject, project="lunest", regions=("eu-west-1", "us-east-1")
    )
    shared, private = memory_store_many(
        drafts=[shared_draft, replace(private_draft, agent_id=x.id)],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )
    x_principal, y_principal = AgentPrincipal.from_agent(x), AgentPrincipal.from_agent(y)
    [clarification] = retrieve(principal=x_principal, request=REQUEST).clarifications
    item = ReviewItem.objects.get(pk=clarification.review_item_id)
    assert set(item.candidate_ids) == {shared.id, private.id}
    assert str(shared.id) in {c.id for c in retrieve(principal=y_principal, request=REQUEST).items}

    with pytest.raises(Conflict) as refused:
        conflict_resolve(principal=reviewer, item_id=item.id, outcome="choose_winner",
                         winner_id=private.id, reason="us-east-1 is right",
                         seen_candidate_ids=item.candidate_ids)  # fmt: skip
    assert refused.value.code == "winner_narrower"
    message = refused.value.message
    assert "private to agent agent-x" in message, message
    assert "shared by the tenant's agents" in message and "agent-y" in message, message
    assert ReviewItem.objects.get(pk=item.id).state == "open"
    assert Memory.objects.get(pk=shared.pk).status == "active"
    assert not MemoryEvent.objects.filter(action__in=["revoked", "conflict_resolved"]).exists()
    assert str(shared.id) in {c.id for c in retrieve(principal=y_principal, request=REQUEST).items}


def test_a_winner_above_an_agents_sensitivity_cap_is_refused_over_a_candidate_it_reads(
    tenant, reviewer
):
    """Stop 60's audit of reviewers found that a shared winner more sensitive than an agent
    may read revoked the shared candidate that agent read, leaving it nothing on the key.
    Refused, ``winner_narrower``, naming the agent and its cap; nothing changes. Choosing the
    candidate every agent reads revokes the sensitive one as before."""
    from tests.factories import AgentFactory

    subject = SubjectFactory(tenant=tenant, external_id="dana")
    AgentFactory(tenant=tenant, name="capped", max_sensitivity="personal")
    personal, sensitive = memory_store_many(
        drafts=[
            replace(draft, sensitivity=level)
            for draft, level in zip(
                _rival_drafts(subject, project="lunest", regions=("eu-west-1", "us-east-1")),
                ("personal", "sensitive"),
                strict=True,
            )
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )
    assert (personal.sensitivity, sensitive.sensitivity) == ("personal", "sensitive")
    item = ReviewItem.objects.create(tenant=tenant, subject=subject, kind="conflict",
                                     memory_key="deploy.region", scope_kind="project",
                                     scope_ref="lunest",
                                     candidate_ids=[personal.id, sensitive.id])  # fmt: skip

    with pytest.raises(Conflict) as refused:
        conflict_resolve(principal=reviewer, item_id=item.id, outcome="choose_winner",
                         winner_id=sensitive.id, reason="us-east-1")  # fmt: skip
    assert refused.value.code == "winner_narrower"
    assert "agent capped reads it" in refused.value.message
    assert "up to personal only, and the chosen memory is sensitive" in refused.value.message
    assert Memory.objects.get(pk=personal.pk).status == "active"

    conflict_resolve(principal=reviewer, item_id=item.id, outcome="choose_winner",
                     winner_id=personal.id, reason="eu-west-1")  # fmt: skip
    assert Memory.objects.get(pk=sensitive.pk).status == "revoked"


def _conflict_item(tenant, subject, *candidates):
    return ReviewItem.objects.create(tenant=tenant, subject=subject, kind="conflict",
                                     memory_key="deploy.region", scope_kind="project",
                                     scope_ref="lunest",
                                     candidate_ids=[m.id for m in candidates])  # fmt: skip


@pytest.mark.parametrize(
    ("policy_change", "winner_fields", "words"),
    [
        (
            ("retrieval", "max_prompt_sensitivity", "personal"),
            {"sensitivity": "sensitive"},
            "puts no memory above personal into a prompt, and the chosen memory is sensitive",
        ),
        (
            ("budget", "confidence_floor", 0.5),
            {"confidence": 0.4},
            "no memory below confidence 0.5, and the chosen memory's is 0.4",
        ),
    ],
    ids=["above_the_prompt_cap", "below_the_confidence_floor"],
)
def test_a_winner_the_policy_gives_no_agent_is_refused_over_a_candidate_agents_are_given(
    tenant, reviewer, policy_change, winner_fields, words
):
    """Stop 60's review found that ``_refuse_narrower`` measured whom a winner reaches by the
    agents' grants alone, not by the tenant policy's rules that every store applies
    (``retrieval.max_prompt_sensitivity``, ``budget.confidence_floor``): a shared winner above
    the prompt cap, or below the confidence floor, is given to no agent, yet choosing it over
    a shared candidate every agent was given revoked that candidate, and agents were given
    nothing on the key. The policy is measured by retrieval's own rule
    (``filters.policy_reason``): refused, ``winner_narrower``, naming the policy; nothing
    revoked."""
    import copy

    from memory_core.policy_defaults import DEFAULT_POLICY
    from memory_core.principals import AgentPrincipal
    from memory_core.services.policy import policy_publish
    from tests.factories import AgentFactory

    section, name, value = policy_change
    document = copy.deepcopy(DEFAULT_POLICY)
    document.setdefault(section, {})[name] = value
    policy_publish(tenant=tenant, document=document)
    agent = AgentFactory(tenant=tenant, name="reader")
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    loser_draft, winner_draft = _rival_drafts(
        subject, project="lunest", regions=("eu-west-1", "us-east-1")
    )
    loser, winner = memory_store_many(
        drafts=[loser_draft, replace(winner_draft, **winner_fields)],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )
    item = _conflict_item(tenant, subject, loser, winner)
    given = {
        c.id for c in retrieve(principal=AgentPrincipal.from_agent(agent), request=REQUEST).items
    }
    assert str(loser.id) in given and str(winner.id) not in given, given

    with pytest.raises(Conflict) as refused:
        conflict_resolve(principal=reviewer, item_id=item.id, outcome="choose_winner",
                         winner_id=winner.id, reason="us-east-1")  # fmt: skip
    assert refused.value.code == "winner_narrower"
    message = refused.value.message
    assert "agent reader reads it, but the tenant's policy" in message and words in message
    assert Memory.objects.get(pk=loser.pk).status == "active"
    assert ReviewItem.objects.get(pk=item.pk).state == "open"


def test_a_copy_revoked_with_a_loser_is_measured_for_the_agents_it_reaches(tenant, reviewer):
    """Stop 60's review found that choosing a winner revoked each copy of a losing candidate
    (``_folded_copies``: the same words, type, scope and environment; its sensitivity may
    differ) without measuring whom the copy reaches: ``_refuse_narrower`` measured the
    candidates alone. A public copy of the personal loser, read by an agent capped at public
    that reads neither candidate and was shown no conflict, was revoked, and that agent was
    given nothing on the matter any more. Copies are measured as candidates are: refused,
    ``winner_narrower``, naming the copy and its candidate; the copy left active."""
    from memory_core.principals import AgentPrincipal
    from tests.factories import AgentFactory

    capped = AgentFactory(tenant=tenant, name="public-only", max_sensitivity="public")
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    loser_draft, winner_draft = _rival_drafts(
        subject, project="lunest", regions=("eu-west-1", "us-east-1")
    )
    loser, winner, copy_ = memory_store_many(
        drafts=[
            replace(loser_draft, sensitivity="personal"),
            replace(winner_draft, sensitivity="personal"),
            replace(loser_draft, sensitivity="public", memory_key=""),
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )
    assert copy_.content_hash == loser.content_hash and copy_.sensitivity == "public"
    item = _conflict_item(tenant, subject, loser, winner)
    given = {
        c.id for c in retrieve(principal=AgentPrincipal.from_agent(capped), request=REQUEST).items
    }
    assert str(copy_.id) in given, given

    with pytest.raises(Conflict) as refused:
        conflict_resolve(principal=reviewer, item_id=item.id, outcome="choose_winner",
                         winner_id=winner.id, reason="us-east-1")  # fmt: skip
    assert refused.value.code == "winner_narrower"
    message = refused.value.message
    assert f"memory {str(copy_.id)[:8]}, a copy of candidate {str(loser.id)[:8]}" in message
    assert "agent public-only reads it" in message, message
    assert Memory.objects.get(pk=copy_.pk).status == "active"
    assert Memory.objects.get(pk=loser.pk).status == "active"


def test_a_row_retired_since_leaves_the_open_item_when_a_new_one_joins(tenant):
    from memory_core.services.writes import memory_revoke

    shared, private, principals = _two_agents_with_private_rivals(tenant)
    system = SystemPrincipal(tenant_id=tenant.id)
    newcomer = memory_store_many(
        drafts=_rival_drafts(shared.subject, project="lunest", regions=("sa-east-1",)),
        principal=system,
    )[0]
    retrieve(principal=principals[0], request=REQUEST)
    memory_revoke(principal=system, memory_id=newcomer.id, reason="Wrong region.")
    [clarification] = retrieve(principal=principals[1], request=REQUEST).clarifications
    item = ReviewItem.objects.get(pk=clarification.review_item_id)
    assert set(item.candidate_ids) == {shared.id, *(m.id for m in private)}


def test_a_reason_past_the_limit_is_refused_by_every_decision_service(
    agent_principal, rivals, reviewer, tenant
):
    """The API and the portal refuse a reason over MAX_REVIEW_REASON_CHARS; the services took
    any length from a caller that skipped them. Nothing is decided."""
    from memory_core.models import MAX_REVIEW_REASON_CHARS
    from memory_core.services.reviews import review_approve, review_reject

    too_long = "x" * (MAX_REVIEW_REASON_CHARS + 1)
    item_id = retrieve(principal=agent_principal, request=REQUEST).clarifications[0].review_item_id
    with pytest.raises(ValidationFailed) as refused:
        conflict_resolve(principal=reviewer, item_id=item_id, outcome="ask_user", reason=too_long)
    assert refused.value.code == "reason_too_long"
    assert ReviewItem.objects.get(pk=item_id).state == "open"
    pending = ReviewItem.objects.create(
        tenant=tenant, subject=rivals[0].subject, memory=rivals[0], kind="sensitive_write"
    )
    for decide in (review_approve, review_reject):
        with pytest.raises(ValidationFailed) as refused:
            decide(principal=reviewer, item_id=pending.pk, reason=too_long)
        assert refused.value.code == "reason_too_long"
    assert ReviewItem.objects.get(pk=pending.pk).state == "open"
    conflict_resolve(
        principal=reviewer,
        item_id=item_id,
        outcome="ask_user",
        reason="y" * MAX_REVIEW_REASON_CHARS,
    )
    assert ReviewItem.objects.get(pk=item_id).state == "resolved"


def _past_its_end(memory) -> None:
    """Put ``memory`` past its valid_until, not yet swept: its status still says "active"
    (``Memory.status_at`` tells)."""
    now = timezone.now()
    Memory.objects.filter(pk=memory.pk).update(
        valid_from=now - timedelta(days=2), valid_until=now - timedelta(hours=1)
    )


def test_a_winner_past_its_valid_until_is_not_active_and_nothing_changes(
    agent_principal, rivals, reviewer
):
    item_id = retrieve(principal=agent_principal, request=REQUEST).clarifications[0].review_item_id
    expired, live = rivals
    _past_its_end(expired)
    with pytest.raises(Conflict) as refused:
        conflict_resolve(principal=reviewer, item_id=item_id, outcome="choose_winner",
                         winner_id=expired.id, reason="the old one")  # fmt: skip
    assert refused.value.code == "winner_not_active"
    assert "expired" in refused.value.message
    assert ReviewItem.objects.get(pk=item_id).state == "open"
    assert Memory.objects.get(pk=live.pk).status == "active"
    assert not MemoryEvent.objects.filter(
        action__in=["revoked", "conflict_resolved"], memory_id__in=[expired.id, live.id]
    ).exists()


def test_choosing_the_live_winner_leaves_a_loser_past_its_end_to_the_sweep(
    agent_principal, rivals, reviewer
):
    item_id = retrieve(principal=agent_principal, request=REQUEST).clarifications[0].review_item_id
    expired, live = rivals
    _past_its_end(expired)
    conflict_resolve(principal=reviewer, item_id=item_id, outcome="choose_winner",
                     winner_id=live.id, reason="the live one")  # fmt: skip
    # Not in use already: not revoked as the conflict's loser (the sweep expires it).
    assert Memory.objects.get(pk=expired.pk).status == "active"
    assert not MemoryEvent.objects.filter(action="revoked", memory_id=expired.id).exists()


# The same question through the API, about the conflicts its writes and imports make.
ATLAS_QUESTION = {
    "query": "Which region do we deploy atlas to?",
    "intent": "apply_project_rules",
    "context": {"user_id": "user-1", "project_id": "atlas"},
}
EU = "Deploy atlas to eu-west-1."
US = "Deploy atlas to us-east-1."


def _ask_atlas(api_client) -> dict:
    answer = api_client.post("/api/v1/retrieve", ATLAS_QUESTION, format="json")
    assert answer.status_code == 200, answer.json()
    return answer.json()


def _cited(clarification: dict) -> set[str]:
    """Return the ids of the candidates an answer's ``clarification`` cites."""
    return {c["id"] for c in clarification["candidates"]}


def _import(tenant, tmp_path, *records: dict) -> None:
    """Import ``records`` (JSON Lines of ``import_memories``) about ``user-1`` of ``tenant``."""
    path = tmp_path / "memories.jsonl"
    path.write_text("".join(json.dumps({"tenant": tenant.slug, **r}) + "\n" for r in records))
    call_command("import_memories", str(path), stdout=StringIO(), stderr=StringIO())


def test_a_winner_revokes_the_losers_twin_on_its_key_that_dedup_had_folded_into_it(
    api_client, tenant, tmp_path, reviewer
):
    """Two imported records of one decision (two source messages) and a rival on one key: dedup
    folded the twin into the loser (``content_hash``), so the clarification and its item cited
    the loser alone. Choosing the rival revoked only the cited row; the twin stood again on the
    next retrieval, a new clarification and review item with the loser's words (stop 56's
    audit of conflicts)."""

    def record(content: str, message_id: str) -> dict:
        return {
            "subject": "user-1",
            "memory_type": "previous_decision",
            "memory_key": "deploy.region",
            "scope": "project:atlas",
            "content": content,
            "authority": "model_inference",
            "confidence": 0.7,
            "source": {
                "type": "model_inference",
                "conversation_id": "old-store",
                "message_id": message_id,
            },
        }

    _import(tenant, tmp_path, record(EU, "1"), record(EU, "2"), record(US, "3"))
    winner = Memory.objects.get(content=US)
    [clarification] = _ask_atlas(api_client)["clarifications"]
    conflict_resolve(
        principal=reviewer,
        item_id=clarification["review_item"],
        outcome="choose_winner",
        winner_id=winner.id,
        reason="The team confirmed us-east-1.",
    )

    answer = _ask_atlas(api_client)
    assert answer["clarifications"] == []
    assert [item["content"] for item in answer["items"]] == [US]
    assert not ReviewItem.objects.filter(kind="conflict", state="open").exists()
    twins = Memory.objects.filter(content=EU)
    assert {m.status for m in twins} == {"revoked"}
    [copy] = [m for m in twins if str(m.id) not in _cited(clarification)]
    event = MemoryEvent.objects.get(memory_id=copy.id, action="revoked")
    assert event.reason_code == "conflict_lost"
    assert event.details["copy_of"] in _cited(clarification)


def test_a_winner_revokes_the_losers_unkeyed_copy_that_dedup_had_folded_into_it(
    api_client, reviewer
):
    """Two inferences on ``deploy.region`` of two types (a tie: a clarification) and an unkeyed
    copy of one, which dedup folded into its keyed row (``dedup.keeper_order``). Choosing
    us-east-1 revoked only the keyed eu-west-1; the copy was given on its own beside the winner
    on the next retrieval (stop 56's audit of conflicts)."""

    def inference(message_id: str) -> dict:
        return {"type": "model_inference", "conversation_id": "c-1", "message_id": message_id}

    bodies = [
        write_body(memory_type="project_constraint", memory_key="deploy.region",
                   scope="project:atlas", content=EU, source=inference("m-1")),
        write_body(memory_type="previous_decision", memory_key="deploy.region",
                   scope="project:atlas", content=US, source=inference("m-2")),
        write_body(memory_type="project_constraint", scope="project:atlas", content=EU,
                   source=inference("m-3"), confidence=0.6),
    ]  # fmt: skip
    bodies[2].pop("memory_key")
    ids = []
    for body in bodies:
        answer = api_client.post("/api/v1/memories", body, format="json")
        assert answer.status_code == 201, answer.json()
        ids.append(answer.json()["memory"]["id"])

    first = _ask_atlas(api_client)
    [clarification] = first["clarifications"]
    assert EU not in [item["content"] for item in first["items"]]  # folded into its key
    conflict_resolve(
        principal=reviewer,
        item_id=clarification["review_item"],
        outcome="choose_winner",
        winner_id=ids[1],
        reason="The team confirmed us-east-1.",
    )

    answer = _ask_atlas(api_client)
    assert answer["clarifications"] == []
    assert [item["content"] for item in answer["items"]] == [US]
    assert Memory.objects.get(pk=ids[2]).status == "revoked"


def test_a_winner_not_yet_in_effect_is_not_active_and_nothing_changes(
    api_client, tenant, tmp_path, reviewer
):
    """The user's imported rule starts next week (``import_memories`` keeps valid_from); the
    agent's inference on the key, kept beside it in a conflict, is what agents are given now.
    Choosing the user's rule was accepted: the inference was revoked and the next retrieval
    gave nothing on ``deploy.region`` until next week (stop 56's audit of conflicts)."""
    starts = timezone.now() + timedelta(days=7)
    _import(
        tenant,
        tmp_path,
        {
            "subject": "user-1",
            "memory_type": "project_constraint",
            "memory_key": "deploy.region",
            "scope": "project:atlas",
            "content": EU,
            "authority": "explicit_user",
            "valid_from": starts.isoformat(),
            "source": {"type": "user_input", "conversation_id": "old-store", "message_id": "1"},
        },
    )
    later = Memory.objects.get()
    written = api_client.post(
        "/api/v1/memories",
        write_body(
            memory_type="project_constraint",
            memory_key="deploy.region",
            scope="project:atlas",
            content=US,
            source={"type": "model_inference", "conversation_id": "c-1", "message_id": "m-1"},
        ),
        format="json",
    ).json()
    item_id = written["conflict_review_item"]
    assert item_id is not None
    assert [i["content"] for i in _ask_atlas(api_client)["items"]] == [US]

    with pytest.raises(Conflict) as refused:
        conflict_resolve(principal=reviewer, item_id=item_id, outcome="choose_winner",
                         winner_id=later.id, reason="The user's own rule.")  # fmt: skip
    assert refused.value.code == "winner_not_active"
    assert "not in effect until" in refused.value.message
    assert ReviewItem.objects.get(pk=item_id).state == "open"
    assert Memory.objects.get(pk=written["memory"]["id"]).status == "active"
    assert not MemoryEvent.objects.filter(action__in=["revoked", "conflict_resolved"]).exists()
    assert [i["content"] for i in _ask_atlas(api_client)["items"]] == [US]
