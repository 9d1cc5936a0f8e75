"""Two runs of one import at once (transactional: each run commits on its own): they take
turns (``locks.import_lock``; stop 55's audit of imports, failed on the code before)."""

import threading
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory_core.management.commands import import_memories as import_module
from memory_core.models import Memory, Subject
from tests.memory_core.admission.test_commands import record
from tests.threads import in_thread

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_runs_of_one_import_at_once_store_each_record_once(tenant, tmp_path, monkeypatch):
    """docs/api.md: "A record already present (same subject, source.conversation_id,
    source.message_id and content hash) is skipped, so re-running an import is safe". A
    run is one transaction of minutes on a large file, and its "already present" is read
    before its own rows commit: a second run started meanwhile (a retry of an import that
    seemed stuck, a deploy script run on two hosts) read none of the first's rows, the
    subjects' locks both take are shared, and no constraint holds the fingerprint, so both
    stored every record: each memory twice, two chains on every key."""
    Subject.objects.create(tenant=tenant, external_id="user-9", display_name="user-9")
    path = tmp_path / "in.jsonl"
    path.write_text(record(tenant))
    stored, go = threading.Event(), threading.Event()
    real_store_many = import_module.memory_store_many

    def store_then_hold(**kwargs):
        rows = real_store_many(**kwargs)
        if threading.current_thread().name == "first":
            stored.set()  # its rows are inserted, its transaction not yet committed
            assert go.wait(60)
        return rows

    monkeypatch.setattr(import_module, "memory_store_many", store_then_hold)

    def run():
        call_command("import_memories", str(path), stdout=StringIO(), stderr=StringIO())

    first = in_thread(run, name="first", released=[stored])
    assert stored.wait(60)
    second = in_thread(run, name="second")
    second.join(5)  # it stores its rows and commits, or waits for the first
    go.set()
    first.outcome()
    second.wait()
    # Refused ("another import is running") or skipped as present: either is safe.
    assert second.error is None or isinstance(second.error, CommandError), second.error

    assert Memory.objects.filter(subject__external_id="user-9").count() == 1
