"""Races between the write and lifecycle services, each forced on real connections.

Every test runs its requests in threads, each in its own transaction on its own connection
(as ``ATOMIC_REQUESTS`` runs them), and forces the interleaving: the first request is held at
a named call, with its locks taken, until the second waits for one of them.
"""

import threading
import time

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction

from memory_core.models import Memory, ReviewItem, Status
from memory_core.principals import AgentPrincipal, ReviewerPrincipal, SystemPrincipal
from memory_core.rls import tenant_scope
from memory_core.services import conflicts, writes
from memory_core.services.reviews import review_approve
from memory_core.services.tasks import task_close
from tests.factories import AgentFactory, write_body
from tests.threads import InThread

pytestmark = pytest.mark.django_db(transaction=True)

# Only a broken test waits this long: every wait below ends on a lock or an event.
WAIT = 30
SOURCE = {"type": "user_input", "conversation_id": "c-1", "message_id": "m-2"}
INFERRED = {"type": "model_inference", "conversation_id": "c-1", "message_id": "m-3"}


def _blocked(pid) -> bool:
    """Return whether the backend ``pid`` waits for a lock another one holds."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT cardinality(pg_blocking_pids(%s)) > 0", [pid])
        return cursor.fetchone()[0]


def _wait_until(condition) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


class _Request(InThread):
    """``work()`` in a transaction of ``tenant_id`` on a connection of its own (``InThread``:
    its ``result`` or ``error``), its backend's pid in ``pid`` once it started."""

    def __init__(self, tenant_id, work):
        self.pid = None
        self.started_work = threading.Event()

        def request():
            with tenant_scope(tenant_id), transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_backend_pid()")
                    self.pid = cursor.fetchone()[0]
                self.started_work.set()
                return work()

        super().__init__(request, released=[self.started_work])

    def waits(self) -> bool:
        """Return once it ended or waits for a lock: whether it waits."""
        assert self.started_work.wait(WAIT)
        _wait_until(lambda: not self.is_alive() or _blocked(self.pid))
        return self.is_alive()


def _hold_then_race(monkeypatch, tenant_id, first, second, *, target, name):
    """Run ``first`` until it calls ``target.name``, then ``second`` until it waits for a
    lock (or ends), then ``first`` on; return both ``_Request``s, ended."""
    paused, go = threading.Event(), threading.Event()
    real = getattr(target, name)
    holder: list = []

    def held(*args, **kwargs):
        if threading.current_thread() in holder and not paused.is_set():
            paused.set()
            assert go.wait(WAIT)
        return real(*args, **kwargs)

    monkeypatch.setattr(target, name, held)
    one = _Request(tenant_id, first)
    holder.append(one)
    one.start()
    _wait_until(lambda: paused.is_set() or not one.is_alive())
    assert one.error is None, one.error
    two = _Request(tenant_id, second)
    two.start()
    assert two.waits(), f"the second never waited: {two.error!r}"
    go.set()
    one.join(WAIT)
    two.join(WAIT)
    assert not one.is_alive() and not two.is_alive()
    return one, two


# --- a task's close racing a new version of what is bound to the task ---------------------


def _task_state(system, **fields):
    body = write_body(
        memory_type="task_state",
        memory_key="",
        session_id="s-1",
        task_id="T-1",
        content="Login page done.",
        **fields,
    )
    with tenant_scope(system.tenant_id):
        return writes.memory_write(principal=system, data=body).memory


def _task_decision(system, content):
    body = write_body(
        memory_type="previous_decision",
        memory_key="db.engine",
        scope="task:T-1",
        content=content,
        source=SOURCE,
    )
    return writes.memory_write(principal=system, data=body)


