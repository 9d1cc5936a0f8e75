"""A tenant's deletion request (the tenant's rows locked in id order, no subject lock) against
a path that locks a subject's rows out of id order: an approval holds the pending row, then
locks the key's head, of a smaller id. PostgreSQL ended the cycle by failing the request's
wait, an OperationalError: a 500, or a failed ``delete_tenant``. The round now starts again
(found by a race audit of stop 29)."""

import threading
import time

import pytest
from django.db import connection, transaction

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import (
    deletion_request,
    deletion_request_or_queue,
    queued_subject_deletion_run,
    tenant_deletion_request,
)
from memory_core.exceptions import Conflict, SubjectBeingDeleted
from memory_core.exports import export_create
from memory_core.models import DeletionOperation, Subject
from memory_core.principals import SubjectPrincipal, SystemPrincipal
from memory_core.rls import tenant_scope
from memory_core.services import reviews
from memory_core.services.writes import memory_write
from tests.deletion.conftest import held_in_another_transaction, until_waiting_or_done
from tests.deletion.test_concurrency import _until_it_waits
from tests.factories import MemoryFactory, SubjectFactory, TenantFactory, write_body
from tests.threads import in_thread, someone_waits_for_a_lock

pytestmark = pytest.mark.django_db(transaction=True)


def _race(tenant_id, first, *, target, name):
    """Run ``first`` (one request) until it calls ``target.name``, then the tenant's deletion
    request until it waits for a lock (or ends), then ``first`` on; return both threads."""
    paused, go = threading.Event(), threading.Event()
    real = getattr(target, name)
    firsts = set()

    def held(*args, **kwargs):
        if threading.current_thread() in firsts and not paused.is_set():
            paused.set()
            assert go.wait(60)
        return real(*args, **kwargs)

    def run_first():
        firsts.add(threading.current_thread())
        with tenant_scope(tenant_id), transaction.atomic():
            return first()

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(target, name, held)
        holder = in_thread(run_first, released=[paused])
        assert paused.wait(60)
        requester = in_thread(lambda: tenant_deletion_request(tenant_id=tenant_id))
        _until_it_waits(requester)
        go.set()
        holder.wait()
        requester.wait()
    return holder, requester


def test_a_tenant_deletion_request_meeting_an_approval_out_of_id_order_goes_round_again(
    private_queue,  # noqa: F811
):
    """PostgreSQL ends the cycle in the transaction whose wait reaches ``deadlock_timeout``
    (1 s) once the cycle is there: the request's, which waited first, unless the approval
    reached its own wait more than a second later (a loaded machine: stop 63's CI run), when
    it is the approval's (answered 503, and the reviewer tries again). The request never
    fails; the race is run again, on a new tenant, until the request is the one that goes
    round again."""
    for _ in range(3):
        tenant = TenantFactory()
        approval, request = _approval_racing_the_tenants_deletion(tenant)
        assert request.error is None, request.error
        assert request.outcome() is not None
        if approval.error is None:
            return
        assert "deadlock detected" in str(approval.error), approval.error
    pytest.fail("PostgreSQL chose the approval in three races of three")


def _approval_racing_the_tenants_deletion(tenant):
    """Race an approval that links a pending write onto a head of a smaller id against the
    tenant's deletion request (``_race``); return both threads."""
    system = SystemPrincipal(tenant_id=tenant.id)
    for n in range(40):  # until the head's id sorts before the pending write's
        common = {"subject": f"user-{n}", "memory_key": "health.notes"}
        with tenant_scope(tenant.id):
            head = memory_write(
                principal=system, data=write_body(**common, content="User likes walking.")
            ).memory
            pending = memory_write(
                principal=system, data=write_body(**common, content="User has asthma.")
            )
        assert pending.decision == "pending_approval"
        if str(head.id) < str(pending.memory.id):
            break

    return _race(
        tenant.id,
        lambda: reviews.review_approve(
            principal=system, item_id=pending.review_item.id, reason="ok"
        ),
        target=reviews,
        name="_link_into_chain",
    )


