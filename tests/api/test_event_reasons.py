"""The free text kept in a memory's events, as ``GET /api/v1/memories/{id}`` answers it.

A revocation's (or a consent withdrawal's) reason is the person's own and is never refused
for what it says, but one naming a sensitive fact is not answered to agents capped below it
(``details.reason_sensitivity``). A write whose words are withheld from agents (waiting for
a reviewer, or rejected) is answered without its reason and without a message id that is a
sentence: both say what its withheld content says (stop 47).
"""

import pytest

from memory_core.models import MemoryEvent, Status
from memory_core.principals import SubjectPrincipal
from memory_core.services.policy import policy_publish
from memory_core.services.writes import consent_withdraw, memory_revoke
from tests.api.test_memories import URL, body
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory

pytestmark = pytest.mark.django_db

DIAGNOSIS = "I was diagnosed with type 2 diabetes last week, so no more dessert ideas."
SOURCE = {"type": "user_input", "conversation_id": "c-1", "message_id": "m-9"}


def owner_of(memory) -> SubjectPrincipal:
    return SubjectPrincipal(tenant_id=memory.tenant_id, subject_id=memory.subject_id, user_id=1)


def detail(tenant, memory_id, max_sensitivity: str = "sensitive") -> str:
    agent = AgentFactory(tenant=tenant, max_sensitivity=max_sensitivity)
    response = client_for(agent).get(f"{URL}/{memory_id}")
    assert response.status_code == 200, response.json()
    return response.content.decode()


@pytest.mark.parametrize(
    "document",
    # A document that leaves the categories out has the default ones, as admission reads it:
    # the reason went to every agent under it (stop 51's audit of policies).
    [None, {"admission": {"max_content_chars": 2000}}],
    ids=["default-policy", "policy-without-categories"],
)
@pytest.mark.parametrize("how", ["revoke", "withdraw"])
def test_a_reason_naming_a_health_fact_is_not_answered_to_agents_capped_below_it(
    subject, how, document
):
    if document is not None:
        policy_publish(tenant=subject.tenant, document=document, note="one knob")
    memory = MemoryFactory(subject=subject, content="Likes dessert suggestions.")
    if how == "revoke":
        memory_revoke(principal=owner_of(memory), memory_id=memory.id, reason=DIAGNOSIS)
    else:
        memory.consent = "workflow"
        memory.save(update_fields=["consent"])
        consent_withdraw(principal=owner_of(memory), memory_id=memory.id, reason=DIAGNOSIS)
    memory.refresh_from_db()
    assert memory.status == Status.REVOKED  # never refused for what it says
    event = MemoryEvent.objects.get(
        memory_id=memory.id, reason_code__in=["revoked", "consent_withdrawn"]
    )
    assert event.details == {"reason": DIAGNOSIS, "reason_sensitivity": "sensitive"}

    capped = detail(subject.tenant, memory.id, max_sensitivity="personal")
    assert "diabetes" not in capped
    assert '"reason_sensitivity":"sensitive"' in capped  # why the reason is left out
    assert "diabetes" in detail(subject.tenant, memory.id, max_sensitivity="sensitive")


def test_an_ordinary_reason_is_answered_to_every_agent_that_reads_the_memory(subject):
    memory = MemoryFactory(subject=subject, content="Likes dessert suggestions.")
    memory_revoke(principal=owner_of(memory), memory_id=memory.id, reason="I changed my mind.")
    event = MemoryEvent.objects.get(memory_id=memory.id, action="revoked")
    assert event.details == {"reason": "I changed my mind."}
    assert "I changed my mind." in detail(subject.tenant, memory.id, max_sensitivity="personal")


def test_a_waiting_corrections_reason_is_withheld_as_its_words_are(api_client, subject):
    corrected = _health_reasoned_correction(api_client, subject)
    assert corrected.status_code == 202, corrected.json()
    waiting = corrected.json()["memory_id"]

    answered = detail(subject.tenant, waiting)
    assert '"content":""' in answered  # the words are withheld...
    assert "HIV" not in answered  # ...and so is the reason that said them
    assert '"rule_codes"' in answered  # the rest of the event stays


def test_an_approved_corrections_reason_is_answered_to_agents_that_read_it(
    api_client, subject, tenant, django_user_model
):
    from memory_core.principals import ReviewerPrincipal
    from memory_core.services.reviews import review_approve

    corrected = _health_reasoned_correction(api_client, subject)
    user = django_user_model.objects.create_user("reviewer-reasons")
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=user.id)
    review_approve(principal=reviewer, item_id=corrected.json()["review_item"], reason="ok")

    assert "HIV" in detail(tenant, corrected.json()["memory_id"])


def test_a_waiting_writes_message_id_sentence_is_withheld_as_its_words_are(
    api_client, subject, tenant
):
    source = {**SOURCE, "message_id": "User has HIV and tires quickly."}
    written = api_client.post(URL, body(subject=subject.external_id, source=source), format="json")
    assert written.status_code == 202, written.json()
    other = client_for(AgentFactory(tenant=tenant))

    listed = other.get(f"{URL}?subject={subject.external_id}&status=pending_approval")
    assert listed.status_code == 200
    (row,) = listed.json()["results"]
    assert row["content"] == "" and row["source"]["message_id"] == ""
    assert "HIV" not in listed.content.decode()
    assert "HIV" not in detail(tenant, written.json()["memory_id"])


def test_a_waiting_writes_message_id_that_is_an_identifier_is_answered(api_client, subject):
    data = body(subject=subject.external_id, content="User has HIV and tires quickly.")
    written = api_client.post(URL, data, format="json")
    assert written.status_code == 202, written.json()
    listed = api_client.get(f"{URL}?subject={subject.external_id}&status=pending_approval")
    (row,) = listed.json()["results"]
    assert row["content"] == "" and row["source"]["message_id"] == "m-1"


def test_deleting_a_memory_scrubs_its_revocations_reason_and_its_sensitivity(api_client, subject):
    """The events step keeps ids and codes only: the recorded sensitivity goes with the
    reason."""
    from memory_core.deletion.runner import deletion_run

    memory = MemoryFactory(subject=subject, content="Likes dessert suggestions.")
    memory_revoke(principal=owner_of(memory), memory_id=memory.id, reason=DIAGNOSIS)

    deleted = api_client.delete(f"{URL}/{memory.id}")
    assert deleted.status_code == 202, deleted.json()
    assert deletion_run(operation_id=deleted.json()["operation_id"]) == "completed"

    event = MemoryEvent.objects.get(memory_id=memory.id, action="revoked")
    assert event.details == {}


def _health_reasoned_correction(api_client, subject):
    """Correct a new preference of ``subject`` with a reason naming a health fact (the
    correction waits for a reviewer); return the API's answer."""
    head = MemoryFactory(subject=subject, content="Prefers long answers.")
    return api_client.post(
        f"{URL}/{head.pk}/supersede",
        {"content": "Prefers short answers.", "source": SOURCE,
         "reason": "She told me she has HIV and tires quickly when reading."},
        format="json",
    )  # fmt: skip
