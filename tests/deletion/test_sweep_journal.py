"""The deletion sweep's journal catch-up: lines made in batches, old ones skipped, one error.

A review measured 14 queries and one fsync a row (two tenant transactions, the chain, the
event): 500 memories revoked before migration 0027 took 7,001 queries and 6.3 s a sweep, and
a journal that could not be written logged a stack trace a row, up to 1,500 a sweep.
"""

import logging
import os
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory_core.deletion.ledger import ledger_read, queued_operation_id
from memory_core.deletion.replay import replay_deletions
from memory_core.deletion.services import queued_subject_deletion_run, subject_deletion_queue
from memory_core.models import Agent, ApiKey, DeletionOperation, Memory, MemoryEvent, Subject
from memory_core.services.api_keys import api_key_create
from memory_core.tasks import deletion_sweep
from tests.deletion.journal import journal_lines
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory, TenantFactory

pytestmark = pytest.mark.django_db


def _event(memory, action, reason_code, at):
    event = MemoryEvent.objects.create(
        tenant_id=memory.tenant_id,
        memory_id=memory.pk,
        action=action,
        actor_type="system",
        actor_id="test",
        reason_code=reason_code,
    )
    MemoryEvent.objects.filter(pk=event.pk).update(created_at=at)


def _revoked_before_0027(count: int, *, days_ago: float = 2) -> dict:
    """Make ``count`` memories of two tenants revoked ``days_ago`` with no journal line
    recorded, every third the head of a three-version chain, every other its consent
    withdrawn (after a plain revoke's event); return what each one's line must say."""
    subjects = [SubjectFactory(tenant=TenantFactory()) for _ in range(2)]
    moment = timezone.now() - timedelta(days=days_ago)
    expected = {}
    for number in range(count):
        subject = subjects[number % 2]
        chain = []
        if number % 3 == 0:
            first = MemoryFactory(subject=subject, status="superseded")
            second = MemoryFactory(
                subject=subject, status="superseded", supersedes=first, version=2
            )
            chain = [second.pk, first.pk]  # nearest first
            memory = MemoryFactory(subject=subject, supersedes=second, version=3)
        else:
            memory = MemoryFactory(subject=subject)
        action, reason = "revoked", "revoked"  # no event (an import's): a plain revoke
        if number % 2:
            _event(memory, "revoked", "conflict_lost", moment - timedelta(minutes=2))
            _event(memory, "consent_withdrawn", "consent_withdrawn", moment)
            action, reason = "consent_withdrawn", "consent_withdrawn"
        elif number % 4 == 2:
            _event(memory, "revoked", "conflict_lost", moment)
            reason = "conflict_lost"
        expected[str(memory.pk)] = {
            "tenant_id": str(subject.tenant_id),
            "subject_id": str(subject.pk),
            "action": action,
            "reason_code": reason,
            "supersedes_ids": [str(pk) for pk in chain],
            "requested_at": moment.isoformat(),
        }
    Memory.objects.filter(pk__in=list(expected)).update(status="revoked", updated_at=moment)
    return expected


@pytest.fixture
def fsyncs(monkeypatch):
    """The file descriptors os.fsync is called with from here on (it still syncs them)."""
    called = []
    fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (called.append(fd), fsync(fd)))
    return called


@pytest.mark.parametrize("count", [6, 60])
def test_the_sweep_journals_old_revocations_in_a_few_queries_and_one_fsync(journal, count, fsyncs):
    expected = _revoked_before_0027(count)

    with CaptureQueriesContext(connection) as queries:
        deletion_sweep(stale_seconds=0)

    # The whole sweep (stuck deletions, keys, agents, the platform scope's settings, the
    # logins' owed lines: their prune and their read): the same for 6 memories as for 60 (it
    # was 14 a memory).
    assert len(queries.captured_queries) <= 23
    assert len(fsyncs) == 1
    lines = journal_lines(journal)
    assert len(lines) == count
    got = {
        line["revoked_memory_id"]: {key: line[key] for key in expected[line["revoked_memory_id"]]}
        for line in lines
    }
    assert got == expected
    assert {line["target"] for line in lines} == {"memory_revoked"}
    assert not Memory.objects.filter(status="revoked", revocation_journaled_at=None).exists()

    deletion_sweep(stale_seconds=0)  # once only
    assert len(journal_lines(journal)) == count


