"""A memory whose deletion was requested, before the worker has run: the row is a content-free
tombstone at once, and its events are answered as the deletion's events step leaves them (ids
and rule codes), to agents and on the person's own page (stop 54's audit of reads: they still
answered a revocation's reason and a task's id until the step ran)."""

import pytest

from memory_core.deletion.stores import EVENT_CODE_KEYS, EVENT_ID_KEYS
from tests.factories import write_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/memories"
REASON = "She told me she moved to Lisbon with her partner Joana last spring."
TASK = "refund-for-jane.doe@example.com"


def _revoked(client) -> str:
    memory = client.post(URL, write_body(), format="json").json()["memory"]["id"]
    revoked = client.post(f"{URL}/{memory}/revoke", {"reason": REASON}, format="json")
    assert revoked.status_code == 200, revoked.json()
    return memory


def _task_closed(client) -> str:
    body = write_body(memory_type="task_state", memory_key="", task_id=TASK, content="Step 3.")
    memory = client.post(URL, body, format="json").json()["memory"]["id"]
    closed = client.post(
        "/api/v1/tasks/close", {"user_id": "user-1", "task_id": TASK}, format="json"
    )
    assert closed.json()["expired"] == [memory], closed.json()
    return memory


@pytest.mark.parametrize("make", [_revoked, _task_closed], ids=["revoke_reason", "task_id"])
def test_a_deleted_memorys_events_answer_no_free_text_from_the_request_on(api_client, make):
    """docs/operations.md: the request turns the rows into content-free tombstones "at once"
    and events "keep ids and reason codes only". The events' free text stays in the table
    until the worker's ``events`` step (a minute or two; never while the worker is down or
    the operation dead-lettered), and GET of the memory answered it to every agent
    meanwhile."""
    memory = make(api_client)
    deleted = api_client.delete(f"{URL}/{memory}")
    assert deleted.status_code == 202, deleted.json()

    detail = api_client.get(f"{URL}/{memory}").json()
    assert detail["memory"]["status"] == "deleted"
    assert detail["memory"]["content"] == "" and detail["memory"]["task_id"] == ""
    allowed = set(EVENT_ID_KEYS) | set(EVENT_CODE_KEYS)
    free_text = [
        (event["action"], key, value)
        for event in detail["events"]
        for key, value in event["details"].items()
        if key not in allowed
    ]
    assert free_text == [], f"a deleted memory's events still answer: {free_text}"
