"""Stop 70's fourth review of eb810d06 (a retention operation's lock waits bounded at
``SUBJECT_LOCK_TIMEOUT_MS``; a subject whose lock or rows are held is busy, skipped, and
retried by the next run).

1. A lock every subject of a tenant waits for (the tenant's active policy version, which a
   publish holds as it deactivates it, ``_active_version_held``; the tenant's row, which a
   whole tenant's deletion holds ``FOR UPDATE`` and every operation's COMMIT checks) made
   each of the tenant's subjects wait its 2 s and be named busy, one after the other: a
   batch of thousands of subjects spent the run's time there, and the later tenants' due
   memories waited for the next run. Once a subject is busy, the sweep now tries those
   locks (``_tenant_held``, ``NOWAIT``): held, the tenant's part ends for the run (the next
   retries it); free, the subject alone was busy and the tenant's others go on.
2. A lock timeout at the operation's COMMIT (its deferred foreign-key check of the subject's
   row) writes nothing: no operation, tombstone, event, scrub or journal line (the
   after-commit hooks do not run), and the session's ``lock_timeout`` is its own again
   (checked here; it was so).
"""

import time
from datetime import timedelta

import pytest
from django.db import connection

from memory_core.clock import database_now
from memory_core.deletion import retention
from memory_core.locks import subject_deletion_lock
from memory_core.models import (
    DeletionOperation,
    Memory,
    MemoryEvent,
    PolicyVersion,
    Subject,
    Tenant,
    Tombstone,
)
from memory_core.rls import platform_scope
from tests.deletion.conftest import episode_aged, held_in_another_transaction

pytestmark = pytest.mark.django_db(transaction=True)

# A shorter bound than the real one, for the tests' time; read by ``_rule_delete`` as it runs.
TIMEOUT_MS = 400


@pytest.mark.timeout(60)
def test_a_tenant_whose_active_version_is_held_is_left_after_its_first_busy_subject(
    tenant, monkeypatch
):
    monkeypatch.setattr(retention, "SUBJECT_LOCK_TIMEOUT_MS", TIMEOUT_MS)
    episodes = [episode_aged(tenant, timedelta(days=91 + n)) for n in range(8)]

    # What a publish holds from its deactivation of the version to its commit: every
    # operation's ``FOR SHARE`` of the tenant's active version waits for it.
    def version_held():
        PolicyVersion.objects.select_for_update(no_key=True).filter(
            tenant=tenant, is_active=True
        ).values_list("pk").get()

    busy: list = []
    with held_in_another_transaction(tenant.id, version_held):
        started = time.monotonic()
        with platform_scope("test"):
            retention.retention_delete(limit=100, deadline=time.monotonic() + 60, busy=busy)
        took = time.monotonic() - started

    assert len(busy) == 1, busy  # all eight until the review, one after the other
    assert took < 3 * TIMEOUT_MS / 1000, took
    assert not Tombstone.objects.filter(tenant_id=tenant.id).exists()

    with platform_scope("test"):  # the version free: the next run deletes them all
        operations = retention.retention_delete(limit=100, deadline=time.monotonic() + 60)
    assert sorted(m for op in operations for m in op.memory_ids) == sorted(e.id for e in episodes)


@pytest.mark.timeout(60)
def test_a_tenant_whose_row_is_held_after_its_turn_is_left_after_its_first_busy_subject(
    tenant, monkeypatch
):
    """A whole tenant's deletion that takes the tenant's row ``FOR UPDATE`` after the turn was
    taken: each operation's COMMIT checks that row (its foreign keys) and times out."""
    monkeypatch.setattr(retention, "SUBJECT_LOCK_TIMEOUT_MS", TIMEOUT_MS)
    for n in range(6):
        episode_aged(tenant, timedelta(days=91 + n))
    with platform_scope("test"):
        document, version = retention._active_policies()[tenant.id]

    def row_held():
        Tenant.objects.select_for_update().filter(pk=tenant.id).values_list("pk").get()

    made: list = []
    busy = retention._Busy()
    now, deadline = database_now(), time.monotonic() + 60
    with held_in_another_transaction(tenant.id, row_held):
        with platform_scope("test"):
            retention._tenant_retention_delete(
                tenant.id, document, version, now, 100, made, deadline, busy=busy
            )

    assert made == [] and len(busy.subjects) == 1 and busy.tenant_held  # six until the review
    assert not Tombstone.objects.filter(tenant_id=tenant.id).exists()


@pytest.mark.timeout(60)
def test_subjects_busy_on_their_own_leave_the_tenants_others_to_be_deleted(tenant, monkeypatch):
    """Three subjects whose locks their own deletions hold, the oldest due, are skipped; the
    tenant's fourth is deleted in the same run (a count of busy subjects in a row would have
    left it, at every run while those deletions lasted)."""
    monkeypatch.setattr(retention, "SUBJECT_LOCK_TIMEOUT_MS", TIMEOUT_MS)
    held = [episode_aged(tenant, timedelta(days=100 - n)) for n in range(3)]
    free = episode_aged(tenant, timedelta(days=91))

    def subjects_held():
        for episode in held:
            subject_deletion_lock(episode.subject_id)

    busy: list = []
    with held_in_another_transaction(tenant.id, subjects_held):
        with platform_scope("test"):
            operations = retention.retention_delete(
                limit=100, deadline=time.monotonic() + 60, busy=busy
            )

    assert [op.memory_ids for op in operations] == [[free.id]]
    assert sorted(b["subject_id"] for b in busy) == sorted(str(e.subject_id) for e in held)


@pytest.mark.timeout(60)
def test_a_subject_busy_at_its_operations_commit_leaves_nothing_behind(
    tenant, journal, monkeypatch
):
    monkeypatch.setattr(retention, "SUBJECT_LOCK_TIMEOUT_MS", TIMEOUT_MS)
    episode = episode_aged(tenant, timedelta(days=91))
    content = Memory.objects.get(pk=episode.id).content
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '7s'")  # the session's own

    # A whole subject's deletion holds the subject's row; the operation's COMMIT checks it
    # (its foreign keys are DEFERRABLE INITIALLY DEFERRED) and times out there.
    def row_held():
        Subject.objects.select_for_update().get(pk=episode.subject_id)

    busy: list = []
    try:
        with held_in_another_transaction(tenant.id, row_held):
            with platform_scope("test"):
                made = retention.retention_delete(limit=100, busy=busy)
        with connection.cursor() as cursor:
            cursor.execute("SHOW lock_timeout")
            after = cursor.fetchone()[0]
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")

    assert made == [] and busy == [
        {"tenant_id": str(tenant.id), "subject_id": str(episode.subject_id)}
    ]
    assert after == "7s"  # the operation's bound ended with its transaction
    assert not DeletionOperation.objects.filter(tenant_id=tenant.id).exists()
    assert not Tombstone.objects.filter(memory_id=episode.id).exists()
    assert not MemoryEvent.objects.filter(
        memory_id=episode.id, action=MemoryEvent.Action.DELETION_REQUESTED
    ).exists()
    assert Memory.objects.get(pk=episode.id).content == content  # not scrubbed
    assert not journal.exists() or str(episode.id) not in journal.read_text()
