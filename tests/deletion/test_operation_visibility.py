"""An agent is never handed the id of a deletion operation it may not see.

docs/api.md: an agent sees the operations it asked for or whose every memory its grant
reaches; another's is 404. A request asked again, a memory already deleted and a memory's
events named such an operation all the same (its id, status and so that it exists: that the
other agent deleted a memory outside this one's grant). Each answer now names only an
operation ``GET /api/v1/deletions/{id}`` shows the caller, and the caller still gets its
deletion done.
"""

import json

import pytest

from memory_core.deletion.runner import deletion_run
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def user(tenant):
    return SubjectFactory(tenant=tenant, external_id="user-1")


@pytest.fixture
def owner(tenant):
    """An agent that reaches restricted memories of every type."""
    return AgentFactory(tenant=tenant, max_sensitivity="restricted")


@pytest.fixture
def narrow(tenant):
    """An agent that reads and writes public episodes only."""
    return AgentFactory(
        tenant=tenant, max_sensitivity="public", read_types=["episode"], write_types=["episode"]
    )


def _shared_episode(user):
    return MemoryFactory(
        subject=user,
        memory_type="episode",
        memory_class="episodic",
        memory_key="",
        sensitivity="public",
        content="User-1 visited the Lisbon office.",
    )


def _private(user, owner):
    return MemoryFactory(
        subject=user,
        agent=owner,
        sensitivity="restricted",
        incident=True,
        content="Private: user-1 was arrested in 2019.",
    )


@pytest.fixture
def scene(user, owner, narrow):
    """``owner`` deleted user-1 whole (not run yet): its private restricted incident and a
    shared public episode the narrow agent reads too. The narrow agent may not see that
    operation (it holds the private memory)."""
    private, shared = _private(user, owner), _shared_episode(user)
    owner_client, narrow_client = client_for(owner), client_for(narrow)
    asked = owner_client.post("/api/v1/deletions", {"subject": "user-1"}, format="json")
    assert asked.status_code == 202, asked.json()
    hidden = asked.json()["operation_id"]
    assert narrow_client.get(f"/api/v1/deletions/{hidden}").status_code == 404
    return {
        "owner": owner_client,
        "narrow": narrow_client,
        "private": private,
        "shared": shared,
        "hidden": hidden,
    }


def _names(response, operation_id) -> bool:
    return operation_id in json.dumps(response.json()) or operation_id in response.get(
        "Location", ""
    )


def test_a_subject_asked_again_under_anothers_unfinished_deletion_answers_retry(scene):
    """The owner's operation still clears the shared episode: the narrow agent is told to
    retry (503), not given the owner's id, nor a new operation that could complete first."""
    narrow = scene["narrow"]

    again = narrow.post("/api/v1/deletions", {"subject": "user-1"}, format="json")

    assert again.status_code == 503, again.json()
    assert again.json()["error"]["code"] == "subject_being_deleted"
    assert again.json()["error"]["message"]
    assert not _names(again, scene["hidden"])


def test_a_subject_asked_again_after_anothers_deletion_completed_gets_its_own_operation(scene):
    """Once the owner's operation completed, the narrow agent's retry is a new operation of
    its own, which it can follow to the end and which answers it when asked once more."""
    narrow = scene["narrow"]
    assert deletion_run(operation_id=scene["hidden"]) == "completed"

    again = narrow.post("/api/v1/deletions", {"subject": "user-1"}, format="json")

    assert again.status_code == 202, again.json()
    own = again.json()["operation_id"]
    assert own != scene["hidden"] and not _names(again, scene["hidden"])
    assert narrow.get(f"/api/v1/deletions/{own}").json()["target"] == "subject"
    assert deletion_run(operation_id=own) == "completed"
    once_more = narrow.post("/api/v1/deletions", {"subject": "user-1"}, format="json")
    assert (once_more.status_code, once_more.json()) == (
        202,
        {"operation_id": own, "status": "completed"},
    )


def test_the_owner_asking_again_still_gets_its_operation(scene):
    """Unchanged for the agent that may see the operation."""
    again = scene["owner"].post("/api/v1/deletions", {"subject": "user-1"}, format="json")

    assert again.status_code == 202
    assert again.json() == {"operation_id": scene["hidden"], "status": "pending"}


def test_a_subject_asked_again_never_answers_anothers_deletion_of_a_private_memory(
    user, owner, narrow
):
    """After the narrow agent's completed whole-subject deletion, the owner deletes a private
    memory written since. The narrow agent asking again was answered that memory's operation
    (telling it a private memory of the subject existed): now its own completed one."""
    _shared_episode(user)
    narrow_client, owner_client = client_for(narrow), client_for(owner)
    first = narrow_client.post("/api/v1/deletions", {"subject": "user-1"}, format="json")
    assert deletion_run(operation_id=first.json()["operation_id"]) == "completed"
    private = _private(user, owner)
    private_op = owner_client.delete(f"/api/v1/memories/{private.id}").json()["operation_id"]
    assert narrow_client.get(f"/api/v1/deletions/{private_op}").status_code == 404

    again = narrow_client.post("/api/v1/deletions", {"subject": "user-1"}, format="json")

    assert again.status_code == 202, again.json()
    assert again.json() == {"operation_id": first.json()["operation_id"], "status": "completed"}
    assert not _names(again, private_op)
    # The owner, who may see both, is answered the unfinished one, as before.
    by_owner = owner_client.post("/api/v1/deletions", {"subject": "user-1"}, format="json")
    assert by_owner.json() == {"operation_id": private_op, "status": "pending"}


