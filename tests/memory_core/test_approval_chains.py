"""Where an approved write lands, and what open conflicts say once a chain's head moves on.

A sensitive write waits for a reviewer; meanwhile the key may gain heads. The approval
measures it as a write would be measured now (``writes._heads``): against the strongest,
then newest, head its writer may read. A conflict stands between chains: when a correction
or an approval moves one chain's head on, the conflict cites the new head, so a reviewer's
choice applies to what is in use, and a page shown before the move is refused.
"""

import pytest

from memory_core.exceptions import Conflict
from memory_core.models import Agent, Memory, MemoryEvent, ReviewItem, Status
from memory_core.principals import AgentPrincipal
from memory_core.selectors.approvals import CONFLICT_LOST
from memory_core.selectors.portal import review_queue
from memory_core.services.api_keys import agent_deactivate, agent_grant_set
from memory_core.services.conflicts import conflict_resolve
from memory_core.services.reviews import review_approve
from memory_core.services.writes import memory_correct, memory_write, memory_write_batch
from tests.factories import (
    AgentFactory,
    MemoryFactory,
    SubjectFactory,
    approve_workflow_consent,
)
from tests.memory_core.conftest import INFERRED, keep_both_open_conflict, stated_then_inferred

pytestmark = pytest.mark.django_db

KEY = "backend.language"
SENSITIVE = "Atlas's lead has asthma, so the backend is in Go."


def data(content, source="user_input", *, key=KEY, memory_type="project_constraint"):
    return {
        "subject": "user-5",
        "memory_type": memory_type,
        "memory_key": key,
        "scope": "project:atlas",
        "content": content,
        "source": {"type": source, "conversation_id": "c", "message_id": content[:20]},
    }


def active_on_key(key=KEY) -> set:
    return set(Memory.objects.filter(memory_key=key, status="active").values_list("pk", flat=True))


def write_rivals(agent_principal):
    """H (explicit, the user's words) and L (inferred, kept beside H in a conflict)."""
    strong = memory_write(principal=agent_principal, data=data("Atlas's backend is in Python."))
    weak = memory_write(
        principal=agent_principal, data=data("Atlas's backend is in Ruby.", "model_inference")
    )
    assert weak.review_item is not None and weak.review_item.kind == "conflict"
    return strong.memory, weak.memory, weak.review_item


def test_an_approval_lands_on_the_strongest_head_as_a_write_would(agent_principal, reviewer):
    pending = memory_write(principal=agent_principal, data=data(SENSITIVE))
    assert pending.decision == "pending_approval" and pending.review_item.candidate_ids == []
    strong, weak, _ = write_rivals(agent_principal)

    review_approve(principal=reviewer, item_id=pending.review_item.id, reason="ok")

    approved = Memory.objects.get(pk=pending.memory.id)
    # Before: it superseded the newest head, L, and left two explicit heads on the key.
    assert approved.supersedes_id == strong.id
    assert active_on_key() == {approved.id, weak.id}


def test_an_approval_never_supersedes_a_head_its_writer_may_not_read(agent_principal, reviewer):
    subject = SubjectFactory(tenant_id=agent_principal.tenant_id, external_id="user-5")
    hidden = MemoryFactory(
        subject=subject,
        memory_type="user_preference",
        memory_key="health.notes",
        scope_kind="project",
        scope_ref="atlas",
        sensitivity="restricted",  # above the agent's maximum
    )
    body = data("User has asthma; avoid runs.", key="health.notes", memory_type="user_preference")
    pending = memory_write(principal=agent_principal, data=body)
    assert pending.decision == "pending_approval" and pending.review_item.candidate_ids == []

    review_approve(principal=reviewer, item_id=pending.review_item.id, reason="ok")

    hidden.refresh_from_db()
    assert hidden.status == "active"
    assert Memory.objects.get(pk=pending.memory.id).supersedes_id is None