def test_the_sweep_takes_the_oldest_first_and_at_most_its_limit(journal):
    from memory_core.services.revocations import memory_revocations_journal

    older = _revoked_before_0027(3, days_ago=3)
    newer = _revoked_before_0027(3, days_ago=2)

    assert memory_revocations_journal(limit=4) == 4
    assert memory_revocations_journal(limit=4) == 2
    ids = [line["revoked_memory_id"] for line in journal_lines(journal)]
    assert set(ids[:3]) == set(older) and set(ids[3:]) == set(newer)


def test_an_action_older_than_the_oldest_backup_kept_gets_no_line(journal, agent):
    """Every backup kept holds it already: its line would replay nothing. It is left
    unrecorded, and the sweep does not read it again (its index range starts after it)."""
    old = _revoked_before_0027(2, days_ago=37)  # 35 days of backups, and a day's margin
    recent = _revoked_before_0027(2, days_ago=35)
    keys = {days: api_key_create(agent=agent)[0] for days in (37, 35)}
    for days, key in keys.items():
        ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now() - timedelta(days=days))
    agents = {days: AgentFactory(tenant=agent.tenant) for days in (37, 35, None)}
    for days, row in agents.items():
        at = None if days is None else timezone.now() - timedelta(days=days)
        Agent.objects.filter(pk=row.pk).update(is_active=False, deactivated_at=at)

    deletion_sweep(stale_seconds=0)

    lines = journal_lines(journal)
    assert {line["revoked_memory_id"] for line in lines if "revoked_memory_id" in line} == set(
        recent
    )
    assert [line["revoked_key_id"] for line in lines if "revoked_key_id" in line] == [
        str(keys[35].pk)
    ]
    deactivated = {line["deactivated_agent_id"] for line in lines if "deactivated_agent_id" in line}
    assert deactivated == {str(agents[35].pk), str(agents[None].pk)}  # when unknown: journaled
    unrecorded = Memory.objects.filter(status="revoked", revocation_journaled_at=None)
    assert {str(pk) for pk in unrecorded.values_list("pk", flat=True)} == set(old)
    assert ApiKey.objects.get(pk=keys[37].pk).revocation_journaled_at is None
    assert Agent.objects.get(pk=agents[37].pk).deactivation_journaled_at is None

    deletion_sweep(stale_seconds=0)
    assert len(journal_lines(journal)) == len(lines)


def test_a_journal_that_cannot_be_written_is_logged_once_a_sweep(journal, settings, agent, caplog):
    blocked = journal.parent / "not-a-folder"
    blocked.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = blocked / "deletion-ledger.jsonl"  # cannot be made
    _revoked_before_0027(5)
    for _ in range(2):
        key, _ = api_key_create(agent=agent)
        ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())
    Agent.objects.filter(pk=agent.pk).update(is_active=False, deactivated_at=timezone.now())
    _rejected_before_0028(3, days_ago=1)

    with caplog.at_level(logging.INFO):
        deletion_sweep(stale_seconds=0)

    [error] = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert "journal append of 11 governance line(s) failed" in error.getMessage()
    assert str(blocked) in error.getMessage()
    assert isinstance(error.exc_info[1], OSError)  # the first one's, with its stack trace
    assert not any("journaled" in record.getMessage() for record in caplog.records)
    assert Memory.objects.filter(status="revoked", revocation_journaled_at=None).count() == 5
    assert Memory.objects.filter(status="rejected", revocation_journaled_at=None).count() == 3

    settings.MEMLEDGER_DELETION_LEDGER = journal  # the volume is back
    caplog.clear()
    with caplog.at_level(logging.INFO):
        deletion_sweep(stale_seconds=0)
    assert len(journal_lines(journal)) == 11
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]


