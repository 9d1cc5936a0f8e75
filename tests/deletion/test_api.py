"""The deletion endpoints: 202 with an operation id, the operation's steps, 404 across tenants."""

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.models import DeletionOperation, Memory, Status
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


def test_delete_memory_answers_202_with_an_operation(api_client, memories):
    response = api_client.delete(f"/api/v1/memories/{memories[0].id}")
    assert response.status_code == 202, response.content
    body = response.json()
    assert set(body) == {"operation_id", "status"}
    assert body["status"] == "pending"
    assert Memory.objects.get(pk=memories[0].id).status == "deleted"


@pytest.mark.parametrize("form", ["memory_id", "memory_key", "subject"])
def test_post_deletions_accepts_the_three_forms(api_client, owner, form):
    memory = MemoryFactory(subject=owner, memory_key="editor")
    body = {
        "memory_id": {"memory_id": str(memory.id)},
        "memory_key": {"subject": owner.external_id, "memory_key": "editor"},
        "subject": {"subject": owner.external_id},
    }[form]
    response = api_client.post("/api/v1/deletions", body, format="json")
    assert response.status_code == 202, response.content
    detail = api_client.get(f"/api/v1/deletions/{response.json()['operation_id']}").json()
    assert detail["target"] == {"memory_id": "memory"}.get(form, form)
    assert detail["memory_count"] == 1