def test_an_approval_by_a_subject_bound_agent_lands_on_its_subjects_head(agent, reviewer):
    """The writer's grant is read for the subject it wrote about: an agent acting through a
    subject token reaches that subject's heads."""
    Agent.objects.filter(pk=agent.pk).update(any_subject=False)
    agent.refresh_from_db()
    writer = AgentPrincipal.from_agent(agent, bound_user_id="user-5")
    SubjectFactory(tenant=agent.tenant, external_id="user-5")  # a bound agent creates none
    pending = memory_write(principal=writer, data=data(SENSITIVE))
    assert pending.decision == "pending_approval", pending.rule_codes
    head = MemoryFactory(  # the key's head, written while the write waited
        subject=pending.memory.subject,
        memory_type="project_constraint",
        memory_key=KEY,
        scope_kind="project",
        scope_ref="atlas",
        authority="explicit_user",
    )

    review_approve(principal=reviewer, item_id=pending.review_item.id, reason="ok")

    assert Memory.objects.get(pk=pending.memory.id).supersedes_id == head.id
    assert active_on_key() == {pending.memory.id}


@pytest.mark.parametrize("how", ["correction", "approval"])
def test_a_conflict_follows_its_candidates_chain_to_the_new_head(agent_principal, reviewer, how):
    strong, weak, item = write_rivals(agent_principal)
    shown = list(item.candidate_ids)
    if how == "correction":
        newer = memory_correct(
            principal=agent_principal,
            memory_id=strong.id,
            data={
                "content": "Atlas's backend is in Python 3.12.",
                "source": {"type": "user_input", "conversation_id": "c", "message_id": "m2"},
            },
        ).memory
    else:
        pending = memory_write(principal=agent_principal, data=data(SENSITIVE))
        assert pending.review_item.candidate_ids == [strong.id]
        review_approve(principal=reviewer, item_id=pending.review_item.id, reason="ok")
        newer = Memory.objects.get(pk=pending.memory.id)
    assert newer.supersedes_id == strong.id

    item.refresh_from_db()
    assert item.state == "open"
    assert set(item.candidate_ids) == {newer.id, weak.id}

    def choose_weak(seen):
        conflict_resolve(
            principal=reviewer,
            item_id=item.id,
            outcome="choose_winner",
            winner_id=weak.id,
            reason="Ruby",
            seen_candidate_ids=seen,
        )

    # A page shown before the move: refused, nothing revoked.
    with pytest.raises(Conflict) as refused:
        choose_weak(shown)
    assert refused.value.code == "conflict_changed"
    assert active_on_key() == {newer.id, weak.id}
    # Shown again: choosing L revokes the new head, which stays in use no longer.
    choose_weak(item.candidate_ids)
    assert active_on_key() == {weak.id}


def test_a_batch_moves_each_chain_it_supersedes_and_the_conflict_citing_one(
    agent_principal,
):
    """A batch's superseding writes move together (``memory_supersede_many``): each old head
    is retired with its own events, and the open conflict citing one follows it."""
    strong, weak, item = write_rivals(agent_principal)
    other = memory_write(
        principal=agent_principal, data=data("Atlas deploys on Fridays.", key="deploy.day")
    ).memory
    results = memory_write_batch(
        principal=agent_principal,
        items=[
            data("Atlas deploys on Tuesdays.", key="deploy.day"),
            data("Atlas's backend is in Python 3.12."),
        ],
    )

    assert [r.rule_codes for r in results] == [["supersession.supersedes"]] * 2
    moved = {r.memory.supersedes_id: Memory.objects.get(pk=r.memory.id) for r in results}
    assert set(moved) == {other.id, strong.id}
    for previous_id, successor in moved.items():
        assert (successor.version, successor.status) == (2, "active")
        assert Memory.objects.get(pk=previous_id).status == "superseded"
        retired = MemoryEvent.objects.get(memory_id=previous_id, action="superseded")
        assert retired.details == {"successor": str(successor.id)}
        assert retired.reason_code == "supersession.supersedes"
        assert list(
            MemoryEvent.objects.filter(memory_id=successor.id).values_list("action", flat=True)
        ) == ["corrected", "admitted"]
    item.refresh_from_db()
    assert set(item.candidate_ids) == {moved[strong.id].id, weak.id}


