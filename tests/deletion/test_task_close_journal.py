"""A task's close in the deletion journal: a restore from a backup taken before the close held
the task's state in use, and agents were given the closed task's decisions again.

Each memory a close expires appends a ``memory_task_closed`` line as the close commits (ids,
the task's digest, the versions it supersedes), the deletion sweep appends a line an append
missed, and ``replay_deletions`` expires the memory again, or the backup's version of its
chain still bound to the task. An expiry by ``valid_until`` owes no line: a restored row holds
its ``valid_until``, and the retention sweep expires it again.
"""

import pytest
from django.utils import timezone

from memory_core.deletion.ledger import task_digest
from memory_core.deletion.retention import memories_expire
from memory_core.models import Memory, MemoryEvent, ReviewItem, ScopeKind, Subject
from memory_core.principals import SystemPrincipal
from memory_core.services.tasks import task_close
from tests.deletion.journal import journal_lines, replay_since
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def _close(owner, task_id, capture):
    with capture(execute=True):
        return task_close(
            principal=SystemPrincipal(tenant_id=owner.tenant_id),
            user_id=owner.external_id,
            task_id=task_id,
        )


def _state_replaced(owner, task_id, *, by):
    """Store a task's state on ``progress`` for ``task_id``, replaced (superseded) by a newer
    version of the task ``by``; return both, older first."""
    older = MemoryFactory(
        subject=owner, memory_type="task_state", memory_class="working", memory_key="progress",
        task_id=task_id, status="superseded",
    )  # fmt: skip
    newer = MemoryFactory(
        subject=owner, memory_type="task_state", memory_class="working", memory_key="progress",
        task_id=by, supersedes=older, version=2,
    )  # fmt: skip
    return older, newer


def _task_memories(owner):
    """The task's state, a memory scoped to the task waiting for a reviewer (its item open),
    and a memory of another task."""
    state = MemoryFactory(
        subject=owner, memory_type="task_state", memory_class="working", task_id="ticket-4711"
    )
    scoped = MemoryFactory(
        subject=owner,
        status="pending_approval",
        scope_kind=ScopeKind.TASK,
        scope_ref="ticket-4711",
        content="User's refund goes to the account ending qz0042.",
    )
    item = ReviewItem.objects.create(
        tenant_id=owner.tenant_id, subject=owner, memory=scoped, kind="sensitive_write"
    )
    other = MemoryFactory(
        subject=owner, memory_type="task_state", memory_class="working", task_id="ticket-9"
    )
    return state, scoped, item, other


def test_a_task_closed_after_the_backup_is_closed_again_by_the_replay(
    owner, journal, django_capture_on_commit_callbacks
):
    state, scoped, item, other = _task_memories(owner)
    backup_time = timezone.now()

    closed = _close(owner, "ticket-4711", django_capture_on_commit_callbacks)

    assert sorted(closed.expired) == sorted([state.id, scoped.id])
    lines = journal_lines(journal)
    assert {line["expired_memory_id"] for line in lines} == {str(state.id), str(scoped.id)}
    for line in lines:
        assert (line["target"], line["reason_code"]) == ("memory_task_closed", "task_closed")
        assert line["task_sha256"] == task_digest("ticket-4711")
        assert (line["tenant_id"], line["subject_id"]) == (str(owner.tenant_id), str(owner.id))
    recorded = Memory.objects.filter(pk__in=closed.expired, revocation_journaled_at=None)
    assert not recorded.exists()
    # As the backup had them: the task's state in use, the scoped write waiting, its item open.
    Memory.objects.filter(pk=state.pk).update(status="active")
    Memory.objects.filter(pk=scoped.pk).update(status="pending_approval")
    ReviewItem.objects.filter(pk=item.pk).update(state="open", resolution="", resolved_at=None)

    with django_capture_on_commit_callbacks(execute=True):
        result, err = replay_since(backup_time)

    assert (result["memories_task_closed"], result["memories_task_closed_skipped"]) == (2, {})
    assert err == ""
    # Journaled again as it commits, naming the same task: a restore of a backup taken after
    # this replay and before the next is replayed the same way.
    again = journal_lines(journal)[2:]
    assert {line["expired_memory_id"] for line in again} == {str(state.id), str(scoped.id)}
    assert {line["task_sha256"] for line in again} == {task_digest("ticket-4711")}
    statuses = dict(owner.memories.values_list("pk", "status"))
    assert statuses == {state.pk: "expired", scoped.pk: "expired", other.pk: "active"}
    item.refresh_from_db()
    assert (item.state, item.resolution) == ("resolved", "task_closed")
    replayed = MemoryEvent.objects.filter(actor_id="replay_deletions")
    assert sorted(replayed.values_list("memory_id", flat=True)) == sorted([state.id, scoped.id])
    assert {(e.action, e.reason_code) for e in replayed} == {("expired", "task_closed")}
    assert replay_since(backup_time)[0]["memories_task_closed"] == 0  # twice: nothing more


