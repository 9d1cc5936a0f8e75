"""Two requests with one ``Idempotency-Key`` at once, each on its own connection."""

import threading
import time

import pytest
from django.core.cache import caches
from django.test import override_settings

from api import memories, throttling
from memory_core.exceptions import EmbeddingUnavailable
from memory_core.models import AdmissionDecision, IdempotencyRecord, Memory
from tests.api.test_memories import URL, body
from tests.threads import in_thread, someone_waits_for_a_lock

pytestmark = pytest.mark.django_db(transaction=True)


def _wait_until(condition, timeout=30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _race(api_client, monkeypatch, *, first_fails: bool, second_body=None):
    """Start the first request and hold it inside its write (its claim made, uncommitted);
    start the second with the same key (and ``second_body``, by default the first's), wait
    until it waits for the first's transaction, then let the first finish (or fail). Return
    both responses."""
    inside, release = threading.Event(), threading.Event()
    calls = []
    real_write = memories.memory_write

    def held_write(**kwargs):
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            inside.set()
            assert release.wait(30)
            if first_fails:
                raise EmbeddingUnavailable("The embedding model failed; retry later.")
        return real_write(**kwargs)

    monkeypatch.setattr(memories, "memory_write", held_write)

    def send(data):
        return lambda: api_client.post(URL, data, format="json", HTTP_IDEMPOTENCY_KEY="race")

    first = in_thread(send(body()), name="first", released=[inside])
    assert inside.wait(30)
    second = in_thread(send(second_body or body()), name="second")
    _wait_until(lambda: someone_waits_for_a_lock("transactionid"))
    release.set()
    return first.outcome(), second.outcome(), calls


def test_a_second_request_waits_for_the_first_and_replays_it(api_client, monkeypatch):
    first, second, calls = _race(api_client, monkeypatch, first_fails=False)
    assert first.status_code == 201 and second.status_code == 201
    assert second["Idempotent-Replayed"] == "true"
    assert second.json()["memory"]["id"] == first.json()["memory"]["id"]
    assert calls == ["first"]  # the second never reached the write
    assert Memory.objects.count() == 1 and AdmissionDecision.objects.count() == 1


def test_when_the_first_rolls_back_the_second_is_processed_afresh(api_client, monkeypatch):
    first, second, calls = _race(api_client, monkeypatch, first_fails=True)
    assert first.status_code == 503
    assert second.status_code == 201 and "Idempotent-Replayed" not in second
    assert calls == ["first", "second"]
    assert Memory.objects.count() == 1
    assert IdempotencyRecord.objects.get().status_code == 201


@override_settings(MEMLEDGER_WRITE_QUOTA="2/day", MEMLEDGER_RATE_LIMIT=None)
def test_a_key_refused_as_reused_while_its_first_request_ran_spends_no_write_quota(
    api_client, monkeypatch
):
    # The throttle counted the second request while the first was uncommitted (it could not
    # tell the key was taken); the refusal gives the write back, as a raced replay does.
    caches[throttling.counter_cache_alias()].clear()
    first, second, calls = _race(
        api_client,
        monkeypatch,
        first_fails=False,
        second_body=body(content="User prefers long answers."),
    )
    assert first.status_code == 201
    assert second.status_code == 422
    assert second.json()["error"]["code"] == "idempotency_key_reused"
    assert calls == ["first"]
    # One write of two spent: another fits, and then the quota is spent.
    assert api_client.post(URL, body(memory_key="other.key"), format="json").status_code == 201
    assert api_client.post(URL, body(memory_key="third.key"), format="json").status_code == 429
