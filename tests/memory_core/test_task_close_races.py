"""A task's close racing approvals (a lock cycle, deadlock detected, until stop 52) and writes
on the task's key (a row missed until stop 53: the audits of races)."""

import threading
import time

import pytest
from django.db import connection, transaction

from memory_core.models import Memory, ReviewItem, Status
from memory_core.principals import ReviewerPrincipal, SystemPrincipal
from memory_core.rls import tenant_scope
from memory_core.services import writes
from memory_core.services.reviews import review_approve
from memory_core.services.tasks import task_close
from memory_core.services.writes import memory_revoke
from tests.factories import MemoryFactory, SubjectFactory, pending_write_on, write_body
from tests.memory_core.test_race_review import _hold_then_race
from tests.threads import errors_of, in_thread

pytestmark = pytest.mark.django_db(transaction=True)


def _blocked_by_another(pid) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT cardinality(pg_blocking_pids(%s)) > 0", [pid])
        return cursor.fetchone()[0]


def _until(condition, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_a_task_close_and_an_approval_never_deadlock(tenant, django_user_model):
    """memory_core/locks.py: a task's close locks "the task's writes waiting for a reviewer
    in id order (an approval takes its pending row before the key's head)", so that "no two
    wait for each other in a cycle". But the close's locking read of the waiting writes
    (``FOR UPDATE`` with ``status = pending_approval``) keeps the lock of a row it waited
    for even when that row, approved meanwhile, no longer matches and is not returned. The
    next approval on the key locks its own pending row, then follows the chain to its new
    head (``selectors.approvals.newest_version``): that approved row, held by the close,
    which waits in turn for the approval's pending row. PostgreSQL breaks the cycle by
    failing one of them with "deadlock detected" (the API's 503 ``memory_unavailable``).
    The close locks each waiting write in a savepoint now, let go when it no longer waits."""
    user = django_user_model.objects.create_user("rev-deadlock")
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=user.id)
    system = SystemPrincipal(tenant_id=tenant.id)
    subject = SubjectFactory(tenant=tenant)
    # Scoped to the task: a preference merely carrying its task_id outlives the close.
    task = {"task_id": "t-1", "scope_kind": "task", "scope_ref": "t-1"}
    head = MemoryFactory(subject=subject, memory_key="diet", **task)
    items = [pending_write_on(head, f"User is allergic to peanuts {n}.", **task) for n in range(3)]
    # By the id order the close locks them in: P0 < Px < P1.
    first, middle, last = sorted(items, key=lambda item: str(item.memory_id))

    pids = {}
    approved, commit_first = threading.Event(), threading.Event()
    revoking, commit_revoke = threading.Event(), threading.Event()

    def as_request(name, work, hold=None):
        def run():
            with tenant_scope(tenant.id), transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_backend_pid()")
                    pids[name] = cursor.fetchone()[0]
                result = work()
                if hold is not None:
                    hold[0].set()
                    assert hold[1].wait(30)
            return result

        return run

    # A0 approves P0 and holds its transaction open (the key's lock, P0, the head).
    a0 = in_thread(
        as_request("a0", lambda: review_approve(principal=reviewer, item_id=first.id,
                                                reason="ok"),
                   hold=(approved, commit_first)),
        name="a0", released=[approved],
    )  # fmt: skip
    assert approved.wait(30)
    # A revoke of the waiting write Px holds its row.
    rv = in_thread(
        as_request("revoke", lambda: memory_revoke(principal=system, memory_id=middle.memory_id),
                   hold=(revoking, commit_revoke)),
        name="revoke", released=[revoking],
    )  # fmt: skip
    assert revoking.wait(30)
    # The task's close: its locking read of the waiting writes waits for P0.
    close = in_thread(
        as_request("close", lambda: task_close(principal=system, user_id=subject.external_id,
                                               task_id="t-1")),
        name="close",
    )  # fmt: skip
    _until(lambda: "close" in pids and _blocked_by_another(pids["close"]), "close never waited")
    commit_first.set()  # P0 is now the key's head; the close goes on and waits for Px
    assert errors_of(a0) == []
    # A1 approves P1: the key's lock is free, it locks P1, then the chain's new head, P0.
    a1 = in_thread(
        as_request("a1", lambda: review_approve(principal=reviewer, item_id=last.id,
                                                reason="ok")),
        name="a1",
    )  # fmt: skip
    _until(lambda: not a1.is_alive() or ("a1" in pids and _blocked_by_another(pids["a1"])),
           "a1 neither ended nor waited")  # fmt: skip
    commit_revoke.set()  # the close goes on to P1
    errors = errors_of(rv, close, a1)
    assert [str(error) for error in errors] == []
    with tenant_scope(tenant.id):
        # Every write bound to the task is retired: nothing of the closed task is in use or
        # waits for a reviewer (the approval that came first superseded P0 with P1, which the
        # close then expired).
        left = Memory.objects.filter(task_id="t-1", status__in=[Status.ACTIVE, "pending_approval"])
        assert list(left.values_list("pk", "status")) == []
        assert Memory.objects.get(pk=last.memory_id).status == Status.EXPIRED


