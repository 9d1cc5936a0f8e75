"""Deletions racing each other (one export and evaluation file) and racing a retrieval."""

import json
import os
import threading
import time

import pytest
from django.db import connection, transaction

from memory_core import files as memledger_files
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.exports import export_create, export_path
from memory_core.models import DeletionOperation, RetrievalTrace
from memory_core.principals import SystemPrincipal
from memory_core.retrieval import pipeline
from memory_core.retrieval.types import RetrievalRequest
from memory_core.rls import tenant_scope
from tests.deletion.conftest import eval_file, journal_line
from tests.factories import MemoryFactory, SubjectFactory
from tests.threads import errors_of, in_thread, someone_waits_for_a_lock

pytestmark = pytest.mark.django_db(transaction=True)


def test_concurrent_runs_never_put_back_what_another_removed(owner, private_queue):
    memories = [MemoryFactory(subject=owner) for _ in range(24)]
    system = SystemPrincipal(tenant_id=owner.tenant_id)
    export = export_create(principal=system, subject_id=owner.id)
    golden = eval_file(f"concurrency-{owner.id}.json")
    golden.write_text(json.dumps({"cases": [{"expected_ids": [str(m.id)]} for m in memories]}))
    operations = [deletion_request(principal=system, memory_id=m.id) for m in memories]

    barrier = threading.Barrier(4)

    def worker(batch):
        barrier.wait()
        # As the Celery task runs it: in the operation's tenant (row-level security).
        with tenant_scope(owner.tenant_id):
            return [deletion_run(operation_id=operation.id) for operation in batch]

    threads = [in_thread(lambda batch=operations[i::4]: worker(batch)) for i in range(4)]
    assert errors_of(*threads, timeout=120) == []
    assert sorted(status for thread in threads for status in thread.result) == ["completed"] * 24
    exported = export_path(export).read_text()
    golden_text = golden.read_text()
    assert [str(m.id) for m in memories if str(m.id) in exported] == []
    assert [str(m.id) for m in memories if str(m.id) in golden_text] == []
    golden.unlink()


def _as_request(tenant_id, work):
    """Return ``work`` run as an API request runs it: for the tenant (row-level security),
    in one transaction (``ATOMIC_REQUESTS``)."""

    def run():
        with tenant_scope(tenant_id), transaction.atomic():
            return work()

    return run


def _until_it_waits(thread, waits=someone_waits_for_a_lock) -> None:
    """Return once ``thread`` has ended or someone waits for a lock (30 s at most)."""
    deadline = time.monotonic() + 30
    while thread.is_alive() and not waits():
        assert time.monotonic() < deadline
        time.sleep(0.02)


def _paused_retrieval(world, tenant, monkeypatch):
    """Return ``(fetched, go, request)``: ``request`` runs an agent's retrieval (in its own
    transaction, as ATOMIC_REQUESTS does) that sets ``fetched`` once its candidates are read
    and waits for ``go`` before it writes its trace."""
    fetched, go = threading.Event(), threading.Event()
    real = pipeline.filters.apply_hard_filters

    def paused(found, **kwargs):  # the candidates are read; the trace is not written yet
        fetched.set()
        assert go.wait(60)
        return real(found, **kwargs)

    monkeypatch.setattr(pipeline.filters, "apply_hard_filters", paused)

    def request():
        with tenant_scope(tenant.id), transaction.atomic():
            return pipeline.retrieve(
                principal=world["principal"],
                request=RetrievalRequest(
                    query="Why did the atlas-api staging deploy fail?",
                    user_id="dana",
                    project_id="atlas",
                    repository_id="atlas-api",
                ),
            )

    return fetched, go, request


def test_a_retrieval_that_read_a_memory_before_its_deletion_leaves_no_trace_of_it(
    world, tenant, monkeypatch, private_queue
):
    target = world["memories"]["mine_incident"]
    fetched, go, agent_request = _paused_retrieval(world, tenant, monkeypatch)

    def delete():
        with tenant_scope(tenant.id):
            system = SystemPrincipal(tenant_id=tenant.id)
            operation = deletion_request(principal=system, memory_id=target.id)
            return operation, deletion_run(operation_id=operation.id)

    retrieval = in_thread(agent_request, name="retrieval")
    assert fetched.wait(60)
    deletion = in_thread(delete, name="deletion")
    # The deletion either finishes before the retrieval's trace exists (the race) or waits
    # for the retrieval to finish first.
    _until_it_waits(deletion, lambda: someone_waits_for_a_lock("advisory"))
    go.set()
    assert errors_of(retrieval, deletion) == []
    operation, status = deletion.result
    assert status == DeletionOperation.State.COMPLETED
    # The retrieval answered from what it read before the deletion...
    assert str(target.id) in [item.id for item in retrieval.result.items]
    # ...and its trace, written before the deletion went on, was scrubbed by it.
    with tenant_scope(tenant.id):
        assert not RetrievalTrace.objects.filter(cited_ids__overlap=[target.id]).exists()
        trace = RetrievalTrace.objects.get(pk=retrieval.result.trace_id)  # the others' uses
        assert str(target.id) not in json.dumps([trace.stages, trace.usage]).lower()
        assert operation.steps.get(store="traces").evidence["purged"] == {
            "deleted": 0,
            "scrubbed": 1,
        }