@pytest.mark.parametrize(("task", "expired"), [("ticket-4711", True), ("ticket-1", False)])
def test_the_replay_expires_the_backups_version_of_a_chain_if_bound_to_the_task(
    owner, journal, task, expired, django_capture_on_commit_callbacks
):
    """The version the close expired was written after the backup: the restored database
    holds the one it superseded, in use. That one is expired again if it is bound to the
    closed task, not if it is another task's (the newer version moved the key to this one)."""
    backed_up, newer = _state_replaced(owner, task, by="ticket-4711")
    backup_time = timezone.now()
    _close(owner, "ticket-4711", django_capture_on_commit_callbacks)
    [line] = journal_lines(journal)
    assert (line["expired_memory_id"], line["supersedes_ids"]) == (
        str(newer.id),
        [str(backed_up.id)],
    )
    # The restored database: the newer version unknown, the backed up one in use.
    Memory.objects.filter(pk=newer.pk).delete()
    Memory.objects.filter(pk=backed_up.pk).update(status="active")

    result, _ = replay_since(backup_time)

    assert result["memories_task_closed"] == int(expired)
    assert Memory.objects.get(pk=backed_up.pk).status == ("expired" if expired else "active")


def test_a_task_close_line_holds_ids_and_the_tasks_digest_only(
    owner, journal, django_capture_on_commit_callbacks
):
    """No content, key, hash, task id or external id: the journal outlives the memories'
    deletion, and a task's id is the agent's own words (a ticket, a customer's name)."""
    state, scoped, _, _ = _task_memories(owner)
    _close(owner, "ticket-4711", django_capture_on_commit_callbacks)

    text = journal.read_text()
    for private in ("ticket-4711", "qz0042", owner.external_id, state.memory_key,
                    scoped.content_hash, state.content_hash):  # fmt: skip
        assert private not in text
    for line in journal_lines(journal):
        assert set(line) == {
            "operation_id", "tenant_id", "subject_id", "target", "requested_at", "reason_code",
            "expired_memory_id", "task_sha256", "supersedes_ids", "tombstones", "written_at",
        }  # fmt: skip


def test_a_task_close_whose_append_failed_is_journaled_by_the_sweep(
    owner, journal, settings, django_capture_on_commit_callbacks
):
    from memory_core.tasks import deletion_sweep

    state, scoped, _, _ = _task_memories(owner)
    blocked = journal.parent / "not-a-folder"
    blocked.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = blocked / "deletion-ledger.jsonl"  # cannot be made
    _close(owner, "ticket-4711", django_capture_on_commit_callbacks)
    assert Memory.objects.filter(status="expired", revocation_journaled_at=None).count() == 2

    settings.MEMLEDGER_DELETION_LEDGER = journal  # the volume is back
    deletion_sweep(stale_seconds=0)
    deletion_sweep(stale_seconds=0)  # once only

    lines = journal_lines(journal)
    assert sorted(line["expired_memory_id"] for line in lines) == sorted(
        [str(state.id), str(scoped.id)]
    )
    assert {line["target"] for line in lines} == {"memory_task_closed"}
    assert not Memory.objects.filter(status="expired", revocation_journaled_at=None).exists()


