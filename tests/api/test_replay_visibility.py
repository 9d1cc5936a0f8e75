"""An idempotent replay shows the memory only if the agent may still see it.

A replay (``Idempotency-Key``) is rebuilt from the recorded ids with the memory as it is now.
Between the first answer and the retry the agent's grant may narrow (a read type taken away,
a lower maximum sensitivity) or the subject's whole deletion may be queued: the memory's
detail is then a 404 for the agent, and the replay leaves the memory out the same way
(``memory: null``, a pending write's ``memory_id: null``) while keeping the first answer's
status and decision, so the agent knows its write was made and does not write again. Each
test here failed before: the replay showed the memory, content and all.
"""

import pytest
from django.utils import timezone

from memory_core.models import AdmissionDecision, Agent, Memory, Subject
from tests.api.test_idempotency import BATCH, post
from tests.api.test_memories import URL, body

pytestmark = pytest.mark.django_db

SOURCE = {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"}


def _narrow(agent, **grant) -> None:
    Agent.objects.filter(pk=agent.pk).update(**grant)


def _counts():
    return Memory.objects.count(), AdmissionDecision.objects.count()


def test_a_replay_leaves_out_a_memory_the_agent_may_no_longer_read(api_client, agent):
    first = post(api_client, URL, body(), key="write-1")
    assert first.status_code == 201, first.json()
    memory_id = first.json()["memory"]["id"]
    _narrow(agent, read_types=["incident"])
    assert api_client.get(f"{URL}/{memory_id}").status_code == 404
    counts = _counts()

    retry = post(api_client, URL, body(), key="write-1")
    assert retry.status_code == 201 and retry["Idempotent-Replayed"] == "true"
    answer = retry.json()
    assert answer["memory"] is None
    assert answer["decision"] == "accepted"
    assert answer["admission_decision_id"] == first.json()["admission_decision_id"]
    assert memory_id not in retry.content.decode()
    assert "concise" not in retry.content.decode()
    assert _counts() == counts  # nothing written again

    _narrow(agent, read_types=["user_preference"])  # the grant back: the memory again
    assert post(api_client, URL, body(), key="write-1").json()["memory"]["id"] == memory_id


def test_a_replay_leaves_out_a_memory_above_the_agents_new_maximum_sensitivity(api_client, agent):
    first = post(api_client, URL, body(), key="write-1").json()
    _narrow(agent, max_sensitivity="public")
    retry = post(api_client, URL, body(), key="write-1")
    assert retry.status_code == 201 and retry.json()["memory"] is None
    assert first["memory"]["id"] not in retry.content.decode()


def test_a_pending_writes_replay_leaves_out_its_memory_id(api_client, agent):
    sensitive = body(content="User mentioned a diabetes diagnosis; prefers morning meetings.")
    first = post(api_client, URL, sensitive, key="pending")
    assert first.status_code == 202, first.json()
    _narrow(agent, read_types=["incident"])
    retry = post(api_client, URL, sensitive, key="pending")
    assert retry.status_code == 202 and retry["Idempotent-Replayed"] == "true"
    assert retry.json()["memory_id"] is None
    assert retry.json()["review_item"] == first.json()["review_item"]
    assert first.json()["memory_id"] not in retry.content.decode()


def test_a_batch_replay_leaves_out_only_the_items_the_agent_may_no_longer_see(api_client, agent):
    items = [
        body(memory_key="style.answers"),
        body(
            memory_key="style.tone",
            content="User prefers a friendly tone.",
            sensitivity="public",
        ),
    ]
    first = post(api_client, BATCH, {"items": items}, key="batch-1").json()
    assert [r["decision"] for r in first["results"]] == ["accepted", "accepted"]
    _narrow(agent, max_sensitivity="public")
    retry = post(api_client, BATCH, {"items": items}, key="batch-1")
    assert retry.status_code == 200 and retry["Idempotent-Replayed"] == "true"
    results = retry.json()["results"]
    assert results[0]["memory"] is None and results[0]["decision"] == "accepted"
    assert results[1]["memory"]["id"] == first["results"][1]["memory"]["id"]
    assert first["results"][0]["memory"]["id"] not in retry.content.decode()


def test_a_replayed_correction_names_no_version_the_agent_may_no_longer_see(api_client, agent):
    """The corrected version is above the agent's new maximum, the correction is not: the
    replay shows the correction without the id of the version it corrects."""
    older = post(api_client, URL, body()).json()["memory"]
    correction = {"content": "User prefers short answers.", "source": SOURCE}
    path = f"{URL}/{older['id']}/supersede"
    first = post(api_client, path, correction, key="fix-1").json()
    assert first["memory"]["supersedes"] == older["id"]
    # A chain whose older version is the more sensitive (a trusted path's downgrade, or rows
    # from before agents' corrections were kept at their head's): above the new maximum.
    Memory.objects.filter(pk=older["id"]).update(sensitivity="sensitive")
    _narrow(agent, max_sensitivity="personal")
    retry = post(api_client, path, correction, key="fix-1")
    assert retry.status_code == 201 and retry["Idempotent-Replayed"] == "true"
    assert retry.json()["memory"]["id"] == first["memory"]["id"]
    assert retry.json()["memory"]["supersedes"] is None
    assert older["id"] not in retry.content.decode()


def test_a_replay_leaves_out_a_memory_whose_subjects_deletion_is_queued(api_client, agent):
    first = post(api_client, URL, body(), key="write-1").json()
    Subject.objects.filter(external_id="user-42").update(
        deletion_queued_at=timezone.now(), deletion_queued_by_agent=agent
    )
    retry = post(api_client, URL, body(), key="write-1")
    assert retry.status_code == 201 and retry["Idempotent-Replayed"] == "true"
    assert retry.json()["memory"] is None
    assert first["memory"]["id"] not in retry.content.decode()
    assert Memory.objects.count() == 1  # and nothing written


def test_a_write_answer_names_no_memory_the_writer_may_not_read(api_client, agent):
    """A grant may write a type it may not read. The first answer showed the whole memory,
    id and content, whose detail is a 404 for the writer, and its replay a moment later,
    nothing changed, answered ``memory: null``: not the "same status and body" (stop 56's
    audit of the write API). Both leave it out now, without and with a key."""
    _narrow(agent, read_types=["incident"])
    plain = api_client.post(URL, body(memory_key="style.plain"), format="json")
    assert plain.status_code == 201, plain.json()
    assert plain.json()["memory"] is None
    first = post(api_client, URL, body(), key="write-only-1")
    assert first.status_code == 201, first.json()
    replay = post(api_client, URL, body(), key="write-only-1")
    assert replay["Idempotent-Replayed"] == "true"
    assert first.json()["memory"] is None
    assert first.json() == replay.json()
    assert Memory.objects.filter(memory_key="style.answers", status="active").exists()


def test_a_batch_answer_names_no_memory_the_writer_may_not_read(api_client, agent):
    """The batch's items likewise (stop 56's audit of the write API)."""
    _narrow(agent, read_types=["incident"])
    items = {"items": [body(), body(memory_key="style.tone", content="User likes a warm tone.")]}
    first = post(api_client, BATCH, items, key="write-only-batch")
    assert first.status_code == 200, first.json()
    replay = post(api_client, BATCH, items, key="write-only-batch")
    assert [result["memory"] for result in first.json()["results"]] == [None, None]
    assert first.json() == replay.json()


def test_the_schema_says_a_first_answer_leaves_out_a_memory_the_writer_may_not_read(client):
    """The schema said ``memory`` was null "only in a replay" after stop 56's first answers
    left it out for a writer that may not read it (stop 56's review)."""
    schema = client.get("/api/schema/?format=json").json()["components"]["schemas"]
    for name, field in (("AcceptedWrite", "memory"), ("PendingWrite", "memory_id")):
        described = schema[name]["properties"][field].get("description", "")
        assert "does not read" in described and "only in a replay" not in described, described