def test_get_deletion_shows_steps_and_evidence(api_client, memories):
    operation_id = api_client.delete(f"/api/v1/memories/{memories[0].id}").json()["operation_id"]
    deletion_run(operation_id=operation_id)
    body = api_client.get(f"/api/v1/deletions/{operation_id}").json()
    assert body["operation_id"] == operation_id
    assert body["status"] == "completed"
    assert body["requested_at"] and body["completed_at"]
    assert len(body["steps"]) == 10  # the stores of STORES in test_services.py
    step = body["steps"][0]
    assert set(step) == {"store", "status", "attempts", "verified_at", "evidence"}
    assert step["store"] == "primary" and step["status"] == "verified"
    assert step["evidence"]["rows_with_content"] == 0


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"memory_key": "editor"},
        {"memory_id": "not-a-uuid"},
        {"memory_id": "6a4f7f0e-0000-4000-8000-000000000000", "subject": "x"},
    ],
)
def test_bad_bodies_are_400(api_client, body):
    response = api_client.post("/api/v1/deletions", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"


def test_other_tenant_gets_404_everywhere(other_api_client, api_client, owner, memories):
    assert other_api_client.delete(f"/api/v1/memories/{memories[0].id}").status_code == 404
    for body in (
        {"memory_id": str(memories[0].id)},
        {"subject": owner.external_id},
        {"subject": owner.external_id, "memory_key": memories[0].memory_key},
    ):
        response = other_api_client.post("/api/v1/deletions", body, format="json")
        assert response.status_code == 404, body
        assert response.json()["error"]["code"] == "not_found"
    operation_id = api_client.delete(f"/api/v1/memories/{memories[0].id}").json()["operation_id"]
    assert other_api_client.get(f"/api/v1/deletions/{operation_id}").status_code == 404
    assert Memory.objects.get(pk=memories[1].id).status == "active"


def test_unknown_subject_or_key_is_404(api_client, owner, tenant):
    assert (
        api_client.post("/api/v1/deletions", {"subject": "nobody"}, format="json").status_code
        == 404
    )
    SubjectFactory(tenant=tenant, external_id="someone")
    response = api_client.post(
        "/api/v1/deletions", {"subject": "someone", "memory_key": "none"}, format="json"
    )
    assert response.status_code == 404


def test_requires_an_api_key(client, memories):
    assert client.delete(f"/api/v1/memories/{memories[0].id}").status_code == 401


def test_list_shows_only_the_tenants_operations(api_client, other_api_client, memories):
    operation_id = api_client.delete(f"/api/v1/memories/{memories[0].id}").json()["operation_id"]
    mine = api_client.get("/api/v1/deletions").json()["results"]
    assert [op["operation_id"] for op in mine] == [operation_id]
    assert other_api_client.get("/api/v1/deletions").json()["results"] == []


def test_asking_again_for_a_subject_returns_the_operation_under_way(api_client, owner, memories):
    body = {"subject": owner.external_id}
    first = api_client.post("/api/v1/deletions", body, format="json")
    again = api_client.post("/api/v1/deletions", body, format="json")
    assert first.status_code == again.status_code == 202
    assert again.json()["operation_id"] == first.json()["operation_id"]
    MemoryFactory(subject=owner)  # something new to delete: a new operation
    third = api_client.post("/api/v1/deletions", body, format="json")
    assert third.json()["operation_id"] != first.json()["operation_id"]
    detail = api_client.get(f"/api/v1/deletions/{third.json()['operation_id']}").json()
    assert detail["memory_count"] == 1


@pytest.mark.django_db(transaction=True)
def test_an_accepted_deletion_is_journaled_when_the_response_comes_back(
    live_server, api_key, memories, monkeypatch
):
    # A real server thread: the request's transaction commits, and the journal line is
    # written after it, when the request no longer acts for its tenant (row-level security),
    # and still records journaled_at.
    import json
    import urllib.request

    from memory_core.deletion.ledger import ledger_read
    from memory_core.models import DeletionOperation

    monkeypatch.setattr("memory_core.deletion.services.deletion_enqueue", lambda pk: None)
    request = urllib.request.Request(  # noqa: S310 - the test's own live server
        f"{live_server.url}/api/v1/memories/{memories[0].id}",
        method="DELETE",
        headers={"Authorization": f"Bearer {api_key}"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
        assert response.status == 202
        operation_id = json.loads(response.read())["operation_id"]
    operation = DeletionOperation.objects.get(pk=operation_id)
    assert (operation.status, operation.attempts) == ("pending", 0)
    assert operation.journaled_at is not None
    entries = ledger_read(since=operation.requested_at)
    assert str(operation.id) in [entry["operation_id"] for entry in entries]


def test_an_agent_out_of_reach_of_a_versions_history_is_403(tenant, owner):
    old = MemoryFactory(subject=owner, memory_key="k", sensitivity="sensitive", status="superseded")
    head = MemoryFactory(subject=owner, memory_key="k", supersedes=old, version=2)
    client = client_for(AgentFactory(tenant=tenant, max_sensitivity="personal"))

    for response in (
        client.delete(f"/api/v1/memories/{head.id}"),
        client.post("/api/v1/deletions", {"memory_id": str(head.id)}, format="json"),
    ):
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "history_not_fully_granted"
    assert Memory.objects.get(pk=old.id).status == "superseded"


def test_an_agent_out_of_reach_of_a_key_heads_history_deletes_nothing_of_the_key(
    api_client, tenant, owner
):
    """Stop 63's audit of deletion found that a key's deletion by an agent capped below an
    older version of the key's head (a correction lowered the chain's sensitivity) deleted the
    head and left that version superseded, content and all, under an operation that
    completed, where the head's deletion by id is refused. Now the key's request is refused
    the same way (``403 history_not_fully_granted``), nothing deleted, and an agent whose
    grant reaches every version deletes the key, history and all."""
    old = MemoryFactory(
        subject=owner, memory_key="contact", content="Phone is 555-0100",
        sensitivity="sensitive", status="superseded",
    )  # fmt: skip
    head = MemoryFactory(
        subject=owner, memory_key="contact", content="Use email", sensitivity="personal",
        supersedes=old, version=2,
    )  # fmt: skip
    capped = client_for(AgentFactory(tenant=tenant, max_sensitivity="personal"))
    body = {"subject": owner.external_id, "memory_key": "contact"}

    response = capped.post("/api/v1/deletions", body, format="json")

    assert response.status_code == 403, response.content
    assert response.json()["error"]["code"] == "history_not_fully_granted"
    assert not DeletionOperation.objects.exists()
    left = dict(Memory.objects.filter(subject=owner).values_list("pk", "content"))
    assert left == {old.pk: "Phone is 555-0100", head.pk: "Use email"}

    response = api_client.post("/api/v1/deletions", body, format="json")

    assert response.status_code == 202, response.content
    operation_id = response.json()["operation_id"]
    assert deletion_run(operation_id=operation_id) == "completed"
    gone = set(Memory.objects.filter(subject=owner).values_list("status", "content"))
    assert gone == {(Status.DELETED, "")}
