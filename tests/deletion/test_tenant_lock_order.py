"""A tenant's deletion request (the tenant's rows locked in id order, no subject lock) against
a path that locks a subject's rows out of id order: an approval holds the pending row, then
locks the key's head, of a smaller id. PostgreSQL ended the cycle by failing the request's
wait, an OperationalError: a 500, or a failed ``delete_tenant``. The round now starts again
(found by a race audit of stop 29)."""

import threading

import pytest
from django.db import transaction

from memory_core.deletion.services import tenant_deletion_request
from memory_core.principals import SystemPrincipal
from memory_core.rls import tenant_scope
from memory_core.services import reviews
from memory_core.services.writes import memory_write
from tests.deletion.test_concurrency import _until_it_waits
from tests.factories import write_body
from tests.threads import in_thread

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
    tenant,
    private_queue,  # noqa: F811
):
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

    approval, request = _race(
        tenant.id,
        lambda: reviews.review_approve(
            principal=system, item_id=pending.review_item.id, reason="ok"
        ),
        target=reviews,
        name="_link_into_chain",
    )

    assert approval.error is None, approval.error
    assert request.outcome() is not None