@pytest.mark.parametrize("outcome", ["keep_both_scoped", "ask_user"])
def test_only_choosing_a_winner_names_one(agent_principal, reviewer, outcome):
    _, weak, item = write_rivals(agent_principal)

    conflict_resolve(
        principal=reviewer, item_id=item.id, outcome=outcome, winner_id=weak.id, reason="both"
    )

    events = MemoryEvent.objects.filter(action="conflict_resolved", reason_code=outcome)
    assert events.count() == 2
    assert {event.details["winner"] for event in events} == {""}
    assert ReviewItem.objects.get(pk=item.id).state == "resolved"


@pytest.mark.django_db(transaction=True)
def test_a_resolution_that_fails_midway_changes_nothing(agent_principal, reviewer, monkeypatch):
    """``conflict_resolve`` is one transaction: the losers' revocation is undone when
    recording the outcome fails after it."""
    strong, weak, item = write_rivals(agent_principal)

    def fail(*args, **kwargs):
        raise RuntimeError("the events table is unavailable")

    monkeypatch.setattr(MemoryEvent.objects, "bulk_create", fail)
    with pytest.raises(RuntimeError):
        conflict_resolve(
            principal=reviewer,
            item_id=item.id,
            outcome="choose_winner",
            winner_id=weak.id,
            reason="Ruby",
        )

    assert active_on_key() == {strong.id, weak.id}
    assert ReviewItem.objects.get(pk=item.id).state == "open"


def test_an_approval_never_supersedes_a_version_its_writer_may_no_longer_read(tenant, reviewer):
    """The recorded head, and its chain's newest version, are checked against the writer's
    grant as the key's other heads are: a restricted correction approved while the write
    waited was superseded by it, and so was the head after the writer's grant narrowed."""
    writer = AgentPrincipal.from_agent(AgentFactory(tenant=tenant, max_sensitivity="sensitive"))
    broad = AgentPrincipal.from_agent(AgentFactory(tenant=tenant, max_sensitivity="restricted"))
    head = memory_write(principal=writer, data=data("Atlas's backend is in Python.")).memory
    pending = memory_write(principal=writer, data=data(SENSITIVE))
    assert pending.review_item.candidate_ids == [head.id]
    restricted = memory_correct(
        principal=broad,
        memory_id=head.id,
        data={
            "content": "Atlas's backend is in Rust.",
            "sensitivity": "restricted",
            "source": {"type": "user_input", "conversation_id": "c2", "message_id": "m2"},
        },
    )
    review_approve(principal=reviewer, item_id=restricted.review_item.id, reason="ok")

    review_approve(principal=reviewer, item_id=pending.review_item.id, reason="ok")

    assert Memory.objects.get(pk=restricted.memory.id).status == "active"
    assert Memory.objects.get(pk=pending.memory.id).supersedes_id is None


def test_an_approval_after_the_writers_grant_narrowed_leaves_the_head(tenant, reviewer):
    agent = AgentFactory(tenant=tenant)
    writer = AgentPrincipal.from_agent(agent)
    head = memory_write(principal=writer, data=data("Atlas's backend is in Python.")).memory
    pending = memory_write(principal=writer, data=data(SENSITIVE))
    assert pending.review_item.candidate_ids == [head.id]
    Agent.objects.filter(pk=agent.pk).update(read_types=["episode"])  # no constraints now

    review_approve(principal=reviewer, item_id=pending.review_item.id, reason="ok")

    head.refresh_from_db()
    assert head.status == "active"
    assert Memory.objects.get(pk=pending.memory.id).supersedes_id is None