def test_a_tenant_deletion_while_a_queued_subject_run_waits_is_not_a_deadlock(
    settings, owner, owner_principal, private_queue, journal
):
    """Stop 58's audit of deletion found a whole tenant's deletion asked while the worker's
    run of a queued subject deletion waited for the subject's lock (an export in flight)
    failing on PostgreSQL's deadlock detected, a raw OperationalError: the run held the
    subject's row (and, through the ordering's join, the tenant row) and then waited for the
    memory rows, which the request held before it locked the tenant row and cleared the
    subject's mark. Now the request locks the marked subjects' rows first, waits for the
    run, and completes."""
    for _ in range(2):
        MemoryFactory(subject=owner)
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 1
    with tenant_scope(owner.tenant_id):
        queued = deletion_request_or_queue(principal=owner_principal, subject_id=owner.pk)
    assert queued.status == "queued"

    def exporting():  # the person's export, written and not committed yet
        export_create(principal=owner_principal, subject_id=owner.pk)

    def worker():
        with tenant_scope(owner.tenant_id):
            return queued_subject_deletion_run(owner.pk)

    def tenant():
        return tenant_deletion_request(tenant_id=owner.tenant_id)

    with held_in_another_transaction(owner.tenant_id, exporting):
        queued_run = in_thread(worker)
        until_waiting_or_done(queued_run)  # holds the subject's row, waits for its lock
        assert queued_run.is_alive()
        tenants = in_thread(tenant)
        deadline = time.monotonic() + 20
        while not someone_waits_for_a_lock(sessions=2) and tenants.is_alive():
            assert time.monotonic() < deadline
            time.sleep(0.05)
    queued_run.wait(30)
    tenants.wait(30)
    assert queued_run.error is None, queued_run.error
    assert tenants.error is None, f"the tenant's deletion failed: {tenants.error!r}"
    assert tenants.outcome().target == "tenant"


def _until_waiting(sessions: int, *threads) -> None:
    """Return once ``sessions`` backends wait for a lock; fail if a thread ended first."""
    deadline = time.monotonic() + 20
    while not someone_waits_for_a_lock(sessions=sessions):
        assert all(t.is_alive() for t in threads), [t.error for t in threads]
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_queued_run_racing_a_tenant_deletion_answers_it_not_an_empty_operation(
    settings, owner, owner_principal, private_queue, journal
):
    """Stop 58's review found a queued whole-subject run whose memories a whole tenant's
    deletion in flight took making a new operation that held no memory under the queued id,
    which ran to completed while the tenant's operation was pending: the tenant's request,
    started while no subject was marked, took no subject's row, and the run's look at what
    was taken meanwhile (``_queued_taken_meanwhile``) came before it waited for the memory
    rows. Now the request looks once it holds them, answers the tenant's operation, and
    leaves the mark for the sweep."""
    for _ in range(2):
        MemoryFactory(subject=owner)
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 1
    tenant_id = owner.tenant_id

    def key_share_on_tenant():  # a transaction that inserted a row of the tenant, say
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM memory_core_tenant WHERE id = %s FOR KEY SHARE", [str(tenant_id)]
            )

    def worker():
        with tenant_scope(tenant_id):
            return queued_subject_deletion_run(owner.pk)

    with held_in_another_transaction(tenant_id, key_share_on_tenant):
        # The tenant's request: no subject marked yet; it locks the memory rows, then waits
        # for the tenant row.
        tenants = in_thread(lambda: tenant_deletion_request(tenant_id=tenant_id))
        _until_waiting(1, tenants)
        # Meanwhile the person's "delete everything" is queued (too large for a request) ...
        with tenant_scope(tenant_id):
            queued = deletion_request_or_queue(principal=owner_principal, subject_id=owner.pk)
        assert queued.status == "queued"
        # ... and the worker's run starts: it waits for the rows the tenant's request holds.
        run = in_thread(worker)
        _until_waiting(2, tenants, run)
    tenant_operation = tenants.outcome(30)
    made = run.outcome(30)
    assert tenant_operation.target == "tenant"
    assert DeletionOperation.objects.get(pk=tenant_operation.pk).status != "completed"
    if not (made.memory_ids or made.already_requested):
        outcome = deletion_run(operation_id=made.pk)  # the id the person was handed
        tenant_status = DeletionOperation.objects.get(pk=tenant_operation.pk).status
        pytest.fail(
            f"the queued run made a new operation holding no memory, which ran to {outcome!r} "
            f"while the tenant's operation that took the memories is {tenant_status!r}"
        )
    assert made.pk == tenant_operation.pk
    # The mark stays: the sweep sends the task again once the tenant's operation completed.
    assert Subject.objects.get(pk=owner.pk).deletion_queued_at is not None


