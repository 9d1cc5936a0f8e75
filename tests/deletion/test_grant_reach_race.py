"""An agent deletes a whole subject while another agent's batch about it is in flight (stop 51's
audit of races): the grant is checked once the batch has committed, under the subject's lock."""

import threading
import time

import pytest
from django.db import transaction

from memory_core.deletion.services import deletion_request
from memory_core.exceptions import PermissionDenied
from memory_core.models import DeletionOperation, Memory, Status, Subject
from memory_core.principals import AgentPrincipal
from memory_core.rls import tenant_scope
from memory_core.services.writes import memory_write, memory_write_batch
from tests.deletion.conftest import private_queue  # noqa: F401 (a fixture)
from tests.factories import AgentFactory, write_body
from tests.threads import in_thread, someone_waits_for_a_lock

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_agents_whole_subject_deletion_leaves_no_memory_a_batch_wrote_meanwhile(
    tenant,
    private_queue,  # noqa: F811
):
    """An agent deletes a subject "only when its grant reaches every memory of the subject;
    otherwise PermissionDenied" (deletion_request; docs/api.md), and a deletion of a subject
    waits for the writes about it in flight, "then deletes what it stored too"
    (memory_core.locks). The grant is checked before that wait: a batch of another agent
    committing meanwhile stores a memory the deleting agent's grant does not reach, and the
    subject's deletion completes around it."""
    prefs = AgentFactory(
        tenant=tenant, name="prefs", read_types=["user_preference"],
        write_types=["user_preference"],
    )  # fmt: skip
    ops = AgentFactory(tenant=tenant, name="ops")  # every type
    prefs_principal = AgentPrincipal.from_agent(prefs)
    ops_principal = AgentPrincipal.from_agent(ops)
    with tenant_scope(tenant.id):
        memory_write(principal=ops_principal, data=write_body(content="User prefers tea."))
        subject = Subject.objects.get(external_id="user-1")
    written, release = threading.Event(), threading.Event()

    def batch():
        with tenant_scope(tenant.id), transaction.atomic():
            results = memory_write_batch(
                principal=ops_principal,
                items=[
                    write_body(content="User prefers coffee."),  # supersedes the head
                    write_body(
                        memory_type="project_constraint",
                        memory_key="backend.language",
                        scope="project:atlas",
                        content="The atlas backend is written in Go.",
                    ),
                ],
            )
            written.set()
            assert release.wait(60)
            return results

    def delete():
        with tenant_scope(tenant.id), transaction.atomic():
            return deletion_request(principal=prefs_principal, subject_id=subject.id)

    w = in_thread(batch, name="batch", released=[written])
    assert written.wait(60) and w.error is None, w.error
    d = in_thread(delete, name="deletion")
    deadline = time.monotonic() + 30
    while not someone_waits_for_a_lock("advisory") and d.is_alive():
        assert time.monotonic() < deadline, "the deletion never waited for the batch"
        time.sleep(0.02)
    release.set()
    results = w.outcome(60)
    assert [r.decision for r in results] == ["accepted", "accepted"]
    try:
        operation = d.outcome(60)
    except PermissionDenied:
        operation = None  # refused whole: nothing deleted, as the grant check promises
    with tenant_scope(tenant.id):
        left = list(
            Memory.objects.filter(subject=subject)
            .exclude(status=Status.DELETED)
            .values_list("memory_type", "status")
        )
        target = operation and DeletionOperation.objects.get(pk=operation.pk).target
    # Either refused (nothing deleted) or every memory of the subject deleted: never a
    # whole subject's operation with the subject's memories left beside it.
    assert operation is None or left == [], (target, left)