def test_a_retrieval_in_flight_during_a_replayed_deletion_leaves_no_trace_of_it(
    world, tenant, monkeypatch, private_queue
):
    """Replay after a restore took the rows' locks but not the subject's: a retrieval that
    had read the memory wrote its trace after the replayed traces step had verified there
    was none, so services had to stay stopped until a replay finished. It now waits for the
    subject's retrievals in flight, as a deletion request does."""
    from memory_core.deletion.replay import replay_deletions
    from memory_core.rls import platform_scope

    target = world["memories"]["mine_incident"]
    fetched, go, agent_request = _paused_retrieval(world, tenant, monkeypatch)
    entry = journal_line(
        3, tenant_id=tenant.id, target="memory", subject_id=target.subject_id,
        memory_ids=[target.id],
    )  # fmt: skip

    def replay():
        with platform_scope("replay_deletions"):
            return replay_deletions(entries=[entry])

    retrieval = in_thread(agent_request, name="retrieval")
    assert fetched.wait(60)
    replayer = in_thread(replay, name="replay")
    _until_it_waits(replayer, lambda: someone_waits_for_a_lock("advisory"))
    go.set()
    assert errors_of(retrieval, replayer) == []
    assert replayer.result["incomplete"] == {}, replayer.result
    assert str(target.id) in [item.id for item in retrieval.result.items]
    with tenant_scope(tenant.id):
        assert not RetrievalTrace.objects.filter(cited_ids__overlap=[target.id]).exists()


def test_a_write_in_flight_during_a_replayed_tenant_deletion_leaves_no_memory_of_it(
    tenant, private_queue
):
    """Replay of a tenant's line set ``deleted_at`` with an UPDATE (``FOR NO KEY UPDATE``),
    which does not wait for the key-share lock a transaction that already inserted a row of
    the tenant holds: the replay read the memories without that write's, completed, and the
    write then committed its memory, active and with its content, into the deleted tenant.
    It now locks the tenant row as the request does (``FOR UPDATE``) and waits for it."""
    from memory_core.deletion.replay import replay_deletions
    from memory_core.models import Memory
    from memory_core.rls import platform_scope
    from tests.factories import SubjectFactory

    subject = SubjectFactory(tenant=tenant)
    before = MemoryFactory(subject=subject)
    inserted, commit = threading.Event(), threading.Event()

    def write():
        made = MemoryFactory(subject=subject, content="The deploy key is in vault 7.")
        inserted.set()
        assert commit.wait(60)
        return made

    entry = journal_line(4, tenant_id=tenant.id, target="tenant", reason_code="tenant_deleted")

    def replay():
        with platform_scope("replay_deletions"):
            return replay_deletions(entries=[entry])

    writer = in_thread(_as_request(tenant.id, write), released=[inserted])
    assert inserted.wait(60)
    replayer = in_thread(replay, name="replay")
    # The replay either finishes without the write's memory (the race) or waits for it.
    _until_it_waits(replayer)
    commit.set()
    assert errors_of(writer, replayer) == []
    assert replayer.result["incomplete"] == {}, replayer.result
    with platform_scope("test: the tenant's memories"):
        rows = dict(Memory.objects.filter(tenant=tenant).values_list("pk", "status"))
    assert rows == {before.id: "deleted", writer.result.id: "deleted"}


def test_an_export_being_written_during_a_deletion_keeps_no_deleted_id(owner, private_queue):
    """The deletion waits for the export's transaction, then its exports step finds the row.

    Before the export took the subject's lock, the deletion completed while the export's
    transaction was still open, and the export row committed after it citing the deleted id.
    """
    from memory_core.models import Export
    from memory_core.principals import SubjectPrincipal

    target = MemoryFactory(subject=owner)
    MemoryFactory(subject=owner)
    user = SubjectPrincipal(tenant_id=owner.tenant_id, subject_id=owner.id, user_id=1)
    exported, go = threading.Event(), threading.Event()

    def portal_export():  # ExportView.post, inside the request's transaction (ATOMIC_REQUESTS)
        export = export_create(principal=user)
        exported.set()
        assert go.wait(60)
        return export

    def delete():
        with tenant_scope(owner.tenant_id):
            operation = deletion_request(principal=user, memory_id=target.id)
            return deletion_run(operation_id=operation.id)

    exporter = in_thread(_as_request(owner.tenant_id, portal_export), released=[exported])
    assert exported.wait(60)
    deleter = in_thread(delete)
    deleter.join(timeout=2)  # it waits for the export to commit (before: it completed here)
    go.set()
    assert errors_of(exporter, deleter) == []
    assert deleter.result == DeletionOperation.State.COMPLETED
    with tenant_scope(owner.tenant_id):
        row = Export.objects.get(pk=exporter.result.pk)
        assert target.id not in row.memory_ids
        assert str(target.id) not in export_path(row).read_text()


