"""Two worker processes deleting memories of the same export and evaluation file at once."""

import json
import threading

import pytest
from django.db import connection

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.deletion.worker import WorkerProcess
from memory_core.exports import export_create, export_path
from memory_core.principals import SystemPrincipal
from memory_core.rls import tenant_scope
from tests.celery_worker import unique_queue
from tests.deletion.conftest import eval_file
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def private_queue(settings):
    """Send the on-commit tasks to a queue nobody consumes; drop them at the end."""
    settings.CELERY_TASK_DEFAULT_QUEUE = unique_queue("concurrency")
    yield
    WorkerProcess(
        db_name=connection.settings_dict["NAME"], queue=settings.CELERY_TASK_DEFAULT_QUEUE
    ).purge()


def test_concurrent_runs_never_put_back_what_another_removed(owner, private_queue):
    memories = [MemoryFactory(subject=owner) for _ in range(24)]
    system = SystemPrincipal(tenant_id=owner.tenant_id)
    export = export_create(principal=system, subject_id=owner.id)
    golden = eval_file(f"concurrency-{owner.id}.json")
    golden.write_text(json.dumps({"cases": [{"expected_ids": [str(m.id)]} for m in memories]}))
    operations = [deletion_request(principal=system, memory_id=m.id) for m in memories]

    barrier = threading.Barrier(4)
    results, errors = [], []

    def worker(batch):
        try:
            barrier.wait()
            # As the Celery task runs it: in the operation's tenant (row-level security).
            with tenant_scope(owner.tenant_id):
                for operation in batch:
                    results.append(deletion_run(operation_id=operation.id))
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(operations[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors
    assert sorted(results) == ["completed"] * 24
    exported = export_path(export).read_text()
    golden_text = golden.read_text()
    assert [str(m.id) for m in memories if str(m.id) in exported] == []
    assert [str(m.id) for m in memories if str(m.id) in golden_text] == []
    golden.unlink()