def test_an_expiry_by_valid_until_owes_no_line(owner, journal):
    """The retention sweep's expiry is recorded as it is made, with no line; an expired row
    with no close (an import's, or one expired before migration 0031) is recorded by the
    deletion sweep, with no line either."""
    from memory_core.tasks import deletion_sweep

    past = timezone.now() - timezone.timedelta(hours=1)
    due = MemoryFactory(
        subject=owner, task_id="ticket-4711", valid_from=past - timezone.timedelta(hours=1),
        valid_until=past,
    )  # fmt: skip
    imported = MemoryFactory(subject=owner, task_id="ticket-4711", status="expired")

    assert memories_expire() == 1
    due.refresh_from_db()
    assert due.status == "expired" and due.revocation_journaled_at is not None
    deletion_sweep(stale_seconds=0)

    assert journal_lines(journal) == []
    assert Memory.objects.get(pk=imported.pk).revocation_journaled_at is not None


def test_a_memory_whose_subjects_deletion_is_queued_is_named_not_expired_again(
    owner, journal, django_capture_on_commit_callbacks
):
    state, _, _, _ = _task_memories(owner)
    backup_time = timezone.now()
    _close(owner, "ticket-4711", django_capture_on_commit_callbacks)
    Memory.objects.filter(pk=state.pk).update(status="active")
    Subject.objects.filter(pk=owner.pk).update(
        deletion_queued_at=timezone.now(), deletion_queued_by=1
    )

    result, err = replay_since(backup_time)

    assert result["memories_task_closed_skipped"] == {str(state.id): "subject_being_deleted"}
    assert "memory(ies) of a closed task not expired again" in err and str(state.id) in err
    assert Memory.objects.get(pk=state.pk).status == "active"


@pytest.mark.django_db(transaction=True)
def test_the_old_database_names_the_memories_its_tasks_closes_expired_since_the_backup(owner):
    """`--ledger-database` reads the old database's memories expired by a task's close since
    the backup, each with the task's digest and its chain; not one expired by valid_until, nor
    one closed before the backup."""
    from datetime import timedelta

    from django.db import connection

    from memory_core.deletion.replay import DATABASE_MARGIN, ledger_from_database

    backup_time = timezone.now()
    first, closed = _state_replaced(owner, "ticket-4711", by="ticket-4711")
    long_ago = MemoryFactory(subject=owner, scope_kind=ScopeKind.TASK, scope_ref="ticket-1")
    task_close(
        principal=SystemPrincipal(tenant_id=owner.tenant_id), user_id=owner.external_id,
        task_id="ticket-4711",
    )  # fmt: skip
    task_close(
        principal=SystemPrincipal(tenant_id=owner.tenant_id), user_id=owner.external_id,
        task_id="ticket-1",
    )  # fmt: skip
    before = backup_time - DATABASE_MARGIN - timedelta(minutes=1)
    Memory.objects.filter(pk=long_ago.pk).update(updated_at=before)  # in the backup
    past = timezone.now() - timedelta(minutes=5)
    MemoryFactory(subject=owner, valid_from=past - timedelta(hours=1), valid_until=past)
    assert memories_expire() == 1

    entries = ledger_from_database(dbname=connection.settings_dict["NAME"], since=backup_time)

    [line] = [e for e in entries if e["target"] == "memory_task_closed"]
    assert (line["expired_memory_id"], line["supersedes_ids"]) == (str(closed.id), [str(first.id)])
    assert (line["task_sha256"], line["subject_id"]) == (task_digest("ticket-4711"), str(owner.id))
    assert line["requested_at"] == Memory.objects.get(pk=closed.pk).updated_at.isoformat()


def test_a_line_expires_only_memories_bound_to_its_task(owner, journal):
    """A line read from a file names the memories and the task: one the restored database
    holds bound to no task (an empty task id's digest) or to another is left in use."""
    from memory_core.deletion.ledger import memory_task_close_entry
    from memory_core.deletion.replay import replay_deletions

    unbound = MemoryFactory(subject=owner)
    other = MemoryFactory(subject=owner, scope_kind=ScopeKind.TASK, scope_ref="ticket-9")
    lines = [
        memory_task_close_entry(
            memory_id=memory.id,
            tenant_id=owner.tenant_id,
            subject_id=owner.id,
            closed_at=timezone.now(),
            task_sha256=task_digest(task),
        )  # fmt: skip
        for memory, task in ((unbound, ""), (other, "ticket-4711"))
    ]

    result = replay_deletions(entries=lines)

    assert (result["memories_task_closed"], result["memories_task_closed_skipped"]) == (0, {})
    assert set(owner.memories.values_list("status", flat=True)) == {"active"}