EXPLICIT = {"type": "user_input", "conversation_id": "c-1", "message_id": "m-2"}
INFERRED = {"type": "model_inference", "conversation_id": "c-1", "message_id": "m-3"}


def _decision(principal, content, source, **fields):
    body = write_body(
        memory_type="previous_decision",
        memory_key="db.engine",
        scope="task:T-1",
        content=content,
        source=source,
        **fields,
    )
    return writes.memory_write(principal=principal, data=body)


def test_a_weaker_write_kept_beside_a_task_bound_head_while_the_task_closes_is_expired(
    tenant, monkeypatch
):
    """docs/api.md, ``POST /api/v1/tasks/close``: what is scoped to the task, "active or still
    waiting for a reviewer, become ``expired`` at once". A model's inference on the task's key
    (kept beside the explicit head, in conflict) held the head locked while it stored its
    row; the close waited for the head, held it (still active) and read no further: the
    inference, committed before the close, stayed in use (stop 53's audit of races)."""
    system = SystemPrincipal(tenant_id=tenant.id)
    with tenant_scope(tenant.id):
        head = _decision(system, "For this task we use SQLite.", EXPLICIT).memory

    wrote, closed = _hold_then_race(
        monkeypatch,
        tenant.id,
        lambda: _decision(system, "For this task we probably use PostgreSQL.", INFERRED),
        lambda: task_close(principal=system, user_id="user-1", task_id="T-1"),
        target=writes,
        name="_store",  # the head is locked by the write; its own row is not stored yet
    )
    assert wrote.error is None and closed.error is None, (wrote.error, closed.error)
    weaker = wrote.result.memory
    assert "supersession.conflict_lower_authority" in wrote.result.rule_codes
    assert weaker.scope_ref == "T-1"
    with tenant_scope(tenant.id):
        statuses = dict(Memory.objects.values_list("pk", "status"))
    assert statuses[head.id] == Status.EXPIRED
    # The task is closed, yet its other decision, committed before the close, is in use.
    assert statuses[weaker.id] == Status.EXPIRED, (
        f"the close expired {closed.result.expired}; the task-scoped row written before "
        f"its commit is {statuses[weaker.id]}"
    )


def test_a_sensitive_write_on_a_task_bound_head_while_the_task_closes_never_becomes_its_state(
    tenant, monkeypatch, django_user_model
):
    """docs/api.md, ``POST /api/v1/tasks/close``: "A waiting write's review item closes
    (resolution ``task_closed``; an approval then answers 409 ``review_closed``), so it never
    becomes the closed task's state". A sensitive write on the task's key, storing its row
    while it held the head, was read by neither of the close's reads: its item stayed open,
    and an approval made it the closed task's decision (stop 53's audit of races)."""
    system = SystemPrincipal(tenant_id=tenant.id)
    with tenant_scope(tenant.id):
        head = _decision(system, "For this task we use SQLite.", EXPLICIT).memory

    wrote, closed = _hold_then_race(
        monkeypatch,
        tenant.id,
        lambda: _decision(
            system, "For this task the user was diagnosed with diabetes; use PostgreSQL.", EXPLICIT
        ),
        lambda: task_close(principal=system, user_id="user-1", task_id="T-1"),
        target=writes,
        name="_store",
    )
    assert wrote.error is None and closed.error is None, (wrote.error, closed.error)
    assert wrote.result.decision == "pending_approval", wrote.result.rule_codes
    pending = wrote.result.memory
    item = wrote.result.review_item
    with tenant_scope(tenant.id):
        assert Memory.objects.get(pk=head.id).status == Status.EXPIRED
        after_close = Memory.objects.get(pk=pending.id).status
        item_state = ReviewItem.objects.get(pk=item.id).state
    user = django_user_model.objects.create_user("audit-reviewer")
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=user.id)
    approved = None
    try:
        with tenant_scope(tenant.id):
            review_approve(principal=reviewer, item_id=item.id, reason="Looks right.")
            approved = Memory.objects.get(pk=pending.id).status
    except Exception as exc:  # the promised 409 review_closed
        approved = f"refused: {getattr(exc, 'code', exc)}"
    assert (after_close, item_state) == (Status.EXPIRED, ReviewItem.State.RESOLVED), (
        f"after the close the task-scoped write is {after_close}, its item {item_state}; "
        f"a reviewer's approval then made it: {approved}"
    )
