"""Where an approval lands a waiting write (``services.reviews._link_into_chain``): as the
write would land now, at least as sensitive as the head, in the chain's owner's hands, and
beside no memory it shares no key with (stop 53's audits of the reviewer's side and of
admission; each test failed on the code before)."""

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from memory_core.models import Memory, PortalMembership, ReviewItem, Status
from memory_core.principals import AgentPrincipal, ReviewerPrincipal
from memory_core.services.conflicts import conflict_resolve
from memory_core.services.reviews import review_approve
from memory_core.services.writes import memory_write
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory, write_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/review/items"
TOKEN = "a" * 32
INCIDENT = "Atlas deploy failed on Monday: disk full on the build host."
RIVAL = "Monday's deploy was skipped because the release manager cancelled it."
SOURCE = {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"}


def decide(client, item_id, decision: str, reason: str = "Checked with the user."):
    client.cookies["csrftoken"] = TOKEN
    return client.post(
        f"{URL}/{item_id}/{decision}", {"reason": reason}, format="json", HTTP_X_CSRFTOKEN=TOKEN
    )


def keyless_incident(api_client, content: str, **fields) -> str:
    body = write_body(memory_type="incident", content=content, **fields)
    body.pop("memory_key")
    response = api_client.post("/api/v1/memories", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["memory"]["id"]


def waiting_on_a_private_head(api_client, tenant, agent):
    """Agent A's sensitive write on ``food.notes``, measured against A's private head (an
    imported memory private to A): (that head, the write's 202 answer)."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    private = MemoryFactory(
        subject=subject, agent=agent, memory_key="food.notes", content="User eats no pork."
    )
    body = write_body(memory_key="food.notes", content="User is allergic to peanuts.")
    waiting = api_client.post("/api/v1/memories", body, format="json")
    assert waiting.status_code == 202, waiting.json()
    return private, waiting


def two_incidents_and_a_correction(api_client, content: str):
    """Two keyless incidents, and a model's correction of the first; (their ids, its answer)."""
    service_a = keyless_incident(api_client, "Deploy of service A failed on Monday.")
    service_b = keyless_incident(api_client, "Deploy of service B failed on Tuesday.")
    correction = {
        "content": content,
        "source": {"type": "model_inference", "conversation_id": "c", "message_id": "m9"},
    }
    answer = api_client.post(f"/api/v1/memories/{service_a}/supersede", correction, format="json")
    return service_a, service_b, answer


def test_approving_a_keyless_correction_puts_no_unrelated_memory_in_its_conflict(
    api_client, reviewer, tenant
):
    """A correction of lower authority of a keyless incident waits for a reviewer (it names
    a health fact). Approved, it stands beside the incident it corrects in a conflict, as
    ``_link_into_chain`` says ("beside the head in a conflict"). But the conflict's
    candidates are read with ``heads_on_key`` on ``memory_key = ''`` (memory_core/services/
    reviews.py, ``_link_into_chain``: ``heads_on_key(memory, ...)``), which matches *every*
    keyless incident of the subject: an unrelated incident ("service B") becomes a candidate
    of a conflict about "service A", and a reviewer choosing the correction as the winner
    revokes it. docs/api.md ("A writer can never raise authority: conflicts"): the conflict
    is "for the key" and stands "between chains"; DESIGN.md: "two separate chains on the same
    memory_key are a conflict" (and the memory_key "groups conflicts and versions");
    docs/performance.md "no memory_key (no conflicts to resolve)". Memories without a key
    share no key and are no conflict with each other."""
    service_a, service_b, answer = two_incidents_and_a_correction(
        api_client, "Deploy of service A failed on Monday; the user has diabetes."
    )
    assert answer.status_code == 202, answer.json()
    approved = decide(reviewer, answer.json()["review_item"], "approve")
    assert approved.status_code == 200, approved.json()

    conflict = ReviewItem.objects.get(kind="conflict", state="open")
    candidates = {str(pk) for pk in conflict.candidate_ids}
    # Resolving it as a reviewer would: the approved correction wins.
    user = get_user_model().objects.get(username="reviewer")
    conflict_resolve(
        principal=ReviewerPrincipal(tenant_id=tenant.id, user_id=user.pk),
        item_id=conflict.pk,
        outcome="choose_winner",
        winner_id=answer.json()["memory_id"],
        reason="The correction is right.",
    )
    assert Memory.objects.get(pk=service_b).status == Status.ACTIVE  # it was revoked
    assert service_b not in candidates


def test_an_approval_keeps_the_owner_of_the_chain_it_lands_on(api_client, reviewer, tenant, agent):
    """A chain holds one owner. Agent A's sensitive write is measured against A's private
    head (an imported memory private to A), so it waits as a private row. While it waits
    the private head is revoked, and another agent writes a shared memory on the key. The
    approval lands on the key's current head, the shared one, and supersedes it
    (``approval_head`` -> ``current_head``), but the new version stays private to agent A
    (``_link_into_chain`` in memory_core/services/reviews.py sets ``supersedes`` and
    ``version`` and never the chain's ``agent``): every other agent of the tenant loses the
    shared memory on the key. docs/api.md, "POST /api/v1/memories": "A chain holds one
    memory type and one owner ... a new version keeps its chain's owner"; "Conflicts": "An
    approved sensitive write lands where the write would land now" (a write by A now makes
    a shared version: ``writes._draft`` takes the head's agent)."""
    private, waiting = waiting_on_a_private_head(api_client, tenant, agent)
    other = client_for(AgentFactory(tenant=tenant))
    body = write_body(memory_key="food.notes", content="User likes spicy food.")
    shared = other.post("/api/v1/memories", body, format="json")
    assert shared.status_code == 201, shared.json()
    revoked = api_client.post(f"/api/v1/memories/{private.id}/revoke", {}, format="json")
    assert revoked.status_code == 200, revoked.json()

    approved = decide(reviewer, waiting.json()["review_item"], "approve")
    assert approved.status_code == 200, approved.json()
    memory = Memory.objects.get(pk=waiting.json()["memory_id"])
    assert memory.supersedes_id == uuid.UUID(shared.json()["memory"]["id"])
    # The other agent still has a memory in use on the key (the shared chain's new head).
    listed = other.get(
        "/api/v1/memories", {"subject": "user-1", "key": "food.notes", "status": "active"}
    )
    assert listed.json()["count"] == 1, listed.json()
    assert memory.agent_id is None


def test_an_approval_never_lowers_the_sensitivity_of_the_chain_it_lands_on(reviewer, tenant):
    """A write on a head is kept at least as sensitive as the head, so no new version lowers
    a chain's sensitivity. Here a sensitive write waits on a personal head; meanwhile a
    correction raises the chain to ``restricted`` (approved first). Approving the waiting
    write lands it on the restricted head, as docs/api.md says ("lands where the write would
    land now: on the head it was measured against ... its newest version"), but at its own
    ``sensitive`` (``_link_into_chain`` in memory_core/services/reviews.py never applies the
    head's sensitivity): the chain's newest version is now readable by agents capped at
    ``sensitive``, which never read this chain's head before. docs/api.md, rule 8: "A write
    on a head (a correction, or a write on its memory_key) is kept at least as sensitive as
    the head (``sensitivity.kept_from_head``)"; docs/security.md: "an agent never lowers a
    chain's sensitivity"."""
    writer = client_for(AgentFactory(tenant=tenant, max_sensitivity="restricted"))
    body = write_body(memory_key="travel.seat", content="User prefers window seats.")
    head = writer.post("/api/v1/memories", body, format="json").json()["memory"]
    body = write_body(
        memory_key="travel.seat", content="User has chronic back pain and needs aisle seats."
    )
    waiting = writer.post("/api/v1/memories", body, format="json")
    assert waiting.status_code == 202, waiting.json()
    correction = {
        "content": "User prefers window seats on long flights.",
        "sensitivity": "restricted",
        "source": {"type": "user_input", "conversation_id": "c", "message_id": "m2"},
    }
    raised = writer.post(f"/api/v1/memories/{head['id']}/supersede", correction, format="json")
    assert raised.status_code == 202, raised.json()
    assert decide(reviewer, raised.json()["review_item"], "approve").status_code == 200

    approved = decide(reviewer, waiting.json()["review_item"], "approve")
    assert approved.status_code == 200, approved.json()
    memory = Memory.objects.get(pk=waiting.json()["memory_id"])
    assert memory.supersedes_id == uuid.UUID(raised.json()["memory_id"])  # the restricted head
    assert memory.sensitivity == "restricted"


def test_of_two_waiting_writes_the_second_approved_keeps_the_first_ones_sensitivity(tenant):
    """Two writes on one key wait: a ``sensitive`` one, then a ``restricted`` one, approved
    first (the key's head). Approved next, the sensitive one became the restricted head's
    next version at ``sensitive``: the chain's head dropped a level."""
    user = get_user_model().objects.create_user("landing-reviewer")
    PortalMembership.objects.create(user=user, tenant=tenant, role="reviewer")
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=user.id)
    writer = AgentPrincipal.from_agent(AgentFactory(tenant=tenant, max_sensitivity="restricted"))

    def body(content, sensitivity):
        return write_body(memory_key="health.notes", content=content, sensitivity=sensitivity)

    first = memory_write(
        principal=writer, data=body("User has asthma; avoid long runs.", "sensitive")
    )
    second = memory_write(
        principal=writer, data=body("User is HIV positive and on daily medication.", "restricted")
    )
    assert first.decision == second.decision == "pending_approval"
    review_approve(principal=reviewer, item_id=second.review_item.id, reason="ok")
    review_approve(principal=reviewer, item_id=first.review_item.id, reason="ok")
    approved = Memory.objects.get(pk=first.memory.pk)
    assert approved.supersedes_id == second.memory.pk
    assert (approved.status, approved.sensitivity) == (Status.ACTIVE, "restricted")


def test_a_keyless_correction_of_lower_authority_conflicts_with_its_memory_only(api_client):
    """The write path read the conflict's candidates the same way (``standing_heads``)."""
    service_a, service_b, answer = two_incidents_and_a_correction(
        api_client, "Deploy of service A failed on Monday afternoon."
    )
    assert answer.status_code == 201, answer.json()
    conflict = ReviewItem.objects.get(kind="conflict", state="open")
    candidates = {str(pk) for pk in conflict.candidate_ids}
    assert candidates == {service_a, answer.json()["memory"]["id"]}
    assert service_b not in candidates


def correct(api_client, memory_id: str, content: str):
    """A model's correction (lower authority than a tool's memory) of ``memory_id``."""
    correction = {
        "content": content,
        "source": {"type": "model_inference", "conversation_id": "c", "message_id": "m9"},
    }
    answer = api_client.post(f"/api/v1/memories/{memory_id}/supersede", correction, format="json")
    assert answer.status_code == 201, answer.json()
    return answer.json()["memory"]["id"]


def test_keyless_conflicts_at_one_place_are_reviewed_apart(api_client, reviewer, tenant):
    """Two keyless incidents, each corrected by a model (lower authority), stand in two
    conflicts at one place. They shared one review item (the place was the item's identity,
    and keyless memories have no key to tell them apart: stop 53's "Left open"), and a
    reviewer choosing one correction revoked the other incident and its correction too. Each
    is its own item now; a second correction of a chain joins that chain's item."""
    service_a, service_b, answer = two_incidents_and_a_correction(
        api_client, "Deploy of service A failed on Monday afternoon."
    )
    assert answer.status_code == 201, answer.json()
    correction_a = answer.json()["memory"]["id"]
    correction_b = correct(api_client, service_b, "Deploy of service B failed on Wednesday.")

    items = ReviewItem.objects.filter(kind="conflict", state="open")
    held = sorted(sorted(str(pk) for pk in item.candidate_ids) for item in items)
    assert held == sorted([sorted([service_a, correction_a]), sorted([service_b, correction_b])])
    second_a = correct(api_client, service_a, "Deploy of service A failed on Monday evening.")
    item_a = ReviewItem.objects.get(
        kind="conflict", state="open", candidate_ids__contains=[service_a]
    )
    assert {str(pk) for pk in item_a.candidate_ids} == {service_a, correction_a, second_a}
    assert ReviewItem.objects.filter(kind="conflict", state="open").count() == 2

    user = get_user_model().objects.get(username="reviewer")
    conflict_resolve(
        principal=ReviewerPrincipal(tenant_id=tenant.id, user_id=user.pk),
        item_id=item_a.pk,
        outcome="choose_winner",
        winner_id=correction_a,
        reason="The correction is right.",
    )
    statuses = dict(
        Memory.objects.filter(pk__in=[service_b, correction_b]).values_list("pk", "status")
    )
    assert set(statuses.values()) == {Status.ACTIVE}, "the other incident's rows were revoked"
    assert ReviewItem.objects.filter(kind="conflict", state="open").count() == 1


@pytest.mark.parametrize("approved", [False, True], ids=["written", "approved"])
def test_a_keyless_memorys_rival_of_lower_authority_is_not_given_beside_it(
    api_client, reviewer, approved
):
    """A model's correction of a keyless incident stands beside it in a conflict (written,
    or approved by a reviewer, who is told agents are given the memory of higher authority
    until the conflict is settled). Retrieval grouped rows by key only and gave agents both
    (stop 54's audit of the reviewer's side)."""
    head = keyless_incident(api_client, INCIDENT)
    rival = (
        "Monday's deploy was skipped because the user was in hospital after a heart attack."
        if approved
        else "Monday's deploy was skipped because the release manager cancelled it."
    )
    answer = api_client.post(
        f"/api/v1/memories/{head}/supersede",
        {"content": rival, "source": {"type": "model_inference", "conversation_id": "c",
                                      "message_id": "m2"}},
        format="json",
    )  # fmt: skip
    if approved:
        assert answer.status_code == 202, answer.json()
        assert decide(reviewer, answer.json()["review_item"], "approve").status_code == 200
    else:
        assert answer.status_code == 201, answer.json()
    assert ReviewItem.objects.filter(kind="conflict", state="open").count() == 1

    found = api_client.post(
        "/api/v1/retrieve",
        {"query": "what went wrong with Monday's deploy?", "context": {"user_id": "user-1"}},
        format="json",
    )
    assert found.status_code == 200, found.json()
    given = [item["content"] for item in found.json()["items"]]
    assert INCIDENT in given
    assert rival not in given


def _retrieved(api_client, query: str) -> tuple[dict, dict]:
    """Retrieve ``query`` for user-1; return ({id: content} of the items, the trace's stages)."""
    found = api_client.post(
        "/api/v1/retrieve", {"query": query, "context": {"user_id": "user-1"}}, format="json"
    )
    assert found.status_code == 200, found.json()
    stages = api_client.get(f"/api/v1/traces/{found.json()['trace_id']}").json()["stages"]
    return {item["id"]: item["content"] for item in found.json()["items"]}, stages


def test_a_keyless_rival_of_lower_authority_is_not_given_when_its_head_is_off_topic(api_client):
    """Only the cited rows still among the candidates were measured: a query worded like the
    rival left the head below the relevance floor, and the model's disputed correction was
    given alone, as settled (stop 54's audit of retrieval)."""
    head = keyless_incident(api_client, INCIDENT)
    correct(api_client, head, RIVAL)
    assert ReviewItem.objects.filter(kind="conflict", state="open").count() == 1
    given, stages = _retrieved(api_client, "Why did the release manager cancel it?")
    # The head was a candidate, dropped by the relevance gate; the rival stood alone.
    below_floor = {"id": head, "stage": "rerank", "reason": "below_relevance_floor"}
    assert below_floor in stages["rejections"]
    assert RIVAL not in given.values()


def test_a_keyless_rival_is_not_given_when_dedup_folds_its_head_into_a_copy(api_client, tenant):
    """The head of an open keyless conflict has an identical, stronger copy: dedup kept the
    copy and folded the head into it, the conflict found only the rival among the
    candidates, and it was given beside the very fact it disputes (stop 54's audit of
    retrieval)."""
    text = INCIDENT
    head = keyless_incident(api_client, text, confidence=0.9)
    head_row = Memory.objects.get(pk=head)
    copy = MemoryFactory(
        subject=head_row.subject,
        memory_type="incident",
        memory_class="episodic",
        memory_key="",
        content=text,
        confidence=1.0,
        embedding=head_row.embedding,
        embedding_model=head_row.embedding_model,
    )
    correct(api_client, head, RIVAL)
    assert ReviewItem.objects.filter(kind="conflict", state="open").count() == 1
    given, stages = _retrieved(api_client, "what went wrong with Monday's deploy?")
    assert {"kept": str(copy.id), "merged": head, "rule": "content_hash"} in stages["dedup_merges"]
    assert str(copy.id) in given  # the user's own account is given (the head's copy)
    assert RIVAL not in given.values()


def _deploy_question(api_client) -> list[str]:
    found = api_client.post(
        "/api/v1/retrieve",
        {"query": "what went wrong with Monday's Atlas deploy?", "context": {"user_id": "user-1"}},
        format="json",
    )
    assert found.status_code == 200, found.json()
    return [item["content"] for item in found.json()["items"]]


def _ask_user(tenant) -> None:
    """The reviewer resolves the open conflict "ask the user"."""
    user = get_user_model().objects.get(username="reviewer")
    conflict_resolve(
        principal=ReviewerPrincipal(tenant_id=tenant.id, user_id=user.pk),
        item_id=ReviewItem.objects.get(kind="conflict", state="open").pk,
        outcome="ask_user",
        reason="Ask the user which is right.",
    )


def test_ask_user_on_a_keyless_conflict_keeps_what_agents_were_given(api_client, reviewer, tenant):
    """Resolved "ask the user", a keyless conflict's rival was given beside the memory from
    the next retrieval on, where the reviewer is told nothing changed (stop 54's review)."""
    head = keyless_incident(api_client, INCIDENT)
    rival = correct(
        api_client, head, "Monday's deploy was skipped: the release manager cancelled it."
    )
    assert Memory.objects.get(pk=rival).content not in _deploy_question(api_client)
    _ask_user(tenant)
    given = _deploy_question(api_client)
    assert INCIDENT in given
    assert Memory.objects.get(pk=rival).content not in given


def test_ask_user_on_a_keyless_conflict_follows_the_rivals_new_version(
    api_client, reviewer, tenant
):
    """Resolved ``ask_user``, the item no longer followed its chains (only open items did):
    the model's new version of its disputed inference was given beside the user's account
    (stop 54's review of the fix above)."""
    head = keyless_incident(api_client, INCIDENT)
    rival = correct(
        api_client, head, "Monday's deploy was skipped: the release manager cancelled it."
    )
    _ask_user(tenant)
    again = correct(
        api_client, rival, "Monday's deploy was skipped: the release manager cancelled it at 9."
    )
    assert Memory.objects.get(pk=rival).status == "superseded"
    given = _deploy_question(api_client)
    assert INCIDENT in given
    assert Memory.objects.get(pk=again).content not in given


def test_a_keyless_rival_of_lower_authority_in_one_class_is_not_given_beside_it(api_client):
    """The user's correction of an administrator's keyless memory (lower authority, the same
    class) was given beside it: only the class was measured, not rule 3c's rank (stop 54's
    review)."""
    head = keyless_incident(api_client, INCIDENT)
    Memory.objects.filter(pk=head).update(authority="explicit_admin", source_type="admin")
    rival = "Atlas deploy on Monday failed because the release manager cancelled it."
    answer = api_client.post(
        f"/api/v1/memories/{head}/supersede",
        {"content": rival, "source": {"type": "user_input", "conversation_id": "c",
                                      "message_id": "m2"}},
        format="json",
    )  # fmt: skip
    assert answer.status_code == 201, answer.json()
    assert ReviewItem.objects.filter(kind="conflict", state="open").count() == 1
    given = _deploy_question(api_client)
    assert INCIDENT in given
    assert rival not in given


def test_an_approval_whose_private_head_is_gone_lands_as_a_write_would_shared(
    api_client, reviewer, tenant, agent
):
    """docs/api.md ("A writer can never raise authority: conflicts"): "An approved sensitive
    write lands where the write would land now: on the head it was measured against when
    written, if that chain still stands ..., and otherwise on the strongest, then newest, head
    of the key that its writer's grant reaches"; "as the head's new version it is the chain's
    owner's, shared if the chain is"; and "A chain holds one memory type and one owner ... a
    new version keeps its chain's owner".

    Agent A's sensitive write on ``food.notes`` is measured against A's private head (an
    imported memory private to A), so its waiting row is stored private to A
    (``writes.py:324``: ``agent_id=item.head.agent_id``). While it waits, A revokes that head:
    the key has no head left. A write by A now starts a new chain, shared (``agent`` empty,
    as the reference write below shows). The approval finds no head
    (``approval_head`` -> None) and ``_link_into_chain`` (memory_core/services/reviews.py:
    106-157) sets the chain's owner only when it supersedes a head, so the approved memory
    keeps the private ownership of a chain that no longer stands: every other agent of the
    tenant finds nothing on the key, where the write made now would be shared."""
    private, waiting = waiting_on_a_private_head(api_client, tenant, agent)
    revoked = api_client.post(f"/api/v1/memories/{private.id}/revoke", {}, format="json")
    assert revoked.status_code == 200, revoked.json()
    # What a write by the same agent makes now on a key without a head: a shared chain.
    reference = api_client.post(
        "/api/v1/memories", write_body(memory_key="food.rice", content="Likes rice."), format="json"
    )
    assert Memory.objects.get(pk=reference.json()["memory"]["id"]).agent_id is None

    approved = decide(reviewer, waiting.json()["review_item"], "approve")
    assert approved.status_code == 200, approved.json()

    memory = Memory.objects.get(pk=waiting.json()["memory_id"])
    assert (memory.status, memory.supersedes_id) == ("active", None)  # a chain of its own
    assert memory.agent_id is None, "the approved write stayed private to its writer"


def waiting_on_a_later_memory(api_client, tenant):
    """A memory on ``diet.notes`` imported to start in 30 days, and an agent's sensitive
    correction of it waiting for a reviewer with that start: (the memory, the 202 answer)."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    later = MemoryFactory(
        subject=subject,
        memory_key="diet.notes",
        content="From March the user eats vegan food.",
        valid_from=timezone.now() + timedelta(days=30),
    )
    waiting = api_client.post(
        f"/api/v1/memories/{later.pk}/supersede",
        {"content": "From March the user is allergic to peanuts.", "source": SOURCE},
        format="json",
    )
    assert waiting.status_code == 202, waiting.json()
    assert Memory.objects.get(pk=waiting.json()["memory_id"]).valid_from == later.valid_from
    return later, waiting


def test_an_approval_landing_on_a_head_in_effect_leaves_the_key_a_memory_in_use(
    api_client, reviewer, tenant
):
    """Approved onto the key's head in use now, the write starts now (as a correction of that
    head would), so the key is never left with no memory in use. It kept the start of the
    memory not yet in effect it was written on, superseded the head in use and left the key
    with none for 30 days (stop 58's audit of the reviewers' work)."""
    later, waiting = waiting_on_a_later_memory(api_client, tenant)
    # Meanwhile the key gets a version in effect now (it supersedes the one not yet in effect).
    body = write_body(
        memory_key="diet.notes",
        content="User eats everything.",
        source={**SOURCE, "message_id": "m-2"},
    )
    current = api_client.post("/api/v1/memories", body, format="json")
    assert current.status_code == 201, current.json()

    approved = decide(reviewer, waiting.json()["review_item"], "approve")
    assert approved.status_code == 200, approved.json()

    memory = Memory.objects.get(pk=waiting.json()["memory_id"])
    assert memory.supersedes_id == uuid.UUID(current.json()["memory"]["id"])
    in_use = Memory.objects.filter(
        memory_key="diet.notes", status="active", valid_from__lte=timezone.now()
    ).values_list("content", flat=True)
    assert list(in_use) == [memory.content], "the key was left with no memory in use"


def test_an_approval_landing_on_the_later_memory_it_corrects_keeps_its_start(
    api_client, reviewer, tenant
):
    """Approved onto the memory not yet in effect it corrects, the write keeps that start, as
    the correction made now would (``writes._start``: stop 51's audit of time)."""
    later, waiting = waiting_on_a_later_memory(api_client, tenant)

    approved = decide(reviewer, waiting.json()["review_item"], "approve")
    assert approved.status_code == 200, approved.json()

    memory = Memory.objects.get(pk=waiting.json()["memory_id"])
    assert (memory.supersedes_id, memory.valid_from) == (later.pk, later.valid_from)


def test_an_approval_landing_on_no_head_keeps_the_start_it_was_written_for(
    api_client, reviewer, tenant
):
    """Approved with no head left on the key (the memory it corrects revoked), the write
    supersedes nothing and keeps the later start it was written for: approving it does not
    put "from March ..." in use now."""
    later, waiting = waiting_on_a_later_memory(api_client, tenant)
    revoked = api_client.post(f"/api/v1/memories/{later.pk}/revoke", {}, format="json")
    assert revoked.status_code == 200, revoked.json()

    approved = decide(reviewer, waiting.json()["review_item"], "approve")
    assert approved.status_code == 200, approved.json()

    memory = Memory.objects.get(pk=waiting.json()["memory_id"])
    assert (memory.status, memory.supersedes_id) == ("active", None)
    assert memory.valid_from == later.valid_from