@pytest.mark.parametrize("path", ["correction", "write"])
def test_a_task_closed_while_a_bound_memory_gets_a_new_version_expires_the_new_version(
    tenant, monkeypatch, path
):
    """The close locked the task's active rows: it waited for the row a correction (or a
    write on its key) was superseding, then found it superseded and skipped it, and never
    saw the new version, committed meanwhile. The task was closed, expired nothing, and its
    state lived on as the new version's."""
    system = SystemPrincipal(tenant_id=tenant.id)
    if path == "correction":
        old = _task_state(system)

        def new_version():
            return writes.memory_correct(
                principal=system,
                memory_id=old.id,
                data={"content": "Login and signup pages done.", "source": SOURCE},
            )
    else:
        with tenant_scope(tenant.id):
            old = _task_decision(system, "For this task we use SQLite.").memory

        def new_version():
            return _task_decision(system, "For this task we use PostgreSQL.")

    corrected, closed = _hold_then_race(
        monkeypatch,
        tenant.id,
        new_version,
        lambda: task_close(principal=system, user_id="user-1", task_id="T-1"),
        target=writes,
        name="_store",  # the old version is locked; the new one is not stored yet
    )

    assert corrected.error is None and closed.error is None, (corrected.error, closed.error)
    successor = corrected.result.memory
    assert successor.supersedes_id == old.id
    with tenant_scope(tenant.id):
        statuses = dict(Memory.objects.values_list("pk", "status"))
    assert {statuses[old.id], statuses[successor.id]} == {Status.SUPERSEDED, Status.EXPIRED}
    assert statuses[successor.id] == Status.EXPIRED
    assert closed.result.expired == [successor.id]


# --- a conflict's resolution, a retrieval joining its item and a deletion of the subject ---


def test_a_conflict_resolved_while_a_retrieval_joins_it_and_a_deletion_waits_does_not_stall(
    tenant, monkeypatch, settings
):
    """The resolution locked its item, then took the subject's lock shared, which queues
    behind a deletion of the subject waiting for a retrieval's shared lock. That retrieval
    then asked for the item (``conflict_open`` adding a row it saw): resolution, deletion
    and retrieval each waited for the next. PostgreSQL lets the resolution jump the queue
    only after ``deadlock_timeout`` (1 s); with a shorter ``MEMLEDGER_SUBJECT_LOCK_WAIT`` the
    resolution gave up first (503 ``subject_being_deleted``), a stall of a second otherwise.
    Taken before the item, as every other path takes it, the lock is already held."""
    from memory_core.locks import subject_deletion_lock, subject_shared_lock

    settings.MEMLEDGER_SUBJECT_LOCK_WAIT = 0.3  # below deadlock_timeout: a stall is a failure
    system = SystemPrincipal(tenant_id=tenant.id)
    common = {"memory_type": "project_constraint", "scope": "project:atlas"}
    common |= {"memory_key": "backend.language"}
    with tenant_scope(tenant.id):
        explicit = writes.memory_write(
            principal=system, data=write_body(**common, content="Backend is Python.")
        ).memory
        writes.memory_write(
            principal=system, data=write_body(**common, content="Backend is Ruby.", source=INFERRED)
        )
        item = ReviewItem.objects.get(kind="conflict", state="open")

    retrieval_in, retrieval_go = threading.Event(), threading.Event()

    def retrieval():  # holds the subject's lock shared, then locks the item to add a row
        subject_shared_lock(explicit.subject_id)
        retrieval_in.set()
        assert retrieval_go.wait(WAIT)
        list(ReviewItem.objects.select_for_update().filter(pk=item.id))

    reader = _Request(tenant.id, retrieval)
    reader.start()
    assert retrieval_in.wait(WAIT)

    paused, go = threading.Event(), threading.Event()
    real_check = conflicts._check_principal

    def check_then_wait(*args):  # reached with the item locked
        paused.set()
        assert go.wait(WAIT)
        return real_check(*args)

    monkeypatch.setattr(conflicts, "_check_principal", check_then_wait)
    resolver = _Request(
        tenant.id,
        lambda: conflicts.conflict_resolve(
            principal=system,
            item_id=item.id,
            outcome="choose_winner",
            winner_id=explicit.id,
            reason="the user said so",
        ),
    )
    resolver.start()
    assert paused.wait(WAIT)
    deleter = _Request(tenant.id, lambda: subject_deletion_lock(explicit.subject_id))
    deleter.start()
    assert deleter.waits()  # behind the retrieval's shared lock
    retrieval_go.set()
    assert reader.waits()  # for the item the resolution holds
    go.set()
    for request in (resolver, reader, deleter):
        request.join(WAIT)
    assert resolver.error is None, resolver.error
    assert reader.error is None and deleter.error is None
    with tenant_scope(tenant.id):
        assert ReviewItem.objects.get(pk=item.id).resolution == "choose_winner"