def test_retrievals_writes_exports_and_deletions_of_one_subject_at_once_never_deadlock(
    world, tenant, private_queue
):
    """The stop's locks together: retrievals and exports hold the subject's lock shared,
    deletions exclusive (after the subject row), writes and corrections the key's lock. Six
    threads on one subject for a few seconds: PostgreSQL would abort a deadlock cycle with an
    error, and every thread must end without one."""
    from memory_core.exports import export_create
    from memory_core.services.writes import memory_write
    from tests.factories import write_body

    me = world["memories"]["mine_incident"].subject
    system = SystemPrincipal(tenant_id=tenant.id)
    stop = time.monotonic() + 4

    def loop(name, work):
        def run():
            with tenant_scope(tenant.id):
                n = 0
                while time.monotonic() < stop:
                    with transaction.atomic():  # one request each, as ATOMIC_REQUESTS
                        work(n)
                    n += 1
                return n

        return in_thread(run, name=name)

    def retrieve(_n):
        pipeline.retrieve(
            principal=world["principal"],
            request=RetrievalRequest(query="What failed in atlas-api?", user_id="dana",
                                     project_id="atlas", repository_id="atlas-api"),
        )  # fmt: skip

    def write(n):
        memory_write(
            principal=system,
            data=write_body(subject="dana", memory_key="ui.theme", content=f"Theme {n}."),
        )

    def delete(n):
        row = MemoryFactory(subject=me, content=f"To delete {n}.")
        deletion_request(principal=system, memory_id=row.id)

    def delete_key(_n):
        from memory_core.exceptions import NotFound

        try:
            deletion_request(principal=system, subject_id=me.id, memory_key="ui.theme")
        except NotFound:
            pass  # every version on the key is already deleted: nothing to ask for

    threads = [
        loop("retrieve-1", retrieve),
        loop("retrieve-2", retrieve),
        loop("write", write),
        loop("delete", delete),
        loop("export", lambda _n: export_create(principal=system, subject_id=me.id)),
        loop("delete-key", delete_key),
    ]
    assert errors_of(*threads) == []
    done = {thread.name: thread.result for thread in threads}
    assert all(n > 0 for n in done.values()), done


@pytest.mark.parametrize("memory_key", ["", "style.answers"])
def test_a_write_in_flight_during_a_subject_deletion_is_deleted_with_the_chain_it_extends(
    owner, monkeypatch, private_queue, memory_key
):
    """A write that superseded the head (uncommitted) when a deletion of the subject (or of
    the key) was asked: the deletion waits for it and deletes the new version too.

    Before writes took the subject's lock shared, the deletion read the subject's rows
    before the write committed, waited only on the head's row lock and tombstoned the head:
    the new version survived it, active, as version 2 of a deleted chain (superseding a
    tombstone) - an outcome neither order of the two requests gives.
    """
    from memory_core.models import Memory
    from memory_core.services import writes
    from tests.factories import write_body

    system = SystemPrincipal(tenant_id=owner.tenant_id)
    body = write_body(subject=owner.external_id, memory_key="style.answers")
    with tenant_scope(owner.tenant_id):
        head = writes.memory_write(principal=system, data=body).memory
    stored, go = threading.Event(), threading.Event()
    real = writes._record

    def paused(*args, **kwargs):  # the new version is inserted; the request has not committed
        stored.set()
        assert go.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(writes, "_record", paused)

    def request(work):
        return in_thread(_as_request(owner.tenant_id, work), released=[stored])

    new_body = {**body, "content": "User prefers detailed answers."}
    writer = request(lambda: writes.memory_write(principal=system, data=new_body))
    assert stored.wait(60)
    deleter = request(
        lambda: deletion_request(
            principal=system, subject_id=owner.id, memory_key=memory_key or None
        ),
    )
    _until_it_waits(deleter)
    go.set()
    assert errors_of(writer, deleter) == []
    version_2 = writer.result.memory
    assert version_2.supersedes_id == head.id
    with tenant_scope(owner.tenant_id):
        assert Memory.objects.get(pk=head.id).status == "deleted"
        assert Memory.objects.get(pk=version_2.id).status == "deleted"
    assert set(deleter.result.memory_ids) == {head.id, version_2.id}


