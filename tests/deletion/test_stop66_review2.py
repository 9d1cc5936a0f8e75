"""Stop 66's review of its deletion concurrency fix (4db9b149)."""

import pytest
from django.core.cache import cache
from django.db import connection

from memory_core import retrieval_cache
from memory_core.deletion import services
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request, deletion_request_or_queue
from memory_core.exceptions import DomainError
from memory_core.models import DeletionStep
from memory_core.principals import AgentPrincipal
from tests.deletion.test_stop66_review import _queued_meanwhile
from tests.factories import AgentFactory, MemoryFactory

KEY = "style.answers"
OTHER_KEY = "style.language"
MARKS = pytest.mark.parametrize("queued_key", ["", OTHER_KEY], ids=["whole subject", "other key"])
WHEN = pytest.mark.parametrize("at_once", [False, True], ids=["queued before", "queued at once"])


def _refusal(principal, owner, memory_key: str) -> str:
    """The code of the refusal ``deletion_request_or_queue`` answers ``principal``."""
    with pytest.raises(DomainError) as refused:
        deletion_request_or_queue(principal=principal, subject_id=owner.pk, memory_key=memory_key)
    return refused.value.code


def _asked_while_queued(principal, owner, owner_principal, queued_key, *, at_once) -> str:
    """The refusal of ``principal``'s request of KEY while the person's deletion of
    ``queued_key`` is queued: queued before it, or at once (after the request read the
    subject, before it asked ``deletion_request``)."""

    def queue():
        services.subject_deletion_queue(
            principal=owner_principal, subject_id=owner.pk, memory_key=queued_key
        )

    if not at_once:
        queue()
        return _refusal(principal, owner, KEY)
    with _queued_meanwhile(queue):
        return _refusal(principal, owner, KEY)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("queued_key", "at_once"),
    [("", False), (OTHER_KEY, False), ("", True)],
    ids=["whole subject queued before", "other key queued before", "whole subject at once"],
)
def test_an_agent_asking_a_key_it_reaches_part_of_while_another_deletion_waits_is_told_to_retry(
    tenant, owner, owner_principal, queued_key, at_once
):
    """An agent's request of a key small enough for a request deletes the memories on it
    that its grant reaches; another agent's private one stays, and the agent is never told
    of it. While another deletion of the subject was queued (the person's, of the whole
    subject or of another key), the request checked the queue's rule instead
    (``_key_in_reach``: every memory on the key, for a key's deletion to be queued) and
    answered ``403 key_not_fully_granted``, "the agent's grant does not reach every one of
    them", where a key without such a memory answered ``503 subject_being_deleted``: the
    answer told whether the key held memories the agent cannot see. Since 4db9b149 a
    request that met the mark at once answered so too. Now it is the 503 either way, after
    the checks a request made at once makes (``_key_granted``). (Another key's mark met
    at once fences nothing the request reads: it is made, as it is once the worker has made
    the queued one.)"""
    for _ in range(2):
        MemoryFactory(subject=owner, memory_key=KEY)
    MemoryFactory(subject=owner, memory_key=OTHER_KEY)
    MemoryFactory(subject=owner, memory_key=KEY, agent=AgentFactory(tenant=tenant))  # private
    asker = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))

    code = _asked_while_queued(asker, owner, owner_principal, queued_key, at_once=at_once)
    assert code == "subject_being_deleted"


@pytest.mark.django_db
def test_the_agent_asking_the_key_once_the_queued_deletion_is_made_deletes_what_it_reaches(
    tenant, owner
):
    """The answer the 503 stands for: once the worker has made the queued deletion (here:
    no mark), the request deletes the memories its grant reaches, and the private one
    stays."""
    shared = [MemoryFactory(subject=owner, memory_key=KEY) for _ in range(2)]
    MemoryFactory(subject=owner, memory_key=KEY, agent=AgentFactory(tenant=tenant))
    asker = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))
    operation = deletion_request_or_queue(principal=asker, subject_id=owner.pk, memory_key=KEY)
    assert sorted(map(str, operation.memory_ids)) == sorted(str(m.pk) for m in shared)


@pytest.mark.django_db
@MARKS
@WHEN
def test_an_agent_asking_a_key_that_holds_nothing_while_another_deletion_waits_is_404(
    tenant, owner, owner_principal, queued_key, at_once
):
    """4db9b149 answers a ``NotFound`` met at once with a mark as the mark decides: a key
    that holds nothing (never written, or nothing the agent's grant reaches) stays 404, the
    answer without a mark, never a 503 that tells of a queued deletion."""
    MemoryFactory(subject=owner, memory_key=OTHER_KEY)
    MemoryFactory(subject=owner, memory_key=KEY, agent=AgentFactory(tenant=tenant))
    asker = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))
    assert _refusal(asker, owner, KEY) == "not_found"  # no mark

    code = _asked_while_queued(asker, owner, owner_principal, queued_key, at_once=at_once)
    assert code == "not_found"


# --- the cache generation's lock (``retrieval_cache._one_bump_at_a_time``) -----------------


class _CacheDown:
    """The Django cache, but writing a generation raises, as Redis refusing connections does
    (redis-py's ``ConnectionError``)."""

    def __getattr__(self, name):
        return getattr(cache, name)

    def set(self, key, *args, **kwargs):
        if key.startswith("memledger:gen:"):
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        return cache.set(key, *args, **kwargs)


def _generation_locks_held() -> int:
    """How many cache generation locks this session holds (session advisory locks)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND pid = pg_backend_pid() AND objsubid = 1"  # 1: one bigint key
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db
def test_a_cache_down_in_the_bump_fails_the_step_and_lets_the_lock_go(
    owner, owner_principal, monkeypatch
):
    """The lock is a session's: kept past the bump, every other deletion's bump of the key
    would wait for it (with no time limit, inside its database phase) until this connection
    closed. A cache that raises inside the block lets it go, the step fails with the cache's
    own error (the unlock masks nothing), and the next run completes."""
    operation = deletion_request(
        principal=owner_principal, memory_id=MemoryFactory(subject=owner).id
    )
    held_before = _generation_locks_held()
    monkeypatch.setattr(retrieval_cache, "cache", _CacheDown())
    assert deletion_run(operation_id=operation.id) == "partial"
    assert _generation_locks_held() == held_before
    errors = dict(
        DeletionStep.objects.filter(
            operation=operation, store__in=["retrieval_cache", "summaries"]
        ).values_list("store", "last_error")
    )
    assert all(error.startswith("ConnectionError: Error 111") for error in errors.values()), errors

    monkeypatch.setattr(retrieval_cache, "cache", cache)
    assert deletion_run(operation_id=operation.id) == "completed"
