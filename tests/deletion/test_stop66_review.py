"""Stop 66's review of stop 65's deletion concurrency fixes (3583651b, 3a2818ad)."""

import threading
import time
from functools import partial
from unittest import mock

import pytest
from django.core.cache import cache

from memory_core import retrieval_cache
from memory_core.deletion import services
from memory_core.deletion.runner import deletion_run, operation_context
from memory_core.deletion.services import deletion_request
from memory_core.deletion.stores import verify_all
from memory_core.exceptions import DomainError
from memory_core.models import Subject
from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.rls import tenant_scope
from tests.factories import AgentFactory, MemoryFactory
from tests.threads import errors_of, in_thread, someone_waits_for_a_lock

KEY = "style.answers"
NAMESPACES = ("retrieval", "summary")


def _queued_meanwhile(queue):
    """Patch ``services._subject_or_none`` so that ``queue()`` (another request's mark)
    commits right after the request read the subject, before it asks ``deletion_request``:
    the window of two requests at once (3583651b's tests make it so too)."""
    original = services._subject_or_none

    def read_then_the_other_request_queues(*args, **kwargs):
        stale = original(*args, **kwargs)
        queue()
        return stale

    return mock.patch.object(services, "_subject_or_none", read_then_the_other_request_queues)


@pytest.mark.django_db
def test_an_agents_key_deletion_asked_twice_at_once_gets_the_queued_one_back(
    settings, tenant, owner, agent, api_client
):
    """3583651b answered the queued one to the second of two requests at once only when the
    request met the mark as ``SubjectBeingDeleted``. The API's ``{"subject", "memory_key"}``
    is an agent's, and the mark fences the key's memories from agents: the request found the
    key empty, 404 ``not_found`` ("No memory with this key"), where asked a moment later it
    gets the queued one back (202 ``queued``, ``already_requested``)."""
    for _ in range(3):
        MemoryFactory(subject=owner, memory_key=KEY)
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 60
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2  # the key's three: queued
    other = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))

    def the_other_queues_the_key():
        services.subject_deletion_queue(principal=other, subject_id=owner.pk, memory_key=KEY)

    with _queued_meanwhile(the_other_queues_the_key):
        response = api_client.post(
            "/api/v1/deletions", {"subject": owner.external_id, "memory_key": KEY}, format="json"
        )
    assert response.status_code == 202, response.json()
    queued = services.queued_deletion(Subject.objects.get(pk=owner.pk))
    assert response.json() == {"operation_id": str(queued.pk), "status": "queued"}

    # The service's flag, in the same race once more.
    Subject.objects.filter(pk=owner.pk).update(
        deletion_queued_at=None, deletion_queued_key="", deletion_queued_by_agent=None
    )
    asker = AgentPrincipal.from_agent(agent)
    with _queued_meanwhile(the_other_queues_the_key):
        operation = services.deletion_request_or_queue(
            principal=asker, subject_id=owner.pk, memory_key=KEY
        )
    queued = services.queued_deletion(Subject.objects.get(pk=owner.pk))
    assert (operation.pk, operation.status, operation.already_requested) == (
        queued.pk,
        "queued",
        True,
    )


@pytest.mark.django_db
def test_an_agents_key_deletion_meeting_the_whole_subjects_mark_at_once_is_503(
    settings, tenant, owner
):
    """The same window with the whole subject queued meanwhile: asked a moment later an
    agent is told to retry (503 ``subject_being_deleted``), not that the key holds nothing
    (404), which it would believe."""
    for _ in range(3):
        MemoryFactory(subject=owner, memory_key=KEY)
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 60
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2
    asker = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))

    def the_whole_subject_is_queued():
        services.subject_deletion_queue(principal=asker, subject_id=owner.pk)

    with _queued_meanwhile(the_whole_subject_is_queued), pytest.raises(DomainError) as refused:
        services.deletion_request_or_queue(principal=asker, subject_id=owner.pk, memory_key=KEY)
    assert refused.value.code == "subject_being_deleted"


@pytest.mark.django_db
@pytest.mark.parametrize("queued_key", [KEY, ""], ids=["the key", "the whole subject"])
def test_an_agent_out_of_reach_meeting_a_mark_at_once_gets_its_refusal(
    settings, tenant, owner, queued_key
):
    """The request's refusal, as asked a moment later (``_key_in_reach``): never the queued
    one's id, nor a 503 that tells of a deletion queued of memories it cannot see."""
    for _ in range(3):
        MemoryFactory(subject=owner, memory_key=KEY)
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 60
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2
    asker = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))
    stranger = AgentPrincipal.from_agent(AgentFactory(tenant=tenant, read_types=["fact"]))

    def the_other_queues():
        services.subject_deletion_queue(principal=asker, subject_id=owner.pk, memory_key=queued_key)

    with _queued_meanwhile(the_other_queues), pytest.raises(DomainError) as refused:
        services.deletion_request_or_queue(principal=stranger, subject_id=owner.pk, memory_key=KEY)
    assert refused.value.code == "not_found"


# --- the cache steps (3a2818ad) -------------------------------------------------------------