def test_a_line_expires_by_the_task_id_what_a_close_expires_by_it(owner, journal):
    """Stop 57's audit of tasks found that a close expired every memory carrying the task's
    id, a global preference included. Its replay reads the same rule
    (``tasks.bound_to_task``): by the task id, a task state or decision is expired again, and
    a preference merely carrying it (named by a close's line from before) stays in use."""
    from memory_core.deletion.ledger import memory_task_close_entry
    from memory_core.deletion.replay import replay_deletions

    preference = MemoryFactory(subject=owner, task_id="ticket-4711")
    decision = MemoryFactory(
        subject=owner, memory_type="previous_decision", memory_class="episodic",
        task_id="ticket-4711",
    )  # fmt: skip
    lines = [
        memory_task_close_entry(
            memory_id=memory.id,
            tenant_id=owner.tenant_id,
            subject_id=owner.id,
            closed_at=timezone.now(),
            task_sha256=task_digest("ticket-4711"),
        )
        for memory in (preference, decision)
    ]

    result = replay_deletions(entries=lines)

    assert result["memories_task_closed"] == 1
    statuses = dict(owner.memories.values_list("pk", "status"))
    assert statuses == {preference.pk: "active", decision.pk: "expired"}


def test_a_task_closed_after_the_backup_has_its_backed_up_state_expired_by_the_replay(
    owner, journal, django_capture_on_commit_callbacks
):
    """Stop 58's audit of conflicts and tasks found that a close journaled only what it
    expired: the backup held ticket-1's state in use, ticket-2's write on the same key
    replaced it, and ticket-1's close, with nothing in use, wrote no line (ticket-2's names
    ticket-2); the replay left ticket-1's state in use. The close journals the versions bound
    to it that were replaced, and the replay expires the one the restored database holds."""
    backup_time = timezone.now()
    # In the backup: ticket-1's state, in use. After it: ticket-2's state on the same key
    # supersedes it, then both tasks are closed.
    backed_up, newer = _state_replaced(owner, "ticket-1", by="ticket-2")
    assert _close(owner, "ticket-1", django_capture_on_commit_callbacks).expired == []
    assert _close(owner, "ticket-2", django_capture_on_commit_callbacks).expired == [newer.id]
    replaced = [
        line for line in journal_lines(journal) if line["expired_memory_id"] == str(backed_up.id)
    ]
    assert [line["task_sha256"] for line in replaced] == [task_digest("ticket-1")]
    # The restored database: the newer version unknown, ticket-1's state in use.
    Memory.objects.filter(pk=newer.pk).delete()
    Memory.objects.filter(pk=backed_up.pk).update(status="active")

    result, _ = replay_since(backup_time)

    assert result["incomplete"] == {}
    assert Memory.objects.get(pk=backed_up.pk).status == "expired"


def test_a_replaced_versions_line_whose_append_failed_is_made_by_the_sweep(
    owner, journal, settings, django_capture_on_commit_callbacks
):
    """Until stop 59 the line of a replaced version a close named was appended as the close
    committed and, if that append failed, logged and never made again: the row stayed
    superseded and nothing said it owed a line, so a restore's replay left the closed task's
    state in use. The close marks the row (when, and the task's digest), and the deletion
    sweep appends the line an append missed, once."""
    from memory_core.tasks import deletion_sweep

    older, newer = _state_replaced(owner, "ticket-1", by="ticket-2")
    blocked = journal.parent / "not-a-folder"
    blocked.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = blocked / "deletion-ledger.jsonl"  # cannot be made
    assert _close(owner, "ticket-1", django_capture_on_commit_callbacks).expired == []
    marked = Memory.objects.get(pk=older.pk)
    assert (marked.status, marked.revocation_journaled_at) == ("superseded", None)
    assert marked.task_closed_sha256 == task_digest("ticket-1")
    assert marked.task_closed_at is not None

    settings.MEMLEDGER_DELETION_LEDGER = journal  # the volume is back
    deletion_sweep(stale_seconds=0)
    deletion_sweep(stale_seconds=0)  # once only

    [line] = journal_lines(journal)
    assert (line["target"], line["expired_memory_id"]) == ("memory_task_closed", str(older.id))
    assert line["task_sha256"] == task_digest("ticket-1")
    assert line["requested_at"] == marked.task_closed_at.isoformat()
    assert Memory.objects.get(pk=older.pk).revocation_journaled_at is not None
    assert Memory.objects.get(pk=newer.pk).revocation_journaled_at is None  # not named