@pytest.mark.parametrize(
    ("narrowed", "refused_now"),
    [
        ({"max_sensitivity": "personal"}, "sensitivity.above_agent_max"),
        ({"write_types": ["episode"]}, "grant.type_not_allowed"),
    ],
    ids=["max_sensitivity", "write_types"],
)
def test_an_approval_never_stores_a_write_its_writers_grant_no_longer_allows(
    tenant, reviewer, narrowed, refused_now
):
    """Stop 61's audit of reviewers: once an administrator narrows the writing agent's grant
    (``agent_grant_set``) while its sensitive write waits for a reviewer, so that admission
    refuses the very same write now (its sensitivity above the agent's ``max_sensitivity``,
    or its type outside ``write_types``), an approval is refused with 409
    ``review_grant_narrowed`` and changes nothing: the write stays pending, its item open.
    The approval checked the head it lands on against the writer's grant now, never the
    write itself, and made it an active, shared sensitive memory."""
    agent = AgentFactory(tenant=tenant)
    pending = memory_write(principal=AgentPrincipal.from_agent(agent), data=data(SENSITIVE))
    assert pending.decision == "pending_approval"
    agent = agent_grant_set(agent=agent, **narrowed)
    now = memory_write(principal=AgentPrincipal.from_agent(agent), data=data(SENSITIVE, key="k2"))
    assert now.decision == "rejected" and refused_now in now.rule_codes

    with pytest.raises(Conflict) as refused:
        review_approve(principal=reviewer, item_id=pending.review_item.id, reason="looks right")

    assert refused.value.code == "review_grant_narrowed"
    assert refused_now in refused.value.message
    assert Memory.objects.get(pk=pending.memory.id).status == "pending_approval"
    assert ReviewItem.objects.get(pk=pending.review_item.id).state == "open"


def test_an_approval_never_stores_the_write_of_an_agent_deactivated_while_it_waited(
    tenant, reviewer
):
    """Stop 61's review: a deactivated agent writes nothing (its keys are refused), and a
    reviewer's approval stored its waiting write active all the same."""
    agent = AgentFactory(tenant=tenant)
    pending = memory_write(principal=AgentPrincipal.from_agent(agent), data=data(SENSITIVE))
    agent_deactivate(agent=agent)
    with pytest.raises(Conflict) as refused:
        review_approve(principal=reviewer, item_id=pending.review_item.id, reason="looks right")
    assert refused.value.code == "review_grant_narrowed"
    assert "deactivated" in refused.value.message
    assert Memory.objects.get(pk=pending.memory.id).status == "pending_approval"


def test_a_weaker_writes_conflict_names_only_the_heads_its_writer_may_read(tenant):
    from tests.clients import client_for
    from tests.factories import approve_workflow_consent

    user = SubjectFactory(tenant=tenant, external_id="user-1")
    common = dict(subject=user, memory_key="style.answers", memory_type="user_preference")
    seen = MemoryFactory(content="User prefers concise answers.", **common)
    hidden = MemoryFactory(
        content="User prefers answers reviewed by legal.", sensitivity="restricted", **common
    )
    agent = AgentFactory(tenant=tenant, max_sensitivity="personal")
    approve_workflow_consent(tenant, "user_preference")
    body = {
        "subject": "user-1",
        "memory_type": "user_preference",
        "memory_key": "style.answers",
        "scope": "global",
        "content": "User seems to prefer long answers.",
        "source": {"type": "model_inference", "conversation_id": "c-1", "message_id": "m-1"},
        "consent": "workflow",
    }

    response = client_for(agent).post("/api/v1/memories", body, format="json")

    assert response.status_code == 201, response.content
    cited = set(ReviewItem.objects.get(kind="conflict").candidate_ids)
    assert seen.id in cited and hidden.id not in cited


def superseded_under(memory) -> int:
    return MemoryEvent.objects.get(memory_id=memory.id, action="superseded").policy_version


