"""A memory's deletion meeting a new export file that a process which died just now left.

Since stop 55's review (3e837b3) a memory's (or a key's) deletion leaves every
``.memledger-new-*`` file younger than ``files.ABANDONED_SECONDS`` (600 s) alone, "left to the
verification and the next run, which scrubs one a dead process left once it is old". The
verification reads the file and fails while it names the memory. But the task retries a
partial deletion with Celery's backoff (``COMMON``: factor 2, jitter) and the runner
dead-letters the operation at ``MEMLEDGER_DELETION_MAX_ATTEMPTS`` (8) runs: even with the
longest countdown each time, the eighth run comes 2+4+...+128 = 254 s after the first,
long before the file is 600 s old. The next run that would scrub it never comes: the
operation ends ``failed`` while the person's deleted memory stays in the export folder.

A memory's deletion takes the subject's lock in its exports step now, as a whole subject's
does: an export in flight is waited for, and a new file left after that is a dead process's,
scrubbed at once (the test failed on 3e837b3).
"""

import json
import os
import time as real_time

import pytest
from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings as django_settings
from django.utils import timezone

from memory_core import files as files_module
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.exports import export_dir
from memory_core.models import DeletionOperation
from memory_core.tasks import deletion_run_task
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


class _Clock:
    def __init__(self):
        self.offset = 0.0

    def time(self):
        return real_time.time() + self.offset


def test_a_memorys_deletion_is_not_dead_lettered_by_a_dead_writers_fresh_file(
    owner, owner_principal, settings, tmp_path, monkeypatch
):
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    gone = MemoryFactory(subject=owner, content="User lives at 12 Quay Street.")
    kept = MemoryFactory(subject=owner, content="User prefers tea.")
    folder = export_dir() / str(owner.tenant_id) / str(owner.id)
    folder.mkdir(parents=True, exist_ok=True)
    # An export killed (OOM, SIGKILL) while it wrote its new file: nothing will rename it.
    document = json.dumps(
        {"memories": [{"id": str(gone.id), "content": gone.content}, {"id": str(kept.id)}]}
    )
    left = folder / ".memledger-new-dead1234.json"
    left.write_text(document[:120])
    now = timezone.now().timestamp()
    os.utime(left, (now, now))

    clock = _Clock()
    monkeypatch.setattr(files_module, "time", clock)
    operation = deletion_request(principal=owner_principal, memory_id=gone.id)
    status = None
    for retries in range(django_settings.MEMLEDGER_DELETION_MAX_ATTEMPTS):
        status = deletion_run(operation_id=operation.id)
        if status != DeletionOperation.State.PARTIAL:
            break
        # The longest countdown the task's autoretry can give this retry (jitter makes it
        # shorter, never longer).
        clock.offset += get_exponential_backoff_interval(
            factor=int(deletion_run_task.retry_backoff),
            retries=retries,
            maximum=deletion_run_task.retry_backoff_max,
            full_jitter=False,
        )
    step = DeletionOperation.objects.get(pk=operation.id).steps.get(store="exports")
    assert status == DeletionOperation.State.COMPLETED, (
        f"status {status!r} after {clock.offset:.0f} s of retries (the file is scrubbed only "
        f"once {files_module.ABANDONED_SECONDS} s old); step: {step.last_error!r}"
    )
    assert not left.exists() or str(gone.id) not in left.read_text()
