"""Fixtures of the deletion tests: memories that have something in every derived store."""

import json
import random
import threading
import time
import uuid
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from memory_core import retrieval_cache
from memory_core.exports import export_create
from memory_core.models import (
    IdempotencyRecord,
    MemoryClass,
    MemoryEvent,
    MemoryType,
    RetrievalTrace,
)
from memory_core.principals import SubjectPrincipal, SystemPrincipal
from memory_core.rls import tenant_scope
from tests.celery_worker import celery_session_worker, celery_worker  # noqa: F401
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory, write_body
from tests.memory_core.retrieval.conftest import world  # noqa: F401 (a fixture)
from tests.threads import in_thread


def unit_vector(seed: int) -> list[float]:
    rng = random.Random(seed)
    values = [rng.uniform(-1, 1) for _ in range(384)]
    norm = sum(v * v for v in values) ** 0.5
    return [v / norm for v in values]


def journal_line(
    number: int, *, tenant_id, target: str, subject_id=None, memory_ids=(), reason_code="requested"
) -> dict:
    """Return a deletion journal line (``ledger.ledger_entry``'s shape) of an operation a
    restored backup does not hold, for ``replay_deletions``: operation ``number`` of the tests,
    requested on 2026-12-01 at 10:00 UTC, with a tombstone per id of ``memory_ids``."""
    return {
        "operation_id": f"6f1f7a4e-0000-4000-8000-{number:012d}",
        "tenant_id": str(tenant_id),
        "subject_id": str(subject_id) if subject_id else None,
        "target": target,
        "requested_at": "2026-12-01T10:00:00+00:00",
        "reason_code": reason_code,
        "tombstones": [{"memory_id": str(i), "content_hash": ""} for i in memory_ids],
    }


@contextmanager
def held_in_another_transaction(tenant_id, work):
    """Run ``work()`` in a transaction of tenant ``tenant_id`` on another thread (its own
    connection) and keep that transaction open, with the locks it took, until the block
    ends (ten seconds at most); the block gets the thread (``tests.threads.InThread``). For
    transactional tests of what waits on whom."""
    from django.db import transaction

    holding, release = threading.Event(), threading.Event()

    def hold():
        with tenant_scope(tenant_id), transaction.atomic():
            work()
            holding.set()
            release.wait(10)

    holder = in_thread(hold, released=[holding])
    try:
        assert holding.wait(30), "the other transaction never took its locks"
        assert holder.error is None, holder.error
        yield holder
    finally:
        release.set()
        holder.wait(10)


def until_waiting_or_done(thread, wait: float = 30) -> None:
    """Return once a backend of the test database waits for an advisory lock, or ``thread``
    has ended."""
    from django.db import connection

    deadline = time.monotonic() + wait
    while thread.is_alive():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'advisory' "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            )
            if cursor.fetchone()[0]:
                return
        assert time.monotonic() < deadline, "the request neither waited nor ended"
        time.sleep(0.02)


def requested_while_held(tenant_id, hold, request, wait: float = 30):
    """Return what ``request()`` returned, called on another thread while ``hold()``'s
    transaction (``held_in_another_transaction``) holds its locks, which it lets go once the
    request waits for one of them (or has ended: then it did not wait). For transactional
    tests of a request that waited for another transaction's locks."""
    with held_in_another_transaction(tenant_id, hold):
        thread = in_thread(request)
        until_waiting_or_done(thread, wait)
    return thread.outcome(wait)


def episode_aged(tenant, age: timedelta):
    """An episode of a new subject of ``tenant``, written ``age`` ago (the retention sweep's
    episodic rule deletes it once ``age`` passes the tenant's ``episodic_days``)."""
    created = timezone.now() - age
    return MemoryFactory(
        subject=SubjectFactory(tenant=tenant),
        memory_type=MemoryType.EPISODE,
        memory_class=MemoryClass.EPISODIC,
        created_at=created,
        valid_from=created,
    )


def idempotency_record(tenant, expires_at):
    """An idempotency record of a new agent of ``tenant`` that expires at ``expires_at`` (the
    retention sweep's step 4 deletes it once that has passed)."""
    return IdempotencyRecord.objects.create(
        tenant=tenant,
        agent=AgentFactory(tenant=tenant),
        key_digest="0" * 64,
        endpoint="memories",
        fingerprint="0" * 64,
        status_code=201,
        expires_at=expires_at,
    )


