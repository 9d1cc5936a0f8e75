"""A retrieval that waited for the subject's lock (a deletion of another key of the subject
held it) read "no keyless conflict open" before the wait, and a correction of lower
authority that committed meanwhile had its rival given beside the memory it disputes (stop
54's audit of keyless conflicts)."""

import threading
import time

import pytest
from django.db import connection, transaction
from django.test.utils import override_settings
from rest_framework.test import APIClient

from memory_core.locks import subject_deletion_lock
from memory_core.models import ReviewItem, Subject
from memory_core.rls import tenant_scope
from memory_core.services import writes
from tests.keyless.helpers import HEAD, RIVAL, keyless_incident
from tests.threads import in_thread

pytestmark = pytest.mark.django_db(transaction=True)


def _waiting_advisory() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'advisory' "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        )
        return cursor.fetchone()[0]


def _until(predicate, wait=20):
    deadline = time.monotonic() + wait
    while not predicate():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.02)


@override_settings(MEMLEDGER_SUBJECT_LOCK_WAIT=20)
def test_a_retrieval_that_waited_for_the_subjects_lock_measures_a_conflict_opened_meanwhile(
    api_key, tenant, monkeypatch
):
    def client():
        c = APIClient()
        c.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key}")
        return c

    head = keyless_incident(client())
    subject = Subject.objects.get(tenant=tenant, external_id="user-1")

    # The correction pauses after opening its conflict, before it commits (holding the
    # subject's lock shared, as every write does).
    opened, release = threading.Event(), threading.Event()
    original = writes.conflict_open

    def pausing_open(**kwargs):
        item = original(**kwargs)
        opened.set()
        release.wait(20)
        return item

    monkeypatch.setattr(writes, "conflict_open", pausing_open)
    body = {
        "content": RIVAL,
        "source": {"type": "model_inference", "conversation_id": "c", "message_id": "m9"},
    }
    correction = in_thread(
        lambda: client().post(f"/api/v1/memories/{head}/supersede", body, format="json"),
        released=[opened],
    )
    assert opened.wait(20)

    # A deletion request of the subject (say of another key) asks for its lock exclusive:
    # it waits for the correction.
    def deletion():
        with tenant_scope(tenant.id), transaction.atomic():
            subject_deletion_lock(subject.pk)

    deleting = in_thread(deletion)
    _until(lambda: _waiting_advisory() >= 1)

    # A retrieval now: its lookup cannot take the subject's lock (a deletion waits for it),
    # and waits for the lock after reading whether a keyless conflict is open (none yet).
    def question():
        return client().post(
            "/api/v1/retrieve",
            {"query": "what went wrong with Monday's Atlas deploy?",
             "context": {"user_id": "user-1"}},
            format="json",
        )  # fmt: skip

    asking = in_thread(question)
    _until(lambda: _waiting_advisory() >= 2)

    release.set()  # the correction commits (its conflict with it), then the deletion runs
    answer = correction.outcome(30)
    assert answer.status_code == 201, answer.json()
    deleting.outcome(30)
    found = asking.outcome(30)
    assert found.status_code == 200, found.json()
    assert ReviewItem.objects.filter(kind="conflict", state="open", memory_key="").count() == 1

    # The next retrieval, which waits for nothing, measures them: the rival is not given.
    again = [item["content"] for item in question().json()["items"]]
    assert HEAD in again and RIVAL not in again, again

    given = [item["content"] for item in found.json()["items"]]
    assert HEAD in given
    # The rows were read after the wait, the conflict's flag before it
    # (retrieval.pipeline.lookup_subject_and_policy re-reads the queued key after a wait,
    # not the keyless flag): the rival was given beside the memory it disputes.
    assert RIVAL not in given, given