def _rejected_before_0028(count: int, *, days_ago: float) -> set[str]:
    """Make ``count`` sensitive writes of two tenants rejected ``days_ago`` with no journal
    line recorded; return their ids."""
    subjects = [SubjectFactory(tenant=TenantFactory()) for _ in range(2)]
    moment = timezone.now() - timedelta(days=days_ago)
    ids = {
        str(MemoryFactory(subject=subjects[n % 2], status="pending_approval").pk)
        for n in range(count)
    }
    Memory.objects.filter(pk__in=list(ids)).update(status="rejected", updated_at=moment)
    return ids


@pytest.mark.parametrize("count", [4, 40])
def test_the_sweep_journals_rejections_since_the_oldest_backup_in_a_few_queries(
    journal, count, fsyncs
):
    """Writes rejected before rejections were journaled (migration 0028), or whose append
    failed: one line each, in one write, but none for one rejected before the oldest backup
    kept (every backup holds it rejected)."""
    old = _rejected_before_0028(2, days_ago=37)  # 35 days of backups, and a day's margin
    recent = _rejected_before_0028(count, days_ago=2)

    with CaptureQueriesContext(connection) as queries:
        deletion_sweep(stale_seconds=0)

    assert len(queries.captured_queries) <= 23
    assert len(fsyncs) == 1
    lines = journal_lines(journal)
    assert {line["rejected_memory_id"] for line in lines} == recent
    assert {line["target"] for line in lines} == {"memory_rejected"}
    unrecorded = Memory.objects.filter(status="rejected", revocation_journaled_at=None)
    assert {str(pk) for pk in unrecorded.values_list("pk", flat=True)} == old

    deletion_sweep(stale_seconds=0)  # once only
    assert len(journal_lines(journal)) == count


@pytest.mark.parametrize("count", [3, 30])
def test_the_sweep_journals_grants_and_expiries_since_the_oldest_backup_in_a_few_queries(
    journal, agent, count, fsyncs
):
    """Grants and expiries whose append failed: one line each, one write a kind, with the
    values the row holds; none for one set before the oldest backup kept."""

    def set_days_ago(days: float, number: int) -> tuple[list, list]:
        moment = timezone.now() - timedelta(days=days)
        agents = [AgentFactory(tenant=TenantFactory()) for _ in range(number)]
        Agent.objects.filter(pk__in=[a.pk for a in agents]).update(
            read_types=["incident"], max_sensitivity="personal", grant_changed_at=moment
        )
        keys = [api_key_create(agent=agent)[0] for _ in range(number)]
        ApiKey.objects.filter(pk__in=[k.pk for k in keys]).update(
            expires_at=moment + timedelta(days=60), expiry_changed_at=moment
        )
        return [str(a.pk) for a in agents], [str(k.pk) for k in keys]

    old_agents, old_keys = set_days_ago(37, 2)  # 35 days of backups, and a day's margin
    agents, keys = set_days_ago(2, count)

    with CaptureQueriesContext(connection) as queries:
        deletion_sweep(stale_seconds=0)

    assert len(queries.captured_queries) <= 24  # whatever the count: a read of each kind
    assert len(fsyncs) == 2  # one a kind
    lines = journal_lines(journal)
    grants = [line for line in lines if line["target"] == "agent_grant_set"]
    assert sorted(line["grant_agent_id"] for line in grants) == sorted(agents)
    assert {(tuple(line["read_types"]), line["max_sensitivity"]) for line in grants} == {
        (("incident",), "personal")
    }
    expiries = [line for line in lines if line["target"] == "api_key_expiry_set"]
    assert sorted(line["expiry_key_id"] for line in expiries) == sorted(keys)
    assert len(lines) == 2 * count
    unrecorded = Agent.objects.filter(grant_changed_at__isnull=False, grant_journaled_at=None)
    assert sorted(str(pk) for pk in unrecorded.values_list("pk", flat=True)) == sorted(old_agents)
    unrecorded = ApiKey.objects.filter(expiry_changed_at__isnull=False, expiry_journaled_at=None)
    assert sorted(str(pk) for pk in unrecorded.values_list("pk", flat=True)) == sorted(old_keys)

    deletion_sweep(stale_seconds=0)  # once only
    assert len(journal_lines(journal)) == 2 * count