# --- two batches creating the same new subjects ----------------------------------------


def test_batches_creating_the_same_new_subjects_in_another_order_do_not_deadlock(tenant):
    """Each batch created the subjects it names in its items' order: one inserted user-a and
    waited for the other's user-b (the unique external id waits for the inserting
    transaction), the other held user-b and waited for user-a (deadlock detected, a 503).
    No key lock keeps them apart: keyless writes, or other keys."""
    system = SystemPrincipal(tenant_id=tenant.id)

    def batch(*subjects):
        items = [
            write_body(subject=s, memory_key="", content=f"{s} prefers concise answers.")
            for s in subjects
        ]
        return lambda: writes.memory_write_batch(principal=system, items=items)

    inserted, go = threading.Event(), threading.Event()

    def pause_after_first_subject(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if sql.startswith('INSERT INTO "memory_core_subject"') and not inserted.is_set():
            inserted.set()
            assert go.wait(WAIT)
        return result

    def first_work():
        with connection.execute_wrapper(pause_after_first_subject):
            return batch("user-a", "user-b")()

    first = _Request(tenant.id, first_work)
    first.start()
    _wait_until(lambda: inserted.is_set() or not first.is_alive())
    second = _Request(tenant.id, batch("user-b", "user-a"))
    second.start()
    assert second.waits()
    go.set()
    first.join(WAIT)
    second.join(WAIT)
    assert first.error is None and second.error is None, (first.error, second.error)
    with tenant_scope(tenant.id):
        assert Memory.objects.filter(status=Status.ACTIVE).count() == 4


def _source(message_id, kind="user_input"):
    return {"type": kind, "conversation_id": "c", "message_id": message_id}


@pytest.mark.parametrize("second", ["approval", "correction"])
def test_a_keyless_conflicts_resolution_and_a_change_of_its_chain_do_not_deadlock(
    tenant, monkeypatch, second
):
    """A keyed conflict's resolution takes the key's lock first, as approvals and corrections
    do. A keyless chain had no such lock: the resolution locked the item, then the candidates,
    while an approval (or a correction) locked the head, then the item, and PostgreSQL failed
    one of the two (stop 54's audit of the reviewer's side). The subject's keyless lock
    orders them now."""
    agent = AgentPrincipal.from_agent(AgentFactory(tenant=tenant))
    user = get_user_model().objects.create_user("rev")
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=user.id)
    with tenant_scope(tenant.id):
        body = write_body(
            memory_type="incident",
            content="The deploy of atlas failed on Monday because the disk was full.",
            source=_source("m1"),
        )
        body.pop("memory_key")
        head = writes.memory_write(principal=agent, data=body).memory
        rival = writes.memory_correct(principal=agent, memory_id=head.id, data={
            "content": "The deploy of atlas failed on Monday because of a network outage.",
            "source": _source("m2", "model_inference"),
        })  # fmt: skip
        conflict = rival.review_item
        assert conflict is not None and conflict.kind == "conflict"
        pending = writes.memory_correct(principal=agent, memory_id=head.id, data={
            "content": "The deploy of atlas failed on Monday while the user was in hospital "
                       "for chemotherapy.",
            "source": _source("m3", "model_inference"),
        })  # fmt: skip
        assert pending.decision == "pending_approval"

    def resolve():
        return conflicts.conflict_resolve(
            principal=reviewer, item_id=conflict.id, outcome="choose_winner",
            winner_id=head.id, reason="the user said so",
        )  # fmt: skip

    def change():
        if second == "approval":
            return review_approve(principal=reviewer, item_id=pending.review_item.id, reason="ok")
        return writes.memory_correct(principal=agent, memory_id=head.id, data={
            "content": "The deploy of atlas failed on Monday because the DNS was down.",
            "source": _source("m4", "model_inference"),
        })  # fmt: skip

    # The resolution is held with its item locked (as the keyed test in
    # tests/memory_core/test_race_review.py holds it), until the other waits for a lock.
    one, two = _hold_then_race(
        monkeypatch, tenant.id, resolve, change, target=conflicts, name="_check_principal"
    )
    assert (one.error, two.error) == (None, None)