def _while_the_tenant_is_deleted(tenant, request):
    """Return the thread of ``request()``, sent while the tenant's deletion request holds its
    memory rows (and its transaction is open), which commits once the request waits for them."""
    with held_in_another_transaction(
        tenant.id, lambda: tenant_deletion_request(tenant_id=tenant.id)
    ):
        thread = in_thread(request)
        _until_it_waits(thread)
    thread.wait(30)
    with tenant_scope(tenant.id):
        made = list(
            DeletionOperation.objects.exclude(target=DeletionOperation.Target.TENANT).values_list(
                "target", "memory_ids"
            )
        )
    assert made == [], thread.result or thread.error  # no empty operation
    return thread


def _tenants_operation_id(tenant) -> str:
    with tenant_scope(tenant.id):
        return str(DeletionOperation.objects.get(target=DeletionOperation.Target.TENANT).pk)


def _by_the_person(tenant, subject, **request):
    """Return ``deletion_request`` for ``subject``'s portal login, as its pages call it."""
    person = SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1)

    def call():
        with tenant_scope(tenant.id):
            return deletion_request(principal=person, **request)

    return call


def test_a_memorys_deletion_waiting_for_its_tenants_deletion_answers_it_not_an_empty_operation(
    tenant, api_client, private_queue
):
    """Stop 60's audit of races found that ``DELETE /api/v1/memories/{id}`` sent while the
    memory's tenant was being deleted waited for the tenant's request, which held the memory's
    row, then answered 202 with a new operation holding no memory, of a tenant deleted by then,
    which completed at once: ``_memory_deletion`` looked for the memory's tombstone before
    ``_operation_create`` waited for the rows, and a tenant's deletion takes no subject's lock,
    so the tombstone it committed went unseen; once locked, every row was in the ledger and was
    dropped. Now the request answers the operation that took the memory, as one asked again
    does: the tenant's, to a caller that may see it, else ``409 already_deleted`` (the portal's
    delete page calls the same function)."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    memory = MemoryFactory(subject=subject, memory_key="ui.theme")

    request = _while_the_tenant_is_deleted(
        tenant, lambda: api_client.delete(f"/api/v1/memories/{memory.id}")
    )

    response = request.outcome()
    assert response.status_code == 202, response.content
    assert response.json()["operation_id"] == _tenants_operation_id(tenant)


def test_a_memorys_deletion_by_its_person_waiting_for_the_tenants_deletion_is_a_conflict(
    tenant, private_queue
):
    """Stop 60's audit of races found a memory's deletion that waited for its tenant's
    deletion making an empty operation (above); the person's, from the portal, may not see the
    tenant's operation, which names no subject: ``409 already_deleted``, as when asked again."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    memory = MemoryFactory(subject=subject, memory_key="ui.theme")

    request = _while_the_tenant_is_deleted(
        tenant, _by_the_person(tenant, subject, memory_id=memory.id)
    )

    with pytest.raises(Conflict) as refused:
        request.outcome()
    assert refused.value.code == "already_deleted"


