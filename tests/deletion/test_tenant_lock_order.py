"""A tenant's deletion request (the tenant's rows locked in id order, no subject lock) against
a path that locks a subject's rows out of id order: an approval holds the pending row, then
locks the key's head, of a smaller id. PostgreSQL ended the cycle by failing the request's
wait, an OperationalError: a 500, or a failed ``delete_tenant``. The round now starts again
(found by a race audit of stop 29)."""

import threading
import time

import pytest
from django.db import connection, transaction

from memory_core.deletion.services import tenant_deletion_request
from memory_core.principals import SystemPrincipal
from memory_core.rls import tenant_scope
from memory_core.services import reviews
from memory_core.services.writes import memory_write
from tests.deletion.test_concurrency import private_queue  # noqa: F401
from tests.factories import write_body

pytestmark = pytest.mark.django_db(transaction=True)


def _someone_waits():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] >= 1


def _race(tenant_id, first, *, target, name):
    paused, go = threading.Event(), threading.Event()
    errors, out = [], {}
    real = getattr(target, name)
    firsts = set()

    def held(*args, **kwargs):
        if threading.current_thread() in firsts and not paused.is_set():
            paused.set()
            assert go.wait(60)
        return real(*args, **kwargs)

    mp = pytest.MonkeyPatch()
    mp.setattr(target, name, held)

    def run_first():
        firsts.add(threading.current_thread())
        try:
            with tenant_scope(tenant_id), transaction.atomic():
                out["first"] = first()
        except Exception as exc:
            errors.append(("first", exc))
            paused.set()
        finally:
            connection.close()

    def run_tenant():
        try:
            out["tenant"] = tenant_deletion_request(tenant_id=tenant_id)
        except Exception as exc:
            errors.append(("tenant", exc))
        finally:
            connection.close()

    a = threading.Thread(target=run_first)
    a.start()
    assert paused.wait(60)
    b = threading.Thread(target=run_tenant)
    b.start()
    deadline = time.monotonic() + 30
    while b.is_alive() and not _someone_waits():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    go.set()
    a.join(60)
    b.join(60)
    mp.undo()
    return errors, out


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

    errors, out = _race(
        tenant.id,
        lambda: reviews.review_approve(
            principal=system, item_id=pending.review_item.id, reason="ok"
        ),
        target=reviews,
        name="_link_into_chain",
    )

    assert not errors, errors
    assert out["tenant"] is not None