def _race_with_a_subject_deletion(
    tenant_id, subject_id, review_work, *, memory_key=None, pause_after=("memory_core_memory",)
):
    """Run ``review_work`` (one request) until its first lock (``FOR UPDATE`` of a memory row,
    or the first statement holding each of ``pause_after``), then a deletion of the subject
    (or of its ``memory_key``) until it waits for a lock, then both to their end; return
    their errors.

    A deletion locks the subject's rows in id order: a path that holds one row and then asks
    for one with a smaller id waits for the deletion while the deletion waits for it, and
    PostgreSQL aborts one of them (deadlock detected, a 503 to the caller).
    """
    locked, go = threading.Event(), threading.Event()

    def pause_after_first_row_lock(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        lock = "FOR UPDATE" in sql or "advisory_xact_lock" in sql
        if not locked.is_set() and lock and all(part in sql for part in pause_after):
            locked.set()
            assert go.wait(60)
        return result

    def request(work):
        return in_thread(_as_request(tenant_id, work), released=[locked])

    def review():
        with connection.execute_wrapper(pause_after_first_row_lock):
            review_work()

    reviewer = request(review)
    assert locked.wait(60)
    system = SystemPrincipal(tenant_id=tenant_id)
    deleter = request(
        lambda: deletion_request(principal=system, subject_id=subject_id, memory_key=memory_key)
    )
    _until_it_waits(deleter)
    go.set()
    return errors_of(reviewer, deleter)


def _ordered_pair(make):
    """Call ``make()`` (two rows) until the second's id sorts after the first's."""
    for _ in range(30):
        first, second = make()
        if str(first.id) < str(second.id):
            return first, second
    pytest.fail("no pair in id order")


def test_a_conflict_resolved_during_a_subject_deletion_does_not_deadlock(tenant, private_queue):
    """The resolution locked the winner, then the losers: with a loser of a smaller id, a
    deletion of the subject held the loser and waited for the winner (deadlock, 503)."""
    from memory_core.models import ReviewItem
    from memory_core.services.conflicts import conflict_resolve
    from memory_core.services.writes import memory_write
    from tests.factories import write_body

    system = SystemPrincipal(tenant_id=tenant.id)
    inferred = {"type": "model_inference", "conversation_id": "c", "message_id": "m"}
    subjects = iter(range(100))

    def conflict():
        common = {"subject": f"user-{next(subjects)}", "memory_type": "project_constraint"}
        common |= {"scope": "project:atlas", "memory_key": "backend.language"}
        with tenant_scope(tenant.id):
            explicit = memory_write(
                principal=system, data=write_body(**common, content="Backend is Python.")
            ).memory
            guess = memory_write(
                principal=system,
                data=write_body(**common, content="Backend is Ruby.", source=inferred),
            )
        assert "supersession.conflict_lower_authority" in guess.rule_codes
        return explicit, guess.memory

    loser, winner = _ordered_pair(conflict)
    with tenant_scope(tenant.id):
        item = ReviewItem.objects.get(kind="conflict", candidate_ids__contains=[winner.id])

    errors = _race_with_a_subject_deletion(
        tenant.id,
        winner.subject_id,
        lambda: conflict_resolve(
            principal=system,
            item_id=item.id,
            outcome="choose_winner",
            winner_id=winner.id,
            reason="the user said so",
        ),
    )
    assert not errors, errors


def test_a_sensitive_write_approved_during_a_subject_deletion_does_not_deadlock(
    tenant, private_queue
):
    """The approval locked the pending row, then the key's head: with a head of a smaller id,
    a deletion of the subject held the head and waited for the pending row (deadlock, 503)."""
    from memory_core.services.reviews import review_approve
    from memory_core.services.writes import memory_write
    from tests.factories import write_body

    system = SystemPrincipal(tenant_id=tenant.id)
    subjects = iter(range(100))

    def pending_then_head():
        common = {"subject": f"user-{next(subjects)}", "memory_key": "health.notes"}
        with tenant_scope(tenant.id):
            pending = memory_write(
                principal=system, data=write_body(**common, content="User has asthma.")
            )
            head = memory_write(
                principal=system, data=write_body(**common, content="User likes walking.")
            ).memory
        assert pending.decision == "pending_approval"
        pending.memory.review_item_id = pending.review_item.id
        return head, pending.memory

    head, pending = _ordered_pair(pending_then_head)
    errors = _race_with_a_subject_deletion(
        tenant.id,
        head.subject_id,
        lambda: review_approve(principal=system, item_id=pending.review_item_id, reason="ok"),
    )
    assert not errors, errors


@pytest.mark.parametrize("target", ["memory_key", "subject"])
def test_a_correction_during_a_deletion_of_its_subject_or_key_does_not_deadlock(
    tenant, private_queue, target
):
    """A correction takes the subject's lock shared, then the row it corrects (and nothing
    else: locking the subject's row too, as it did, waited for a whole subject's deletion
    holding that row while the deletion waited for the subject's lock). Taken the other way
    round, a deletion of the key holding the subject's lock and waiting for the row would
    deadlock with it."""
    from memory_core.services.writes import memory_correct, memory_write
    from tests.factories import write_body

    system = SystemPrincipal(tenant_id=tenant.id)
    with tenant_scope(tenant.id):
        head = memory_write(principal=system, data=write_body(subject="user-1")).memory
    source = {"type": "user_input", "conversation_id": "c", "message_id": "m-2"}
    # A subject's deletion locks the subject row first: pause holding the subject's lock.
    pause_after = ("advisory_xact_lock_shared",)
    if target == "memory_key":
        pause_after = ("memory_core_memory",)
    errors = _race_with_a_subject_deletion(
        tenant.id,
        head.subject_id,
        lambda: memory_correct(
            principal=system,
            memory_id=head.id,
            data={"content": "User prefers detailed answers.", "source": source},
        ),
        memory_key=head.memory_key if target == "memory_key" else None,
        pause_after=pause_after,
    )
    assert not errors, errors


def _hold_then_race(tenant_id, first, second, *, patch, target, name):
    """Run ``first`` (one request) until it calls ``target.name`` (``patch`` is pytest's
    monkeypatch), then ``second`` until it waits for a lock (or ends), then ``first`` on;
    return the errors of both.

    The interleaving is forced, not timed: ``first`` holds its locks while ``second`` queues
    behind one of them, and only then asks for its next lock. A cycle between the two is
    then found by PostgreSQL (deadlock detected: a 503 to the API's caller).
    """
    paused, go = threading.Event(), threading.Event()
    real = getattr(target, name)

    def held(*args, **kwargs):
        if threading.current_thread() in firsts and not paused.is_set():
            paused.set()
            assert go.wait(60)
        return real(*args, **kwargs)

    patch.setattr(target, name, held)

    def request(work):
        return in_thread(_as_request(tenant_id, work), released=[paused])

    firsts = set()  # the thread running ``first``: only it is paused

    def marked_first():
        firsts.add(threading.current_thread())
        return first()

    holder = request(marked_first)
    assert paused.wait(60)
    racer = request(second)
    _until_it_waits(racer)
    go.set()
    return errors_of(holder, racer)


def _deadlocks(errors) -> list:
    return [exc for exc in errors if "deadlock" in str(exc).lower()]


@pytest.mark.parametrize("path", ["approval", "write"])
def test_a_lower_authority_write_or_approval_during_a_conflict_resolution_does_not_deadlock(
    tenant, monkeypatch, private_queue, path
):
    """A write (or an approval) of lower authority than the key's head holds the head's row,
    then opens the key's conflict (``conflict_open`` locks the open item). The resolution of
    that conflict locked the item, then its candidates' rows: the head among them, so each
    waited for the other (deadlock, 503)."""
    from memory_core.models import ReviewItem
    from memory_core.services import reviews, writes
    from memory_core.services.conflicts import conflict_resolve
    from tests.factories import write_body

    system = SystemPrincipal(tenant_id=tenant.id)
    inferred = {"type": "model_inference", "conversation_id": "c", "message_id": "m"}
    common = {"subject": "user-1", "memory_type": "project_constraint"}
    common |= {"scope": "project:atlas", "memory_key": "backend.language"}
    lower = write_body(**common, content="Backend is Go.", source=inferred)
    with tenant_scope(tenant.id):
        explicit = writes.memory_write(
            principal=system, data=write_body(**common, content="Backend is Python.")
        ).memory
        writes.memory_write(
            principal=system, data=write_body(**common, content="Backend is Ruby.", source=inferred)
        )
        conflict = ReviewItem.objects.get(kind="conflict", state="open")
        if path == "approval":
            pending = writes.memory_write(
                principal=system, data={**lower, "sensitivity": "sensitive"}
            )
            assert pending.decision == "pending_approval"

    def lower_authority():
        if path == "approval":
            reviews.review_approve(principal=system, item_id=pending.review_item.id, reason="ok")
        else:
            assert writes.memory_write(principal=system, data=lower).decision == "accepted"

    def resolve():
        conflict_resolve(
            principal=system,
            item_id=conflict.id,
            outcome="choose_winner",
            winner_id=explicit.id,
            reason="the user said so",
        )

    errors = _hold_then_race(
        tenant.id,
        lower_authority,
        resolve,
        patch=monkeypatch,
        target=reviews if path == "approval" else writes,
        name="conflict_open",
    )
    assert not _deadlocks(errors), errors
    assert not errors, errors


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_a_pending_write_revoked_while_a_reviewer_decides_does_not_deadlock(
    tenant, monkeypatch, private_queue, decision
):
    """A revoke of a pending write locks its row, then closes its review item. The reviewer's
    decision locked the item, then the row: each waited for the other (deadlock, 503 to one
    of them). Taken in the revoke's order, the decision waits and then finds it revoked."""
    from memory_core.exceptions import Conflict
    from memory_core.services import reviews
    from memory_core.services.writes import memory_revoke, memory_write
    from tests.factories import write_body

    system = SystemPrincipal(tenant_id=tenant.id)
    with tenant_scope(tenant.id):
        pending = memory_write(
            principal=system, data=write_body(subject="user-1", sensitivity="sensitive")
        )
    assert pending.decision == "pending_approval"
    decide = reviews.review_approve if decision == "approve" else reviews.review_reject

    errors = _hold_then_race(
        tenant.id,
        lambda: decide(principal=system, item_id=pending.review_item.id, reason="ok"),
        lambda: memory_revoke(principal=system, memory_id=pending.memory.id, reason="wrong"),
        patch=monkeypatch,
        target=reviews,
        name="_lock_pending_memory",
    )
    assert not _deadlocks(errors), errors
    # The revoke went first: the reviewer is told the write is no longer pending (409).
    assert [getattr(exc, "code", exc) for exc in errors] == ["review_closed"], errors
    assert all(isinstance(exc, Conflict) for exc in errors)


def test_a_memory_made_and_revoked_while_its_tenant_is_deleted_does_not_deadlock(
    tenant, private_queue
):
    """The tenant's request locks the rows it sees, then the tenant row. A memory committed
    between the two (a write) and locked by a revoke is not among them: the request took
    the tenant row, then waited for that row, while the revoke's commit waited for the
    tenant row (its event's foreign key takes the row's key-share lock): a deadlock."""
    from memory_core.deletion.services import tenant_deletion_request
    from memory_core.models import Memory
    from memory_core.services.writes import memory_revoke
    from tests.factories import SubjectFactory

    subject = SubjectFactory(tenant=tenant)
    before = MemoryFactory(subject=subject)
    rows_locked, go_on, revoked, commit = (threading.Event() for _ in range(4))

    def pause_after_the_rows(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if not rows_locked.is_set() and "FOR UPDATE" in sql and "memory_core_memory" in sql:
            rows_locked.set()
            assert go_on.wait(60)
        return result

    def request():
        with connection.execute_wrapper(pause_after_the_rows):
            return tenant_deletion_request(tenant_id=tenant.id)

    def revoke():
        memory_revoke(principal=system, memory_id=made.id, reason="wrong")
        revoked.set()
        assert commit.wait(60)

    system = SystemPrincipal(tenant_id=tenant.id)
    requester = in_thread(request, released=[rows_locked])
    assert rows_locked.wait(60)
    with tenant_scope(tenant.id):
        made = MemoryFactory(subject=subject)  # committed after the request locked the rows
    revoker = in_thread(_as_request(tenant.id, revoke), released=[revoked])
    assert revoked.wait(60)
    go_on.set()  # the request goes on to the tenant row, then to the rows again
    _until_it_waits(requester)
    commit.set()
    errors = errors_of(requester, revoker)
    assert not _deadlocks(errors), errors
    assert not errors, errors
    assert set(requester.result.memory_ids) == {before.id, made.id}
    with tenant_scope(tenant.id):
        assert Memory.objects.get(pk=made.id).status == "deleted"


def test_a_deletion_run_and_an_approval_on_the_key_of_the_deleted_memory_do_not_deadlock(
    tenant, monkeypatch, private_queue
):
    """The run's events step updates every review item citing the deleted memory in one
    statement (the key's open conflict, then the pending write's item, in the table's
    order). An approval of that pending write, of lower authority than the key's remaining
    head, holds its item and then opens the key's conflict: each waited for the other."""
    from memory_core.models import ReviewItem
    from memory_core.services import reviews
    from memory_core.services.writes import memory_write
    from tests.factories import write_body

    system = SystemPrincipal(tenant_id=tenant.id)
    tool = {"type": "verified_tool_output", "conversation_id": "c", "message_id": "m"}
    inferred = {"type": "model_inference", "conversation_id": "c", "message_id": "m"}
    common = {"subject": "user-1", "memory_type": "project_constraint"}
    common |= {"scope": "project:atlas", "memory_key": "backend.language"}
    with tenant_scope(tenant.id):
        explicit = memory_write(
            principal=system, data=write_body(**common, content="Backend is Python.")
        ).memory
        observed = memory_write(
            principal=system,
            data=write_body(
                **common, content="Backend is Ruby.", source={**tool, "tool": "scanner"}
            ),
        )
        assert observed.decision == "accepted", observed.rule_codes
        pending = memory_write(
            principal=system,
            data=write_body(
                **common, content="Backend is Go.", source=inferred, sensitivity="sensitive"
            ),
        )
        assert pending.decision == "pending_approval", pending.rule_codes
        conflict = ReviewItem.objects.get(kind="conflict", state="open")
        assert explicit.id in conflict.candidate_ids
        assert pending.review_item.candidate_ids == [explicit.id]
        operation = deletion_request(principal=system, memory_id=explicit.id)

    out = {}
    errors = _hold_then_race(
        tenant.id,
        lambda: reviews.review_approve(
            principal=system, item_id=pending.review_item.id, reason="ok"
        ),
        lambda: out.update(status=deletion_run(operation_id=operation.id)),
        patch=monkeypatch,
        target=reviews,
        name="conflict_open",
    )
    assert not _deadlocks(errors), errors
    assert not errors, errors
    # The run catches a database error (its phase is rolled back, the task retried later):
    # a deadlock shows as a step that failed with it.
    with tenant_scope(tenant.id):
        failures = list(operation.steps.exclude(last_error="").values_list("last_error", flat=True))
    assert not _deadlocks(failures), failures
    assert out["status"] == DeletionOperation.State.COMPLETED, failures


@pytest.mark.parametrize("via", ["service", "command"])
def test_a_tenant_deletion_whose_new_rows_are_always_taken_gives_up_retryably(
    tenant, private_queue, via
):
    """The tenant's request locks the rows it sees, takes the tenant row, then the rows again
    without waiting; a row committed in between and held by another path (a revoke, a write
    superseding it) sends it round again. A steady stream of such rows kept it going round
    for as long as the stream lasted (there was no limit): it now gives up after
    ``TENANT_LOCK_ROUNDS`` rounds with a retryable error (503, ``tenant_busy``), having
    deleted nothing."""
    from django.core.management import CommandError, call_command

    from api.exceptions import exception_handler
    from memory_core.deletion import services
    from memory_core.models import Memory, Tenant
    from tests.factories import SubjectFactory

    subject = SubjectFactory(tenant=tenant)
    MemoryFactory(subject=subject)
    stream = 30  # rows the stream makes (before, the request went round once for each)
    rounds, holders, out = [], [], {}
    release = []  # the event letting the current holder commit

    def hold_a_new_row():  # a write commits a row; another path then holds it
        held, let_go = threading.Event(), threading.Event()

        def holder():
            with tenant_scope(tenant.id):
                made = MemoryFactory(subject=subject)
                with transaction.atomic():
                    Memory.objects.select_for_update().get(pk=made.pk)
                    held.set()
                    assert let_go.wait(60)

        holders.append(in_thread(holder, released=[held]))
        assert held.wait(60)
        release.append(let_go)

    def steady_stream(execute, sql, params, many, context):
        if "NOWAIT" in sql:
            try:
                result = execute(sql, params, many, context)
            except Exception:
                rounds.append(sql)
                release[-1].set()
                raise
            out["locked"] = True
            return result
        result = execute(sql, params, many, context)
        rows_locked = "FOR UPDATE" in sql and "memory_core_memory" in sql
        if rows_locked and "locked" not in out and len(release) < stream:
            hold_a_new_row()  # after the rows are locked, before the tenant row is
        return result

    def request():
        with connection.execute_wrapper(steady_stream):
            if via == "command":
                call_command("delete_tenant", tenant.slug, "--yes")
            else:
                services.tenant_deletion_request(tenant_id=tenant.id)

    requester = in_thread(request)
    requester.join(120)
    for let_go in release:
        let_go.set()
    errors = errors_of(requester, *holders)
    assert errors, f"the request went round {len(rounds)} times, then deleted the tenant"
    [error] = errors
    assert len(rounds) == services.TENANT_LOCK_ROUNDS < stream, len(rounds)
    if via == "command":
        assert isinstance(error, CommandError), error
        assert "tenant_busy" in str(error)
    else:
        assert isinstance(error, services.Busy), error
        assert error.code == "tenant_busy"
        response = exception_handler(error, {})
        assert response.status_code == 503
        assert response.data["error"]["code"] == "tenant_busy"
        assert response["Retry-After"]
    assert Tenant.objects.get(pk=tenant.pk).deleted_at is None
    assert not DeletionOperation.objects.filter(tenant=tenant).exists()


def test_a_replayed_deletion_and_a_conflict_resolution_on_its_rows_do_not_deadlock(
    tenant, private_queue
):
    """Replay (after a restore) scrubbed an operation's rows in one UPDATE, which takes them
    in the table's order, not in id order as every other path does. A resolution holding
    the candidate of the smaller id (stored last) and waiting for the other (stored first,
    taken by the UPDATE) closed a cycle once the UPDATE reached the first: a deadlock (the
    replay or the reviewer's request aborted). A revoke in flight of a row stored between
    the two holds the UPDATE there, so the two meet every time."""
    from memory_core.deletion.replay import replay_deletions
    from memory_core.exceptions import Conflict
    from memory_core.models import Memory, ReviewItem
    from memory_core.rls import platform_scope
    from memory_core.services.conflicts import conflict_resolve
    from memory_core.services.writes import memory_write
    from tests.factories import write_body

    system = SystemPrincipal(tenant_id=tenant.id)
    inferred = {"type": "model_inference", "conversation_id": "c", "message_id": "m"}
    subjects = iter(range(100))

    def conflict_stored_around_another_row():
        name = f"user-{next(subjects)}"
        common = {"subject": name, "memory_type": "project_constraint"}
        common |= {"scope": "project:atlas", "memory_key": "backend.language"}
        with tenant_scope(tenant.id):
            explicit = memory_write(
                principal=system, data=write_body(**common, content="Backend is Python.")
            ).memory
            other = memory_write(principal=system, data=write_body(subject=name)).memory
            guess = memory_write(
                principal=system,
                data=write_body(**common, content="Backend is Ruby.", source=inferred),
            ).memory
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id FROM memory_core_memory WHERE subject_id = %s ORDER BY ctid",
                [explicit.subject_id],
            )
            stored = [row[0] for row in cursor.fetchall()]
        return explicit, other, guess, stored

    for _ in range(30):
        explicit, other, guess, stored = conflict_stored_around_another_row()
        if stored == [explicit.id, other.id, guess.id] and str(guess.id) < str(explicit.id):
            break
    else:
        pytest.fail("no conflict whose candidates are stored out of id order")
    item = ReviewItem.objects.get(kind="conflict", candidate_ids__contains=[guess.id])
    entry = journal_line(
        2,
        tenant_id=tenant.id,
        target="subject",
        subject_id=explicit.subject_id,
        memory_ids=[explicit.id, other.id, guess.id],
    )
    held, let_go = threading.Event(), threading.Event()

    def revoke_in_flight():  # holds the row stored between the candidates
        Memory.objects.select_for_update().get(pk=other.id)
        held.set()
        assert let_go.wait(60)

    def replay():
        with platform_scope("replay_deletions"):
            return replay_deletions(entries=[entry])

    def resolve():
        conflict_resolve(
            principal=system,
            item_id=item.id,
            outcome="choose_winner",
            winner_id=explicit.id,
            reason="the user said so",
        )

    holder = in_thread(_as_request(tenant.id, revoke_in_flight), released=[held])
    assert held.wait(60)
    replayer = in_thread(replay, name="replay")
    _until_it_waits(replayer)
    resolver = in_thread(_as_request(tenant.id, resolve))
    _until_it_waits(resolver, lambda: someone_waits_for_a_lock(sessions=2))
    let_go.set()
    errors = errors_of(holder, replayer, resolver)
    assert not _deadlocks(errors), errors
    # The resolution went first, or it found its winner deleted (409).
    assert all(isinstance(exc, Conflict) for exc in errors), errors
    assert replayer.result["incomplete"] == {}, replayer.result
    statuses = Memory.objects.filter(pk__in=[explicit.id, other.id, guess.id])
    assert set(statuses.values_list("status", flat=True)) == {"deleted"}
    item.refresh_from_db()
    assert (item.state, item.candidate_ids) == ("resolved", []), item


def test_expiring_traces_during_a_deletion_runs_traces_step_does_not_deadlock(
    tenant, owner, private_queue
):
    """The run's traces step deletes the traces citing a deleted memory in the table's
    order; the retention sweep's ``traces_expire`` deletes the tenant's old traces in the
    order of its plan (a hash of their ids). A trace the step held and the sweep waited for,
    while the sweep held one the step came to next, closed a cycle: a deadlock. A delete in
    flight holding a trace stored between them makes the two meet every time."""
    from datetime import timedelta

    from django.utils import timezone

    from memory_core.deletion.retention import traces_expire
    from memory_core.rls import platform_scope

    memory = MemoryFactory(subject=owner)
    system = SystemPrincipal(tenant_id=owner.tenant_id)
    operation = deletion_request(principal=system, memory_id=memory.id)
    old = timezone.now() - timedelta(days=40)

    def expired_traces_the_sweep_takes_last_first():
        traces = [
            RetrievalTrace.objects.create(
                tenant=tenant, subject=owner, mode="task", cited_ids=[memory.id], created_at=old
            ).id
            for _ in range(3)
        ]
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id FROM memory_core_retrievaltrace WHERE id = ANY(%s) ORDER BY ctid",
                [traces],
            )
            stored = [row[0] for row in cursor.fetchall()]
        expiring = RetrievalTrace.objects.filter(tenant=tenant, created_at__lt=timezone.now())
        sweep = RetrievalTrace.objects.filter(
            pk__in=expiring.order_by("created_at").values("pk")[:10_000]
        ).order_by()  # the sweep's own statement, as a select: the order it takes them in
        taken = [pk for pk in sweep.values_list("pk", flat=True) if pk in traces]
        if stored == traces and taken[0] == traces[-1]:
            return traces
        RetrievalTrace.objects.filter(pk__in=traces).delete()
        return None

    for _ in range(30):
        traces = expired_traces_the_sweep_takes_last_first()
        if traces:
            break
    else:
        pytest.fail("no traces the sweep takes in another order than the table's")
    held, let_go = threading.Event(), threading.Event()

    def delete_in_flight():  # holds the trace stored between the other two
        RetrievalTrace.objects.select_for_update().get(pk=traces[1])
        held.set()
        assert let_go.wait(60)

    def run():
        with tenant_scope(tenant.id):
            return deletion_run(operation_id=operation.id)

    def sweep():
        with platform_scope("retention sweep"):
            return traces_expire()

    holder = in_thread(_as_request(tenant.id, delete_in_flight), released=[held])
    assert held.wait(60)
    runner = in_thread(run, name="run")
    _until_it_waits(runner)
    sweeper = in_thread(sweep, name="sweep")
    _until_it_waits(sweeper, lambda: someone_waits_for_a_lock(sessions=2))
    let_go.set()
    errors = errors_of(holder, runner, sweeper)
    assert not _deadlocks(errors), errors
    assert not errors, errors
    # The run catches a database error (its phase rolled back): a deadlock shows in a step.
    failures = list(operation.steps.exclude(last_error="").values_list("last_error", flat=True))
    assert not _deadlocks(failures), failures
    assert runner.result == DeletionOperation.State.COMPLETED, failures
    assert not RetrievalTrace.objects.filter(pk__in=traces).exists()


