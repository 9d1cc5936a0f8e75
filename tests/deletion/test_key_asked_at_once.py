"""A key's deletion asked while another deletion of the key's memories commits (an agent's
retry, two clients, a double click; a memory's deletion of the key's head).

The key's request reads its memories before it waits for the subject's lock, and locks them
once it holds it: by then the other deletion has taken them and cleared their key. It made
a new, empty operation, which a worker completed at once while the other one had not cleaned
the memories' stores yet. docs/api.md, Deletion: asked again, a request "answers the
operation that already deleted it, or the one still under way".
"""

import pytest

from memory_core.deletion.services import deletion_request
from memory_core.models import DeletionOperation, Status
from memory_core.principals import AgentPrincipal, SubjectPrincipal
from tests.deletion.conftest import requested_while_held
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db(transaction=True)

DELETIONS = "/api/v1/deletions"
KEY = "health.therapist"


@pytest.fixture
def user_1(tenant):
    return SubjectFactory(tenant=tenant, external_id="user-1")


def _key_asked_by(api_client):
    return lambda: api_client.post(
        DELETIONS, {"subject": "user-1", "memory_key": KEY}, format="json"
    )


def test_a_keys_deletion_asked_while_the_same_one_commits_answers_that_one(
    api_client,
    agent,
    user_1,
    private_queue,  # noqa: F811
):
    memory = MemoryFactory(subject=user_1, memory_key=KEY, content="Dr Quillfeather, Tuesdays.")
    principal = AgentPrincipal.from_agent(agent)

    def first():  # the same request, made by the service the API calls, not yet committed
        deletion_request(principal=principal, subject_id=user_1.id, memory_key=KEY)

    second = requested_while_held(user_1.tenant_id, first, _key_asked_by(api_client))

    operation = DeletionOperation.objects.get(subject=user_1)  # no second, empty one
    assert operation.memory_ids == [memory.pk]
    assert second.status_code == 202, second.json()
    assert second.json() == {"operation_id": str(operation.pk), "status": "pending"}


def test_a_keys_deletion_waiting_behind_a_memorys_deletion_of_its_rows_answers_that_one(
    api_client,
    agent,
    user_1,
    private_queue,  # noqa: F811
):
    older = MemoryFactory(subject=user_1, memory_key=KEY, status=Status.SUPERSEDED)
    head = MemoryFactory(subject=user_1, memory_key=KEY, supersedes=older, version=2)
    principal = AgentPrincipal.from_agent(agent)

    def memorys_deletion():  # the head and its history: every memory on the key
        deletion_request(principal=principal, memory_id=head.pk)

    second = requested_while_held(user_1.tenant_id, memorys_deletion, _key_asked_by(api_client))

    operation = DeletionOperation.objects.get(subject=user_1)
    assert (operation.target, sorted(operation.memory_ids)) == (
        "memory",
        sorted([older.pk, head.pk]),
    )
    assert second.status_code == 202, second.json()
    assert second.json()["operation_id"] == str(operation.pk)


def test_a_keys_deletion_behind_anothers_it_may_not_see_is_a_404_naming_nothing(
    api_client,
    agent,
    user_1,
    private_queue,  # noqa: F811
):
    """The user's deletion of the key also took another agent's private memory on it: its
    id, status and count would tell of that memory (``deletion_scope``). The agent gets what
    it gets once that deletion has committed, a 404, and no operation is made."""
    MemoryFactory(subject=user_1, memory_key=KEY)
    MemoryFactory(subject=user_1, memory_key=KEY, agent=AgentFactory(tenant=user_1.tenant))
    user = SubjectPrincipal(tenant_id=user_1.tenant_id, subject_id=user_1.id, user_id=1)

    def users_deletion():
        deletion_request(principal=user, subject_id=user_1.id, memory_key=KEY)

    second = requested_while_held(user_1.tenant_id, users_deletion, _key_asked_by(api_client))

    operation = DeletionOperation.objects.get(subject=user_1)
    assert len(operation.memory_ids) == 2
    assert second.status_code == 404, second.json()
    assert str(operation.pk) not in second.content.decode()