@pytest.mark.parametrize("path", ["write", "correction", "approval"])
def test_a_superseded_event_names_the_policy_the_new_version_ran_under(
    agent_principal, reviewer, tenant, path
):
    """Not the policy the old version was written under: each event records the policy
    version its change ran under (DESIGN.md, "Policy is versioned configuration")."""
    import copy

    from memory_core.policy_defaults import DEFAULT_POLICY
    from memory_core.services.policy import policy_publish

    old = memory_write(principal=agent_principal, data=data("Atlas's backend is in Python."))
    assert old.memory.policy_version == 1
    policy_publish(tenant=tenant, document=copy.deepcopy(DEFAULT_POLICY), note="v2")
    if path == "write":
        new = memory_write(principal=agent_principal, data=data("Atlas's backend is in Go."))
    elif path == "correction":
        new = memory_correct(
            principal=agent_principal,
            memory_id=old.memory.id,
            data={"content": "Atlas's backend is in Go.", "source": data("x")["source"]},
        )
    else:
        new = memory_write(principal=agent_principal, data=data(SENSITIVE))
        assert new.decision == "pending_approval"
        review_approve(principal=reviewer, item_id=new.review_item.id, reason="ok")
    successor = Memory.objects.get(pk=new.memory.id)
    assert successor.supersedes_id == old.memory.id and successor.policy_version == 2
    assert superseded_under(old.memory) == 2


def test_an_approval_of_a_correction_of_a_keys_conflict_loser_is_refused(tenant, reviewer):
    """Stop 65's audit of conflicts and reviews: approving a waiting correction of a key's
    memory that lost a conflict while it waited replaced the winner the reviewer chose. The
    approval found its memory revoked, landed on the key's head, the winner, and, of higher
    authority, superseded it: the lost account was given to agents again, with no conflict.
    Refused now (``review_conflict_lost``), as a keyless correction's is, nothing changed;
    the resolution marks the write's item (``conflict_lost``) and the queue offers Reject
    alone."""
    approve_workflow_consent(tenant, "user_preference")
    agent = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))
    stated, inferred = stated_then_inferred(
        agent, agent, key="food.diet", inference="User prefers fish dishes."
    )
    assert "supersession.conflict_lower_authority" in inferred.rule_codes
    conflict = ReviewItem.objects.get(kind="conflict", state="open")
    # The person's own correction of their statement names a health fact: it waits.
    waiting = memory_correct(
        principal=agent,
        memory_id=stated.memory.id,
        data={
            "content": "User prefers vegetarian meals; the user has diabetes.",
            "source": {"type": "user_input", "conversation_id": "c-3", "message_id": "m-3"},
        },
    )
    assert waiting.decision == "pending_approval", waiting.rule_codes
    conflict_resolve(
        principal=reviewer,
        item_id=conflict.id,
        outcome="choose_winner",
        winner_id=inferred.memory.id,
        reason="The user told support they eat fish now.",
    )
    assert Memory.objects.get(pk=stated.memory.id).status == Status.REVOKED
    item = ReviewItem.objects.get(pk=waiting.review_item.id)
    assert CONFLICT_LOST in item.rule_codes
    [card] = review_queue(principal=reviewer).items
    assert card.conflict_lost and card.lands_on is None

    with pytest.raises(Conflict) as refused:
        review_approve(principal=reviewer, item_id=item.id, reason="Looks right.")
    assert refused.value.code == "review_conflict_lost"
    assert Memory.objects.get(pk=inferred.memory.id).status == Status.ACTIVE
    assert Memory.objects.get(pk=waiting.memory.id).status == Status.PENDING_APPROVAL