YESTERDAY_NS = 86_400 * 10**9


def _stores_failing(operation) -> set[str]:
    """The stores whose verification of ``operation`` fails now (``verify_all``)."""
    return {name for name, (ok, _) in verify_all(operation_context(operation)).items() if not ok}


@pytest.mark.django_db
def test_yesterdays_generation_put_back_fails_the_cache_steps_whatever_the_bump_replaced(
    owner, owner_principal
):
    """3a2818ad let any generation above the one the bump replaced hold, to pass a concurrent
    bump's smaller value. But the value replaced is whatever the key held: here one a host
    whose clock was reset (a VM before its clock synced) started after the key was evicted,
    near the epoch. Yesterday's generation put back (a cache restored from a snapshot) lies
    above it: both cache steps verified while yesterday's entries, cached before the
    deletion, were served again. Two bumps now take turns (``_one_bump_at_a_time``), so none
    writes a smaller value last, and only the generation the purge wrote or a greater one
    holds, as before 3a2818ad."""
    memory = MemoryFactory(subject=owner)
    place = {"tenant_id": owner.tenant_id, "subject_id": owner.id, "key": "profile"}
    yesterday = time.time_ns() - YESTERDAY_NS
    keys = [retrieval_cache._generation_key(ns, owner.tenant_id, owner.id) for ns in NAMESPACES]
    for key, namespace in zip(keys, NAMESPACES, strict=True):
        cache.set(key, yesterday)
        retrieval_cache.cache_set(
            **place, value={"about": memory.content}, memory_ids=[], namespace=namespace
        )
        cache.set(key, 1_000)  # evicted, then started again on a host whose clock was reset
    operation = deletion_request(principal=owner_principal, memory_id=memory.id)
    assert deletion_run(operation_id=operation.id) == "completed"

    for key in keys:
        cache.set(key, yesterday)  # yesterday's snapshot restored
    # What the steps must see: yesterday's entry, holding the deleted words, served again.
    assert retrieval_cache.cache_get(**place, namespace="summary") == {"about": memory.content}
    assert _stores_failing(operation) == {"retrieval_cache", "summaries"}
    cache.delete_many(keys)


class _SmallerLandsLast:
    """The Django cache, but of two threads bumping the generation at ``key``, ``first``
    writes its value once ``second`` has written its own (or once ``second`` waits for an
    advisory lock, or after 5 s), and ``second`` verifies once ``first`` has written: two
    deletions of one subject at once, where the one that read the clock first writes last,
    a smaller value."""

    def __init__(self, key: str):
        self.key = key
        self.first_paused = threading.Event()
        self.written = {"first": threading.Event(), "second": threading.Event()}
        self.second_reads = 0

    def __getattr__(self, name):
        return getattr(cache, name)

    def set(self, key, value, *args, **kwargs):
        me = threading.current_thread().name
        if key == self.key and me == "first" and not self.written["first"].is_set():
            self.first_paused.set()
            deadline = time.monotonic() + 5
            while not self.written["second"].wait(0.05) and time.monotonic() < deadline:
                if someone_waits_for_a_lock("advisory"):
                    break  # second waits for this bump: it cannot write first
        cache.set(key, value, *args, **kwargs)
        if key == self.key and me in self.written:
            self.written[me].set()

    def get(self, key, *args, **kwargs):
        if key == self.key and threading.current_thread().name == "second":
            self.second_reads += 1
            if self.second_reads > 1:  # its verification, after its bump's read
                self.written["first"].wait(5)
        return cache.get(key, *args, **kwargs)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("before", ["none yet", "one in place"])
def test_two_deletions_of_one_subject_bumping_at_once_both_complete(
    owner, private_queue, monkeypatch, before
):
    """Stop 65's CI flake, which 3a2818ad fixed only while the subject had a generation: with
    none yet (a subject's first deletions, as in
    ``test_concurrency.py::test_concurrent_runs_never_put_back_what_another_removed``) both
    bumps replaced nothing, and the second's cache step still failed, "verification found
    residue", its operation partial. Now the bumps take turns: the second reads the first's
    value and writes a greater one."""
    system = SystemPrincipal(tenant_id=owner.tenant_id)
    operations = {
        name: deletion_request(principal=system, memory_id=MemoryFactory(subject=owner).id)
        for name in ("first", "second")
    }
    key = retrieval_cache._generation_key("summary", owner.tenant_id, owner.id)
    if before == "one in place":
        cache.set(key, time.time_ns() - 10**9)
    race = _SmallerLandsLast(key)
    monkeypatch.setattr(retrieval_cache, "cache", race)

    def run(name):
        if name == "second":
            assert race.first_paused.wait(30), "the first deletion never bumped"
        with tenant_scope(owner.tenant_id):  # as the Celery task runs it
            return deletion_run(operation_id=operations[name].id)

    threads = [in_thread(partial(run, name), name=name) for name in operations]
    assert errors_of(*threads, timeout=60) == []
    assert [thread.result for thread in threads] == ["completed", "completed"]
    cache.delete(key)