def test_a_replaced_versions_line_is_recorded_as_the_close_commits_and_its_mark_deleted_with_it(
    owner, journal, django_capture_on_commit_callbacks
):
    """The line the close appends is recorded on the row, so the sweep appends no second one;
    a deletion of the memory clears the mark (the digest names the task) with the content."""
    from memory_core.deletion.stores import scrub_memories
    from memory_core.tasks import deletion_sweep

    older, _ = _state_replaced(owner, "ticket-1", by="ticket-2")
    _close(owner, "ticket-1", django_capture_on_commit_callbacks)
    assert [line["expired_memory_id"] for line in journal_lines(journal)] == [str(older.id)]
    assert Memory.objects.get(pk=older.pk).revocation_journaled_at is not None
    deletion_sweep(stale_seconds=0)
    assert len(journal_lines(journal)) == 1

    assert scrub_memories([older.pk]) == 1
    scrubbed = Memory.objects.get(pk=older.pk)
    assert (scrubbed.task_closed_at, scrubbed.task_closed_sha256) == (None, "")


def test_a_close_journals_no_replaced_version_the_agent_may_not_see(
    owner, journal, django_capture_on_commit_callbacks
):
    """The replaced versions a close journals are those it reads (stop 58): another agent's
    own, or one of a type the closing agent may not write, is not named, so a replay never
    expires what the close could not have."""
    from memory_core.principals import AgentPrincipal
    from tests.factories import AgentFactory

    closing, other = (AgentFactory(tenant=owner.tenant) for _ in range(2))
    rows = {}
    for name, agent, memory_type, memory_class in (
        ("own", closing, "task_state", "working"),
        ("private", other, "task_state", "working"),
        ("not_writable", closing, "previous_decision", "episodic"),
    ):
        old = MemoryFactory(
            subject=owner, agent=agent, memory_type=memory_type, memory_class=memory_class,
            memory_key=f"progress.{name}", task_id="ticket-1", status="superseded",
        )  # fmt: skip
        MemoryFactory(
            subject=owner, agent=agent, memory_type=memory_type, memory_class=memory_class,
            memory_key=f"progress.{name}", task_id="ticket-2", supersedes=old, version=2,
        )  # fmt: skip
        rows[name] = old
    principal = AgentPrincipal(
        tenant_id=owner.tenant_id, agent_id=closing.id, agent_name=closing.name,
        write_types=frozenset({"task_state"}),
        read_types=frozenset({"task_state", "previous_decision"}),
    )  # fmt: skip

    with django_capture_on_commit_callbacks(execute=True):
        task_close(principal=principal, user_id=owner.external_id, task_id="ticket-1")

    assert [line["expired_memory_id"] for line in journal_lines(journal)] == [str(rows["own"].id)]