def test_a_deletion_never_rewrites_another_deletions_new_file_into_a_stray_copy(
    tenant, other_tenant, settings, tmp_path, private_queue, monkeypatch
):
    """Two deletions' evaluation steps on one dataset at once leave a stray copy of it.

    Operation B rewrites ``golden.jsonl`` through ``files.replacing``: its new text is first
    a new file beside it (``.memledger-new-XXXX.jsonl``), renamed over the dataset at the end
    (B holds the dataset's advisory lock, ``lock_file``). Operation A, walking the folder
    meanwhile (``_eval_files``), took B's new file for a dataset of its own (a regular file
    holding A's words), locked it under its own name (no wait: B locked ``golden.jsonl``)
    and rewrote it with ``replacing`` too. When B's rename landed between A's read and A's
    rename, A's rename put the new file back: a second, permanent copy of the dataset (every
    tenant's remaining cases) that nothing made on purpose and nothing removed. (Seen without
    any pause too: about one run in six of four concurrent deletions on two files.)

    Now the step leaves alone a file ``replacing`` is writing (``files.being_written``): the
    folder holds the dataset alone, without either deleted memory's words (stop 49's audit).
    """
    folder = tmp_path / "eval"
    folder.mkdir()
    settings.MEMLEDGER_EVAL_DATA_DIRS = [str(folder)]
    words = {tenant.id: "Alice likes green tea.", other_tenant.id: "Bob likes black coffee."}
    operations = {}
    for t in (tenant, other_tenant):
        memory = MemoryFactory(subject=SubjectFactory(tenant=t), content=words[t.id])
        with tenant_scope(t.id):
            operations[t.id] = deletion_request(
                principal=SystemPrincipal(tenant_id=t.id), memory_id=memory.id
            )
    kept = [{"tenant_id": str(t.id), "answer": "Something else."} for t in (tenant, other_tenant)]
    cases = [{"tenant_id": str(t), "answer": w} for t, w in words.items()] + kept
    dataset = folder / "golden.jsonl"
    dataset.write_text("".join(json.dumps(case) + "\n" for case in cases))

    b_renaming, go_b, a_renaming, go_a = (threading.Event() for _ in range(4))
    real_replace = os.replace

    def replace(src, dst):
        name = threading.current_thread().name
        if name == "B" and os.path.basename(dst) == "golden.jsonl" and not go_b.is_set():
            b_renaming.set()  # B's new text is written, not yet renamed over the dataset
            assert go_b.wait(30)
        leaving = os.path.basename(dst).startswith(memledger_files.NEW_FILE_PREFIX)
        if name == "A" and leaving and not go_a.is_set():
            a_renaming.set()  # A read B's temporary file and is about to replace it
            assert go_a.wait(30)
        return real_replace(src, dst)

    monkeypatch.setattr(memledger_files.os, "replace", replace)

    def run(tenant_id):
        with tenant_scope(tenant_id):
            return deletion_run(operation_id=operations[tenant_id].id)

    b = in_thread(lambda: run(other_tenant.id), name="B", released=[b_renaming])
    assert b_renaming.wait(30) and b.error is None, b.error
    a = in_thread(lambda: run(tenant.id), name="A", released=[a_renaming])
    took_bs_file = a_renaming.wait(10)
    go_b.set()
    b.wait(60)
    go_a.set()
    assert errors_of(a, b) == []
    assert (a.result, b.result) == ("completed", "completed")
    assert sorted(p.name for p in folder.iterdir()) == ["golden.jsonl"]
    assert not took_bs_file, "operation A rewrote operation B's temporary file"
    assert [json.loads(line) for line in dataset.read_text().splitlines()] == kept