def _queued_while_the_journal_is_missing(owner, principal, journal, settings, on_commit) -> None:
    """Queue the deletion of everything about ``owner`` while the journal cannot be written
    (its folder is a file), so that the queued line's append fails; then give the journal
    back (the volume is back)."""
    blocked = journal.parent / "not-a-folder"
    blocked.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = blocked / "deletion-ledger.jsonl"  # cannot be made
    with on_commit(execute=True):
        subject_deletion_queue(principal=principal, subject_id=owner.id)
    settings.MEMLEDGER_DELETION_LEDGER = journal


def test_a_queued_deletion_whose_append_failed_is_journaled_by_the_sweep(
    owner,
    owner_principal,
    memories,
    journal,
    settings,
    private_queue,
    django_capture_on_commit_callbacks,
):
    """A "delete everything" queued for a worker (202) whose journal append failed (the
    journal's volume missing for a moment) was only logged: a queued mark had no
    ``*_journaled_at`` and the sweep no catch-up for it, so until a worker made the request
    (hours while workers are down) the journal lacked it, and a restore from a backup taken
    before the request forgot it, the person's memories back in use (stop 56's audit of
    backups). The sweep now appends it once the journal can be written, once."""
    backup_time = timezone.now()
    _queued_while_the_journal_is_missing(
        owner, owner_principal, journal, settings, django_capture_on_commit_callbacks
    )
    queued = Subject.objects.get(pk=owner.pk)
    assert queued.deletion_queued_at is not None and queued.deletion_queued_journaled_at is None

    deletion_sweep(stale_seconds=0)  # no worker consumes the queue: the task is sent again
    deletion_sweep(stale_seconds=0)
    [line] = journal_lines(journal)  # once
    assert line["operation_id"] == str(queued_operation_id(owner.pk, queued.deletion_queued_at))
    assert line["queued"] is True and line["tombstones"] == []
    assert Subject.objects.get(pk=owner.pk).deletion_queued_journaled_at is not None

    # The database is lost; the backup taken before the request is restored (no mark).
    Subject.objects.filter(pk=owner.pk).update(
        deletion_queued_at=None, deletion_queued_by=None, deletion_queued_journaled_at=None
    )
    for _ in range(2):  # replaying twice changes nothing more
        result = replay_deletions(entries=ledger_read(since=backup_time))
        assert result["incomplete"] == {}, result
        statuses = set(Memory.objects.filter(subject=owner).values_list("status", flat=True))
        assert statuses == {"deleted"}, result
    assert DeletionOperation.objects.filter(subject=owner).count() == 1


def test_a_queued_deletion_a_worker_made_owes_no_line_to_the_sweep(
    owner,
    owner_principal,
    memories,
    journal,
    settings,
    private_queue,
    django_capture_on_commit_callbacks,
):
    """A queued mark's line is recorded on the mark and cleared with it: once the worker made
    the request (its operation journaled with its tombstones, under the same id), the sweep
    appends nothing for the mark whose append failed."""
    _queued_while_the_journal_is_missing(
        owner, owner_principal, journal, settings, django_capture_on_commit_callbacks
    )
    with django_capture_on_commit_callbacks(execute=True):
        operation = queued_subject_deletion_run(owner.pk)

    deletion_sweep(stale_seconds=0)

    [line] = journal_lines(journal)
    assert line["operation_id"] == str(operation.pk) and "queued" not in line
    assert len(line["tombstones"]) == len(memories)
    assert Subject.objects.get(pk=owner.pk).deletion_queued_journaled_at is None
