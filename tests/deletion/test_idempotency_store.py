"""Deletion and idempotency records: a retried write never brings a deleted memory back.

A record holds ids and hashes only (the key's SHA-256, the request's fingerprint, the
decisions' ids), as the tombstone ledger does, so no deletion step removes it: it stays until
it expires, and a retry of the write whose memory was deleted since replays the tombstone.
When deletion removed the records instead, such a retry was processed as a new write and
stored the deleted memory again.
"""

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request, tenant_deletion_request
from memory_core.deletion.stores import REGISTRY
from memory_core.models import Memory, Subject
from tests.api.test_idempotency import BATCH, post
from tests.api.test_memories import URL, body

pytestmark = pytest.mark.django_db


def _replays_the_tombstone(response, memory_id) -> None:
    assert response["Idempotent-Replayed"] == "true"
    memory = response.json()["memory"]
    assert memory["id"] == memory_id and memory["status"] == "deleted"
    assert memory["content"] == "" and memory["value"] is None


def test_a_retry_after_a_memorys_deletion_replays_the_tombstone(api_client, system_principal):
    first = post(api_client, URL, body(), key="write-1").json()
    memory_id = first["memory"]["id"]
    operation = deletion_request(principal=system_principal, memory_id=memory_id)
    assert "idempotency" not in set(operation.steps.values_list("store", flat=True))
    assert "idempotency" not in REGISTRY
    _replays_the_tombstone(post(api_client, URL, body(), key="write-1"), memory_id)

    assert deletion_run(operation_id=operation.id) == "completed"
    retry = post(api_client, URL, body(), key="write-1")
    assert retry.status_code == 201
    _replays_the_tombstone(retry, memory_id)
    assert not Memory.objects.exclude(status="deleted").exists()  # nothing written again


def test_a_retried_batch_after_one_item_was_deleted_writes_nothing_again(
    api_client, system_principal
):
    items = [body(), body(memory_key="style.tone", content="User prefers a friendly tone.")]
    first = post(api_client, BATCH, {"items": items}, key="batch-1").json()
    deleted = first["results"][0]["memory"]["id"]
    operation = deletion_request(principal=system_principal, memory_id=deleted)
    assert deletion_run(operation_id=operation.id) == "completed"
    retry = post(api_client, BATCH, {"items": items}, key="batch-1")
    assert retry.status_code == 200 and retry["Idempotent-Replayed"] == "true"
    statuses = [result["memory"]["status"] for result in retry.json()["results"]]
    assert statuses == ["deleted", "active"]
    assert Memory.objects.count() == 2


def test_a_retry_after_its_subjects_deletion_writes_nothing_again(
    api_client, system_principal, tenant
):
    first = post(api_client, URL, body(), key="write-1").json()
    subject = Subject.objects.get(tenant=tenant, external_id="user-42")
    operation = deletion_request(principal=system_principal, subject_id=subject.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    _replays_the_tombstone(post(api_client, URL, body(), key="write-1"), first["memory"]["id"])
    assert not Memory.objects.exclude(status="deleted").exists()


def test_after_a_tenants_deletion_no_key_of_it_answers(api_client, tenant):
    post(api_client, URL, body(), key="write-1")
    operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    # Its API keys were revoked with the request: a retry is not even authenticated.
    assert post(api_client, URL, body(), key="write-1").status_code == 401