@pytest.mark.parametrize("written_since", [False, True])
def test_a_first_subject_request_under_anothers_unfinished_memory_deletion_answers_retry(
    user, owner, narrow, written_since
):
    """The owner deleted a restricted memory whose older version is a public episode the
    narrow agent reaches (not run yet; the narrow agent may not see it). With no
    whole-subject operation before, the narrow agent's request opened a new one, empty (or
    with a memory written since), which completed while the owner's still held that
    episode's copies. It is told to retry (503) instead (stop 56's audit of deletion)."""
    old = _shared_episode(user)
    old.status = "superseded"
    old.save(update_fields=["status"])
    head = MemoryFactory(
        subject=user,
        memory_type="episode",
        memory_class="episodic",
        memory_key="",
        sensitivity="restricted",
        supersedes=old,
        version=2,
        content="User-1 visited the Lisbon office for a medical assessment.",
    )
    owner_client, narrow_client = client_for(owner), client_for(narrow)
    deleted = owner_client.delete(f"/api/v1/memories/{head.id}")
    assert deleted.status_code == 202, deleted.json()
    hidden = deleted.json()["operation_id"]
    assert narrow_client.get(f"/api/v1/deletions/{hidden}").status_code == 404
    if written_since:
        _shared_episode(user)

    asked = narrow_client.post("/api/v1/deletions", {"subject": "user-1"}, format="json")

    assert asked.status_code == 503, asked.json()
    assert asked.json()["error"]["code"] == "subject_being_deleted"
    assert not _names(asked, hidden)
    # Once the owner's operation completed, the retry is a new operation of its own.
    assert deletion_run(operation_id=hidden) == "completed"
    again = narrow_client.post("/api/v1/deletions", {"subject": "user-1"}, format="json")
    assert again.status_code == 202, again.json()
    assert again.json()["operation_id"] != hidden


@pytest.mark.parametrize("how", ["delete", "post"])
def test_a_memory_deleted_by_another_answers_already_deleted_without_its_operation(scene, how):
    narrow, shared = scene["narrow"], scene["shared"]

    if how == "delete":
        again = narrow.delete(f"/api/v1/memories/{shared.id}")
    else:
        again = narrow.post("/api/v1/deletions", {"memory_id": str(shared.id)}, format="json")

    assert again.status_code == 409, again.json()
    assert again.json()["error"]["code"] == "already_deleted"
    assert "already deleted" in again.json()["error"]["message"]
    assert not _names(again, scene["hidden"])
    # Completed or not, the same answer.
    assert deletion_run(operation_id=scene["hidden"]) == "completed"
    later = narrow.delete(f"/api/v1/memories/{shared.id}")
    assert later.json()["error"]["code"] == "already_deleted"


def test_a_memory_deleted_by_a_visible_operation_still_answers_it(scene, user, narrow):
    """Unchanged: the owner is answered its operation, and so is the narrow agent for a
    deletion whose every memory its grant reaches (another's, or its own)."""
    owner = scene["owner"]
    assert owner.delete(f"/api/v1/memories/{scene['shared'].id}").json() == {
        "operation_id": scene["hidden"],
        "status": "pending",
    }
    episode = _shared_episode(user)
    by_owner = owner.delete(f"/api/v1/memories/{episode.id}").json()["operation_id"]
    assert scene["narrow"].delete(f"/api/v1/memories/{episode.id}").json() == {
        "operation_id": by_owner,
        "status": "pending",
    }


def test_a_memory_detail_names_no_operation_the_agent_may_not_see(scene):
    """The deletion's events (``deletion_requested``, then ``deleted``) keep their action and
    time; ``details.operation`` is left out for the narrow agent and kept for the owner."""
    narrow, owner, shared = scene["narrow"], scene["owner"], scene["shared"]
    assert deletion_run(operation_id=scene["hidden"]) == "completed"

    detail = narrow.get(f"/api/v1/memories/{shared.id}")

    assert detail.status_code == 200
    events = {e["action"]: e["details"] for e in detail.json()["events"]}
    assert "operation" not in events["deletion_requested"]
    assert "operation" not in events["deleted"]
    assert scene["hidden"] not in json.dumps(detail.json())
    by_owner = {
        e["action"]: e["details"]
        for e in owner.get(f"/api/v1/memories/{shared.id}").json()["events"]
    }
    assert by_owner["deletion_requested"]["operation"] == scene["hidden"]
    assert by_owner["deleted"]["operation"] == scene["hidden"]


def test_a_memory_detail_names_an_operation_the_agent_may_see(user, narrow):
    episode = _shared_episode(user)
    client = client_for(narrow)
    own = client.delete(f"/api/v1/memories/{episode.id}").json()["operation_id"]

    events = client.get(f"/api/v1/memories/{episode.id}").json()["events"]

    requested = [e for e in events if e["action"] == "deletion_requested"]
    assert [e["details"]["operation"] for e in requested] == [own]
