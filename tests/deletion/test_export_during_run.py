"""An export made while a whole subject's deletion, requested before it, runs (stop 50's audit).

The portal offers the export while a deletion of the subject runs ("Read below what the export
holds while it runs, then download it again"). Only the deletion's request took the subject's
lock: its run's exports step unlinked every file in the subject's folder, an export's file
between its write and its row's commit (an Export naming no file: the download was a 500) and
its new file while it was written (its rename failed: a 500). The step now takes the
subject's lock, so an export in flight commits first and is then found with its row: made
after the run began, it is kept, without the deleted memories (since stop 55, as the traces
step keeps a later trace; before, it was removed whole).
"""

import re
import threading
import time

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse

from memory_core import exports as exports_module
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.exports import export_create, export_path
from memory_core.models import DeletionOperation, DeletionStep, Export
from memory_core.principals import SubjectPrincipal
from memory_core.rls import tenant_scope
from tests.factories import MemoryFactory
from tests.portal.conftest import make_login
from tests.threads import errors_of, in_thread, someone_waits_for_a_lock

pytestmark = pytest.mark.django_db(transaction=True)


def _deleting(subject, user_id=1):
    """Request the deletion of every memory of ``subject``, then write a new one; return the
    operation, the person's principal and the new memory."""
    MemoryFactory(subject=subject, content="User prefers tea.")
    user = SubjectPrincipal(tenant_id=subject.tenant_id, subject_id=subject.id, user_id=user_id)
    with tenant_scope(subject.tenant_id):
        operation = deletion_request(principal=user, subject_id=subject.id)
    return operation, user, MemoryFactory(subject=subject, content="User prefers coffee.")


def _paused(monkeypatch, name):
    """Pause ``exports.<name>`` until ``go``; return ``(reached, go)``."""
    reached, go = threading.Event(), threading.Event()
    real = getattr(exports_module, name)

    def paused(*args, **kwargs):
        reached.set()
        assert go.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(exports_module, name, paused)
    return reached, go


def _run_waiting_for_the_export(operation, go):
    """Start the operation's run, see it wait for the subject's lock (the export holds it),
    let the export go on; return the run's thread."""
    runner = in_thread(lambda: _run(operation), name="run")
    deadline = time.monotonic() + 30
    while runner.is_alive() and not someone_waits_for_a_lock("advisory"):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert runner.is_alive(), "the run did not wait for the export in flight"
    go.set()
    return runner


def _run(operation):
    with tenant_scope(operation.tenant_id):
        return deletion_run(operation_id=operation.id)


def _settled(operation, new) -> None:
    """The run completed and verified; the export made while it ran is kept, its file in
    place, with the memory written since and none of the deleted ones."""
    operation.refresh_from_db()
    assert operation.status == DeletionOperation.State.COMPLETED
    step = DeletionStep.objects.get(operation=operation, store="exports")
    assert step.status == DeletionStep.State.VERIFIED
    (kept,) = Export.objects.filter(subject_id=operation.subject_id)
    text = export_path(kept).read_text()
    assert str(new.id) in text
    assert not any(str(memory_id) in text for memory_id in operation.memory_ids)


@pytest.mark.parametrize("pause_at", ["write_json_atomic", "_events_by_memory"])
def test_an_export_in_flight_is_waited_for_then_removed_never_left_without_its_file(
    owner, monkeypatch, private_queue, pause_at
):
    """Paused after its file is in place (``write_json_atomic``) or while it is written
    (``_events_by_memory``, the new file open)."""
    operation, user, new = _deleting(owner)
    reached, go = _paused(monkeypatch, pause_at)

    def export():  # ExportView.post, in the request's transaction
        with tenant_scope(owner.tenant_id), transaction.atomic():
            made = export_create(principal=user)
            # What the view does next: FileResponse(export_path(export).open("rb")).
            return export_path(made).read_bytes()

    exporter = in_thread(export, name="export", released=[reached])
    assert reached.wait(60)
    runner = _run_waiting_for_the_export(operation, go)

    assert errors_of(exporter, runner) == []
    assert str(new.id) in exporter.result.decode()
    _settled(operation, new)


def test_the_portals_export_asked_during_a_deletion_downloads(owner, monkeypatch, private_queue):
    """End to end through the export page, which names the deletion under way."""
    login = make_login("alice", tenant=owner.tenant, role="end_user", subject=owner)
    alice_client = Client()
    alice_client.force_login(login)
    operation, _, new = _deleting(owner, user_id=login.pk)
    page = alice_client.get(reverse("portal:export")).content.decode()
    shown = re.search(r'name="shown_deletions" value="([^"]*)"', page).group(1)
    assert shown  # the page told her about the deletion under way
    reached, go = _paused(monkeypatch, "_events_by_memory")

    download = in_thread(
        lambda: alice_client.post(reverse("portal:export"), {"shown_deletions": shown}),
        name="download",
        released=[reached],
    )
    assert reached.wait(60)
    runner = _run_waiting_for_the_export(operation, go)

    assert errors_of(download, runner) == []
    response = download.result
    assert response.status_code == 200, response.status_code
    assert "User prefers coffee." in b"".join(response.streaming_content).decode()
    _settled(operation, new)