def test_an_approved_new_version_of_a_row_kept_both_opens_the_conflict_again(
    agent_principal, reviewer
):
    """Stop 65's audit of conflicts and reviews: a reviewer kept H (explicit) and L
    (inferred) both; an approved correction of H superseded it, and retrieval measured the
    new version against L by its rules: L, which the reviewer had kept, was withheld from
    every agent (``lost_conflict:authority_class``) and no one was asked. The new version
    opens the conflict again beside the rows kept with it (docs/retrieval.md, stage 8), and
    the decision stays on the rows it named."""
    strong, weak, conflict = write_rivals(agent_principal)
    waiting = memory_correct(
        principal=agent_principal,
        memory_id=strong.id,
        data={"content": SENSITIVE, "source": data("x")["source"]},
    )
    assert waiting.decision == "pending_approval", waiting.rule_codes
    conflict_resolve(
        principal=reviewer, item_id=conflict.id, outcome="keep_both_scoped", reason="Both hold."
    )
    review_approve(principal=reviewer, item_id=waiting.review_item.id, reason="ok")
    assert Memory.objects.get(pk=waiting.memory.id).supersedes_id == strong.id

    again = ReviewItem.objects.get(kind="conflict", state="open")
    assert set(again.candidate_ids) == {waiting.memory.id, weak.id}
    assert (again.scope_kind, again.scope_ref) == ("project", "atlas")
    decided = ReviewItem.objects.get(pk=conflict.id)
    assert decided.resolution == "keep_both_scoped"
    assert set(decided.candidate_ids) == {strong.id, weak.id}
    assert MemoryEvent.objects.filter(
        memory_id=weak.id, action="conflict", actor_id="review", details__review_item=str(again.id)
    ).exists()


def test_an_approved_new_version_reopens_no_conflict_with_a_row_above_its_writers_grant(
    tenant, reviewer
):
    """Stop 65's audit of conflicts: the approval path of
    ``conflicts_reopen_kept``. A reviewer kept the person's statement S and a model's
    inference L both; S was corrected to a restricted version S2 and kept beside L again.
    Approving a sensitive correction of L by an agent that may not read restricted
    memories checked the kept rows against its grant (``writer_reaches``) before
    ``conflict_open`` followed the old S to S2: the reopened conflict named S2, and a
    reviewer choosing the agent's row would revoke it. The grant is checked on the newest
    versions now."""
    approve_workflow_consent(tenant, "user_preference")
    broad = AgentPrincipal.from_agent(AgentFactory(tenant=tenant, max_sensitivity="restricted"))
    writer = AgentPrincipal.from_agent(AgentFactory(tenant=tenant, max_sensitivity="sensitive"))
    stated, inferred = (
        write.memory
        for write in stated_then_inferred(
            broad, writer, key="food.likes", inference="User enjoys grilled salmon."
        )
    )
    keep_both_open_conflict(reviewer, "Both hold.")
    restricted = memory_correct(
        principal=broad,
        memory_id=stated.id,
        data={
            "content": "User prefers vegetarian meals, for reasons kept private.",
            "sensitivity": "restricted",
            "source": {"type": "user_input", "conversation_id": "c-3", "message_id": "m-3"},
        },
    )
    review_approve(principal=reviewer, item_id=restricted.review_item.id, reason="ok")
    hidden = Memory.objects.get(pk=restricted.memory.id)
    assert hidden.status == Status.ACTIVE and hidden.sensitivity == "restricted"
    keep_both_open_conflict(reviewer, "Still both.")
    waiting = memory_correct(
        principal=writer,
        memory_id=inferred.id,
        data={"content": "User enjoys grilled salmon; the user has diabetes.", "source": INFERRED},
    )
    assert waiting.decision == "pending_approval", waiting.rule_codes

    review_approve(principal=reviewer, item_id=waiting.review_item.id, reason="ok")

    assert Memory.objects.get(pk=waiting.memory.id).supersedes_id == inferred.id
    opened = ReviewItem.objects.filter(kind="conflict", state="open")
    assert hidden.id not in {i for item in opened for i in item.candidate_ids}
