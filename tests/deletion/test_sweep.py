"""The beat sweep: re-drives stuck operations, and two sweepers never pick the same one."""

import psycopg
import pytest
from django.db import connection

from memory_core.deletion.services import deletion_request
from memory_core.deletion.sweep import deletion_sweep
from memory_core.deletion.worker import WorkerProcess
from memory_core.models import DeletionOperation
from tests.celery_worker import unique_queue

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def private_queue(settings):
    """Send to a queue nobody consumes; drop what is left at the end."""
    queue = unique_queue("sweep")
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    yield queue
    WorkerProcess(db_name=connection.settings_dict["NAME"], queue=queue).purge()


def _conninfo():
    params = connection.get_connection_params()
    keep = ("host", "port", "user", "password", "dbname")
    return {k: v for k, v in params.items() if k in keep}


def test_sweep_skips_an_operation_another_sweeper_holds(private_queue, owner_principal, memories):
    first = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    second = deletion_request(principal=owner_principal, memory_id=memories[1].id)
    with psycopg.connect(**_conninfo()) as other:
        # Another beat scheduler (platform mode, like the sweep task: row-level security) is
        # in the middle of its round and holds the first row.
        other.execute("SELECT set_config('memledger.platform', 'on', false)")
        other.execute(
            "SELECT id FROM memory_core_deletionoperation WHERE id = %s FOR UPDATE", [first.id]
        )
        assert deletion_sweep(stale_seconds=0) == [str(second.id)]
    # Stamped when re-driven: the next round within the threshold leaves it alone.
    assert deletion_sweep(stale_seconds=60) == []
    assert DeletionOperation.objects.get(pk=second.id).last_attempt_at is not None


def test_sweep_ignores_completed_failed_and_fresh_operations(
    private_queue, owner_principal, memories
):
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    assert deletion_sweep(stale_seconds=60) == []  # just requested: not stuck yet
    DeletionOperation.objects.filter(pk=operation.id).update(status="failed")
    assert deletion_sweep(stale_seconds=0) == []
