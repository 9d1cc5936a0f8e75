"""Stop 67's review of the erasure from traces asked by an agent bound to the person
(``deletion.services.traced_subject_deletion_request``, ``selectors._of_its_subjects``): what
the bound agent may read and ask again, and what stays out of its reach. The tests beside,
``test_person_known_from_traces.py``, hold the erasure itself."""

import uuid

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import traced_subject_deletion_request
from memory_core.models import DeletionOperation, Subject
from memory_core.principals import SystemPrincipal
from memory_core.retrieval.traces import user_id_digest
from tests.clients import client_for
from tests.deletion.test_person_known_from_traces import _bound, _retrieve_for
from tests.factories import AgentFactory, SubjectFactory

pytestmark = pytest.mark.django_db


def _erase(client, user_id: str) -> str:
    answer = client.post("/api/v1/deletions", {"subject": user_id}, format="json")
    assert answer.status_code == 202, answer.content
    return answer.json()["operation_id"]


def test_asked_again_after_another_agents_erasure_the_same_one_comes_back(tenant):
    """Asked again before its run, the erasure is answered the operation its caller asked
    for. The service took the tenant's newest unfinished erasure of the person and, when
    another agent's (which the caller may not see) was newer, made a second subject and
    operation for the caller instead of answering its own."""
    bound = _bound(tenant, "user-99")
    _retrieve_for(bound, "user-99")
    other = client_for(AgentFactory(tenant=tenant))
    _retrieve_for(other, "user-99")

    first = _erase(bound, "user-99")
    anothers = _erase(other, "user-99")
    again = bound.post("/api/v1/deletions", {"subject": "user-99"}, format="json")

    assert again.status_code == 202, again.content
    assert again.json()["operation_id"] == first
    assert anothers != first
    assert DeletionOperation.objects.filter(tenant=tenant).count() == 2
    assert Subject.objects.filter(tenant=tenant).count() == 2


def test_a_bound_agent_sees_no_erasure_of_its_person_it_did_not_ask_for(tenant):
    """The operations that keep the digest of the bound agent's person are its own only: the
    operator's ``delete_subject`` of the same person and a replay's (both of the system)
    are neither read nor listed, and their subjects, named by their own ids, are not acted
    for by the agent (404, as an id nobody asked about)."""
    bound = _bound(tenant, "user-99")
    _retrieve_for(bound, "user-99")
    operator = SystemPrincipal(tenant_id=tenant.id, name="delete_subject")
    operators = traced_subject_deletion_request(principal=operator, external_id="user-99")
    row_id = uuid.uuid4()  # a replay's row made back, named by its own id
    replayed = Subject.objects.create(pk=row_id, tenant=tenant, external_id=str(row_id))
    replays = DeletionOperation.objects.create(
        tenant=tenant,
        subject=replayed,
        target=DeletionOperation.Target.SUBJECT,
        memory_ids=[],
        requested_by_type="system",
        requested_by_id="replay_deletions",
        user_id_sha256=user_id_digest("user-99"),
    )

    for operation in (operators, replays):
        assert bound.get(f"/api/v1/deletions/{operation.pk}").status_code == 404
    assert bound.get("/api/v1/deletions").json()["results"] == []
    for row in (operators.subject, replayed):
        refused = bound.post("/api/v1/deletions", {"subject": str(row.pk)}, format="json")
        assert refused.status_code == 404, refused.content
    own = _erase(bound, "user-99")
    listed = bound.get("/api/v1/deletions").json()["results"]
    assert [o["operation_id"] for o in listed] == [own]


def test_a_bound_agents_list_holds_each_of_its_operations_once_newest_first(tenant):
    """``_of_its_subjects`` ORs the operations of the token's subject with those keeping its
    person's digest: the list holds each once, newest first, whether of the subject or of
    the erasure from traces made before the subject was known."""
    bound = _bound(tenant, "user-99")
    _retrieve_for(bound, "user-99")
    traced = _erase(bound, "user-99")
    assert deletion_run(operation_id=traced) == "completed"
    SubjectFactory(tenant=tenant, external_id="user-99")
    whole = _erase(bound, "user-99")

    listed = bound.get("/api/v1/deletions").json()["results"]

    assert [o["operation_id"] for o in listed] == [whole, traced]


def test_an_erasures_traces_step_tells_no_agent_how_many_retrievals_others_made(tenant):
    """The traces step deletes every trace of the person in the tenant, other agents' too:
    its count (``purged.deleted``) told the agent that asked how many retrievals the others
    made for them (stop 67's review). API clients are answered the step's verification and
    status without it; the stored step keeps it for the admin."""
    bound = _bound(tenant, "user-99")
    _retrieve_for(bound, "user-99")
    other = client_for(AgentFactory(tenant=tenant))
    for _ in range(3):
        _retrieve_for(other, "user-99")
    asked = _erase(bound, "user-99")
    assert deletion_run(operation_id=asked) == "completed"

    steps = bound.get(f"/api/v1/deletions/{asked}").json()["steps"]
    answered = next(step for step in steps if step["store"] == "traces")
    assert answered["status"] == "verified"
    assert answered["evidence"] == {"traces_citing": 0}
    stored = DeletionOperation.objects.get(pk=asked).steps.get(store="traces")
    assert stored.evidence["purged"]["deleted"] == 4
