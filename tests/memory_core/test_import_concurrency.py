"""Two runs of one import at once (transactional: each run commits on its own): they take
turns (``locks.import_lock``; stop 55's audit of imports, failed on the code before)."""

import threading
import time
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from memory_core.locks import import_lock
from memory_core.management.commands import import_memories as import_module
from memory_core.models import Memory, Subject
from tests.memory_core.admission.test_commands import record
from tests.threads import in_thread, someone_waits_for_a_lock

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


def _hold_the_import_lock(holding, release):
    """Hold the lock imports take turns on until ``release`` is set, as a running import
    holds it until it commits."""
    with transaction.atomic():
        import_lock()
        holding.set()
        assert release.wait(60)


def _import_on_a_thread(path, err, *arguments):
    return in_thread(
        lambda: call_command(
            "import_memories", str(path), *arguments, stdout=StringIO(), stderr=err
        )
    )


def _until_it_waits_or_ends(command) -> None:
    deadline = time.monotonic() + 30
    while not someone_waits_for_a_lock("advisory") and command.is_alive():
        assert time.monotonic() < deadline, "the import neither waited nor ended"
        time.sleep(0.05)


def test_an_import_waiting_for_another_says_so_then_goes_on(tenant, tmp_path):
    """An import waits for another to commit (imports take turns, whatever their file or
    tenant: ``locks.import_lock``), and it waited without a word: run beside a large import,
    it printed nothing for minutes, as one that hangs (stop 68's audit of the commands). It
    says on stderr that it waits for another import, and when it goes on."""
    path = tmp_path / "in.jsonl"
    path.write_text(record(tenant))
    holding, release = threading.Event(), threading.Event()
    holder = in_thread(lambda: _hold_the_import_lock(holding, release), released=[holding])
    assert holding.wait(30)
    err = StringIO()
    command = _import_on_a_thread(path, err)
    try:
        _until_it_waits_or_ends(command)
        said_while_waiting = err.getvalue()
        assert command.is_alive(), f"it did not wait for the other import: {err.getvalue()}"
    finally:
        release.set()
        holder.outcome(30)
    command.outcome(60)
    assert (
        "waiting for another import to end: imports take turns, whatever their file or "
        "tenant, each until it commits\n"
    ) in said_while_waiting
    assert "the other import ended after" in err.getvalue()
    assert "stored 1/1 records" in err.getvalue()
    assert Memory.objects.filter(subject__external_id="user-9").count() == 1


@pytest.mark.parametrize("seconds", ["0", "0.5"])
def test_an_import_told_how_long_to_wait_for_another_stops_after_it(tenant, tmp_path, seconds):
    """``--lock-wait SECONDS`` bounds the wait for another import (0: none): past it the
    import stops with a sentence, nothing imported, where it would have waited as long as
    the other ran."""
    path = tmp_path / "in.jsonl"
    path.write_text(record(tenant))
    holding, release = threading.Event(), threading.Event()
    holder = in_thread(lambda: _hold_the_import_lock(holding, release), released=[holding])
    assert holding.wait(30)
    err = StringIO()
    try:
        started = time.monotonic()
        command = _import_on_a_thread(path, err, "--lock-wait", seconds)
        command.wait(30)  # it ends while the other import still runs
        took = time.monotonic() - started
    finally:
        release.set()
        holder.outcome(30)
    assert isinstance(command.error, CommandError), command.error
    assert str(command.error) == (
        f"Another import still held the import lock after {float(seconds):g} s (--lock-wait): "
        "nothing imported. Run this one again once that import has ended, or give a longer "
        "--lock-wait."
    )
    assert f"each until it commits, at most {float(seconds):g} s (--lock-wait)" in err.getvalue()
    assert took >= float(seconds)
    assert not Memory.objects.exists()
    # Once the other has ended, the same import goes through at once.
    call_command(
        "import_memories", str(path), "--lock-wait", seconds, stdout=StringIO(), stderr=err
    )
    assert Memory.objects.filter(subject__external_id="user-9").count() == 1