def eval_file(name: str) -> Path:
    folder = Path(settings.MEMLEDGER_EVAL_DATA_DIRS[0])
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def written_and_deleted(tenant, content: str, *, subject: str, key: str) -> str:
    """Tenant ``tenant``'s agent writes the memory ``content`` through the API (accepted) and
    asks for its deletion; return the deletion's operation id, for the test to run it."""
    api = client_for(AgentFactory(tenant=tenant))
    written = api.post(
        "/api/v1/memories",
        write_body(
            subject=subject, memory_type="project_constraint", memory_key=key, content=content
        ),
        format="json",
    )
    assert written.status_code == 201, written.content
    assert written.json()["decision"] == "accepted", written.content
    deleted = api.delete(f"/api/v1/memories/{written.json()['memory']['id']}")
    assert deleted.status_code == 202, deleted.content
    return deleted.json()["operation_id"]


def seed_everywhere(subject, memories):
    """Put ``memories`` in every derived store: events, a trace, an export, an eval file, cache."""
    tenant_id = subject.tenant_id
    for memory in memories:
        MemoryEvent.objects.create(
            tenant_id=tenant_id,
            memory_id=memory.id,
            action=MemoryEvent.Action.CREATED,
            actor_type="agent",
            details={
                "note": memory.content,
                "successor": str(uuid.uuid4()),
                "rule_codes": ["admitted", "pii.email"],
            },
        )
    trace = RetrievalTrace.objects.create(
        tenant_id=tenant_id,
        subject=subject,
        mode="task",
        cited_ids=[m.id for m in memories],
        selected_ids=[memories[0].id],
    )
    export = export_create(principal=SystemPrincipal(tenant_id=tenant_id), subject_id=subject.id)
    path = eval_file(f"golden-{subject.id}.json")
    path.write_text(
        json.dumps(
            {
                "dataset": "prod-sample",
                "cases": [
                    {"query": "q", "expected_ids": [str(m.id) for m in memories]},
                    {"query": "other", "expected_ids": ["keep-me"]},
                ],
                "memories": [{"id": str(m.id), "content": m.content} for m in memories],
            }
        )
    )
    retrieval_cache.cache_set(
        tenant_id=tenant_id,
        subject_id=subject.id,
        key="package:q",
        value={"items": [m.content for m in memories]},
        memory_ids=[m.id for m in memories],
    )
    retrieval_cache.cache_set(
        tenant_id=tenant_id,
        subject_id=subject.id,
        key="profile",
        value={"count": len(memories)},
        memory_ids=[],
        namespace="summary",
    )
    return {"trace": trace, "export": export, "eval_path": path}


@pytest.fixture
def private_queue(settings):
    """Send the on-commit tasks to a queue of the test's own, which nobody consumes; drop what
    is left at the end; return its name."""
    from django.db import connection

    from memory_core.deletion.worker import WorkerProcess
    from tests.celery_worker import unique_queue

    queue = unique_queue("deletion")
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    yield queue
    WorkerProcess(db_name=connection.settings_dict["NAME"], queue=queue).purge()


@pytest.fixture
def journal(settings, tmp_path):
    """The test's own deletion journal (a file in its tmp_path), and the default backup
    retention, which decides what the sweep's catch-ups leave out."""
    settings.MEMLEDGER_DELETION_LEDGER = tmp_path / "deletion-ledger.jsonl"
    settings.MEMLEDGER_BACKUP_RETENTION_DAYS = 35
    return settings.MEMLEDGER_DELETION_LEDGER


@pytest.fixture
def owner(tenant):
    return SubjectFactory(tenant=tenant)


@pytest.fixture
def owner_principal(owner):
    return SubjectPrincipal(tenant_id=owner.tenant_id, subject_id=owner.id, user_id=1)


@pytest.fixture
def memories(owner):
    """Three memories of ``owner`` with vectors; the first is the one tests delete."""
    return [
        MemoryFactory(subject=owner, embedding=unit_vector(i), embedding_model="test")
        for i in range(3)
    ]


@pytest.fixture
def failed_memory_deletion(owner, owner_principal, memories, settings):
    """The first memory's deletion, dead-lettered by a misspelt evaluation folder that is
    then fixed, with ``owner`` seeded in every store: (the operation, ``seed_everywhere``'s
    answer)."""
    from memory_core.deletion.runner import deletion_run
    from memory_core.deletion.services import deletion_request

    seeded = seed_everywhere(owner, memories)
    configured = settings.MEMLEDGER_EVAL_DATA_DIRS
    settings.MEMLEDGER_DELETION_MAX_ATTEMPTS = 1
    settings.MEMLEDGER_EVAL_DATA_DIRS = ["/nonexistent/memledger-eval"]  # a misspelt setting
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    assert deletion_run(operation_id=operation.id) == "failed"
    settings.MEMLEDGER_EVAL_DATA_DIRS = configured  # fixed
    return operation, seeded