def test_a_subjects_deletion_waiting_for_its_tenants_deletion_answers_it_not_an_empty_operation(
    tenant, api_client, private_queue
):
    """Stop 60's audit of races found that ``POST /api/v1/deletions {"subject"}`` sent while
    the subject's tenant was being deleted answered 202 with a new whole-subject operation
    holding no memory, of a tenant deleted by then: ``_subject_deletion`` decided a new
    operation was needed (``_subject_deletion_covering`` read the subject's memories as not in
    the ledger) before ``_operation_create`` waited for their rows, which the tenant's request
    held and tombstoned; once let go, every row was in the ledger and was dropped. Now the
    request answers the operation that took them, as one asked again does: the tenant's, to a
    caller that may see it, else ``503 subject_being_deleted``."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    MemoryFactory(subject=subject, memory_key="ui.theme")

    request = _while_the_tenant_is_deleted(
        tenant,
        lambda: api_client.post("/api/v1/deletions", {"subject": "user-1"}, format="json"),
    )

    response = request.outcome()
    assert response.status_code == 202, response.content
    assert response.json()["operation_id"] == _tenants_operation_id(tenant)


def test_a_subjects_deletion_by_its_person_waiting_for_the_tenants_deletion_is_refused(
    tenant, private_queue
):
    """Stop 60's audit of races found a whole subject's deletion that waited for its tenant's
    deletion making an empty operation (above); the person's "delete everything" may not see
    the tenant's operation, which names no subject: ``subject_being_deleted``, as for another
    unfinished operation it may not see that holds its memories."""
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    MemoryFactory(subject=subject, memory_key="ui.theme")

    request = _while_the_tenant_is_deleted(
        tenant, _by_the_person(tenant, subject, subject_id=subject.id)
    )

    with pytest.raises(SubjectBeingDeleted):
        request.outcome()


def test_a_subjects_deletion_with_no_live_memory_waiting_for_its_tenants_deletion_makes_no_operation(  # noqa: E501
    tenant, api_client, private_queue, settings, tmp_path
):
    """Stop 60's review found that ``POST /api/v1/deletions {"subject"}`` for a subject
    whose memories were all deleted one by one earlier (operation completed) and that has an
    export made since, sent while the tenant's deletion request is in flight, waited for it
    (the new operation's insert takes the tenant row's key-share lock, which the tenant's
    ``FOR UPDATE`` holds) and then answered 202 with a brand-new whole-subject operation
    holding no memory, in a tenant deleted by then, which completed at once while the
    tenant's operation was still pending.

    The stop's fix of that race covered a subject that still had a live memory only. The
    request now reads the tenant under its row's key-share lock before the insert
    (``services._tenant_deleted``) and answers the tenant's operation."""
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    system = SystemPrincipal(tenant_id=tenant.id)
    subject = SubjectFactory(tenant=tenant, external_id="user-1")
    memory = MemoryFactory(subject=subject, memory_key="ui.theme")
    MemoryFactory(subject=SubjectFactory(tenant=tenant, external_id="user-2"), memory_key="x")
    with tenant_scope(tenant.id):
        earlier = deletion_request(principal=system, memory_id=memory.id)
    assert deletion_run(operation_id=earlier.pk) == "completed"
    with tenant_scope(tenant.id):
        export_create(principal=system, subject_id=subject.id)  # made since: a new one is due

    with held_in_another_transaction(
        tenant.id, lambda: tenant_deletion_request(tenant_id=tenant.id)
    ):
        request = in_thread(
            lambda: api_client.post("/api/v1/deletions", {"subject": "user-1"}, format="json")
        )
        _until_it_waits(request)
        assert request.is_alive()  # it waits for the tenant's deletion
    request.wait(30)
    response = request.outcome()

    with tenant_scope(tenant.id):
        tenants = DeletionOperation.objects.get(target=DeletionOperation.Target.TENANT)
        made = list(
            DeletionOperation.objects.exclude(pk__in=[tenants.pk, earlier.pk]).values_list(
                "target", "memory_ids"
            )
        )
    assert made == [], response.content  # no new, empty operation in the deleted tenant
    assert response.json()["operation_id"] == str(tenants.pk)