@pytest.mark.django_db(transaction=True)
def test_the_damaged_databases_ledger_names_a_replaced_version_whose_append_failed(
    owner, journal, settings
):
    """Stop 59's review found that the second replay, from the damaged database
    (``ledger_from_database``), read no replaced version a close had marked: a line whose
    append failed, the database lost before a sweep made it, was lost with it. It reads
    them by their mark (``replaced_memories_sql``)."""
    from datetime import timedelta

    from django.db import connection

    from memory_core.deletion.replay import ledger_from_database

    backup_time = timezone.now() - timedelta(minutes=1)
    older, _ = _state_replaced(owner, "ticket-1", by="ticket-2")
    blocked = journal.parent / "not-a-folder"
    blocked.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = blocked / "deletion-ledger.jsonl"  # append fails
    task_close(
        principal=SystemPrincipal(tenant_id=owner.tenant_id), user_id=owner.external_id,
        task_id="ticket-1",
    )  # fmt: skip
    assert Memory.objects.get(pk=older.pk).revocation_journaled_at is None

    entries = ledger_from_database(dbname=connection.settings_dict["NAME"], since=backup_time)

    closes = [e for e in entries if e["target"] == "memory_task_closed"]
    assert [(e["expired_memory_id"], e["task_sha256"]) for e in closes] == [
        (str(older.id), task_digest("ticket-1"))
    ]


@pytest.mark.django_db(transaction=True)
def test_a_close_does_not_mark_a_replaced_version_a_tenant_deletion_scrubbed_meanwhile(
    owner, journal, private_queue, monkeypatch
):
    """Stop 59's review found that a close marked the replaced versions it had read by id
    alone: a whole tenant's deletion, which takes no subject's lock, committed between the
    read and the mark, and the mark wrote the task's digest into the scrubbed row, which the
    primary step's verification (``ROW_STATS_SQL``) did not read. Only a row still
    superseded is marked, and the verification reads the mark as content."""
    import threading

    from memory_core.deletion.services import tenant_deletion_request
    from memory_core.deletion.stores import _dirty
    from memory_core.rls import tenant_scope
    from memory_core.services import tasks as task_service
    from tests.threads import in_thread

    older, _ = _state_replaced(owner, "ticket-1", by="ticket-2")
    reached, go = threading.Event(), threading.Event()
    real_digest = task_service.task_digest

    def paused_digest(task_id):  # called between the read of the rows and their mark
        reached.set()
        assert go.wait(30)
        return real_digest(task_id)

    monkeypatch.setattr(task_service, "task_digest", paused_digest)

    def closing():
        with tenant_scope(owner.tenant_id):  # as a request of the tenant acts
            return task_close(
                principal=SystemPrincipal(tenant_id=owner.tenant_id),
                user_id=owner.external_id,
                task_id="ticket-1",
            )

    close = in_thread(closing, released=[reached])
    assert reached.wait(60), "the close never reached its mark"
    tenant_deletion_request(tenant_id=owner.tenant_id)  # commits: nothing of it waits
    go.set()
    close.outcome()

    row = Memory.objects.get(pk=older.pk)
    assert (row.status, row.task_closed_sha256, row.task_closed_at) == ("deleted", "", None)
    assert not Memory.objects.filter(pk=older.pk).filter(_dirty()).exists()


@pytest.mark.parametrize("by", ["ticket-1", "ticket-2"])
def test_closing_a_task_twice_changes_nothing_more(
    owner, journal, by, django_capture_on_commit_callbacks
):
    """Stop 62's audit of tasks found that closing a task twice changed something more,
    against docs/api.md ("closing twice changes nothing more"): ``_journal_replaced`` took a
    superseded version of the task as covered only if its successor was among the rows this
    close expired, so every further close marked it again (``task_closed_at`` moved,
    ``revocation_journaled_at`` reset) and appended another ``memory_task_closed`` line. A
    version whose successor an earlier close of the task expired (``ticket-1``: that line's
    chain names it), or that an earlier close of the task marked (``ticket-2`` replaced it:
    its own line), is covered now: a repeated close touches no row and appends no line."""
    older, newer = _state_replaced(owner, "ticket-1", by=by)
    first = _close(owner, "ticket-1", django_capture_on_commit_callbacks)
    assert first.expired == ([newer.pk] if by == "ticket-1" else [])
    lines = journal_lines(journal)
    assert len(lines) == 1
    marks = Memory.objects.values_list("task_closed_at", "revocation_journaled_at")
    marked = marks.get(pk=older.pk)

    for _ in range(2):  # and every further close
        assert _close(owner, "ticket-1", django_capture_on_commit_callbacks).expired == []
        assert journal_lines(journal) == lines  # no new line
        assert marks.get(pk=older.pk) == marked
