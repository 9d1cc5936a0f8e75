"""A kept run's removal locks the run's tenant row before its rows, and so does the run's own
cleanup now (both ``deletion.stores.evaluation_runs_remove``): the cleanup
deleted the rows first and the tenant row last, and the two deadlocked (the review of stop
53's change, which found it with threads)."""

import threading
import time

import pytest
from django.db import connection, transaction

from memory_core import tasks
from memory_core.deletion.services import deletion_request
from memory_core.deletion.stores import evaluation_runs_remove
from memory_core.evaluation.harness import evaluate_dataset
from memory_core.models import DeletionOperation, Tenant
from memory_core.rls import platform_scope, tenant_scope
from tests.deletion.test_evaluation_runs import dataset
from tests.threads import in_thread, someone_waits_for_a_lock


def _until(condition, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.django_db(transaction=True)
def test_a_runs_removal_and_the_runs_own_cleanup_do_not_deadlock(
    owner, owner_principal, memories, journal
):
    """memory_core/locks.py: "The order every path takes its locks in, so that no two wait
    for each other in a cycle"; docs/operations.md/eb57bd8: a run removed by a deletion
    "reports" it (``harness.RUN_REMOVED``) and the deletion's phase completes.

    A run of a dataset holding a person's words ends while that person's memory is deleted:
    an insert of the run is still in flight (here: a transaction holding the run tenant's
    row ``FOR KEY SHARE``, as every insert of the tenant does), the deletion's evaluation
    step queues for the tenant row ``FOR UPDATE``, and the run's cleanup queues behind it.
    The cleanup deleted the tenant's rows, children first, then waited for the tenant row,
    while the removal, holding it, cascaded into the children the cleanup had deleted:
    PostgreSQL reported a deadlock. Both take the tenant row first now."""
    target = memories[0]
    with platform_scope("test"):
        kept = evaluate_dataset(dataset(target.content, "Prefers trains."), keep=True)
        run_tenant = Tenant.objects.get(slug=kept["tenant_prefix"] + "t")
    with tenant_scope(owner.tenant_id):
        operation = deletion_request(principal=owner_principal, memory_id=target.id)

    holding, release = threading.Event(), threading.Event()

    def insert_in_flight():
        with platform_scope("a run's insert"), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT 1 FROM memory_core_tenant WHERE id = %s FOR KEY SHARE",
                    [str(run_tenant.pk)],
                )
            holding.set()
            release.wait(60)

    def deletion():
        with tenant_scope(owner.tenant_id):
            return tasks.deletion_run_task.apply(args=[str(operation.id)]).result

    def cleanup():  # harness.Run.cleanup's statement, in the command's platform mode
        with platform_scope("eval_retrieval"):
            evaluation_runs_remove([run_tenant.pk])

    insert = in_thread(insert_in_flight, name="insert", released=[holding])
    assert holding.wait(30)
    removal = in_thread(deletion, name="removal")
    assert _until(lambda: someone_waits_for_a_lock(sessions=1)), "the removal never queued"
    cleaning = in_thread(cleanup, name="cleanup")
    assert _until(lambda: someone_waits_for_a_lock(sessions=2)), "the cleanup never queued"
    release.set()
    insert.wait(60)
    removal.wait(120)
    cleaning.wait(120)

    assert cleaning.error is None, repr(cleaning.error)
    assert removal.error is None, repr(removal.error)
    status = DeletionOperation.objects.values_list("status", flat=True).get(pk=operation.pk)
    steps = {
        step.store: (step.status, step.last_error)
        for step in DeletionOperation.objects.get(pk=operation.pk).steps.all()
    }
    assert (removal.result, status) == ("completed", "completed"), steps
