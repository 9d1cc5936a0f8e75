"""What stop 53's audit of exports found (each test failed on the code before): a deletion's
rewrite of a leftover export file made it new again, kept another day; an export from a page
that named no deletion left out a memory whose deletion began meanwhile; and an export written
while its tenant was deleted answered 500."""

import os
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

import portal.views as portal_views
from memory_core import exports
from memory_core.deletion.retention import export_files_orphaned_remove
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request, tenant_deletion_request
from memory_core.models import Export
from memory_core.principals import SubjectPrincipal
from memory_core.rls import tenant_scope
from tests.deletion.conftest import private_queue, until_waiting_or_done  # noqa: F401
from tests.factories import MemoryFactory
from tests.portal.conftest import alice, alice_client, alice_memory, alice_subject  # noqa: F401
from tests.threads import in_thread


class _RequestFailed(Exception):
    """The request failed after export_create returned (a lost connection, a failed COMMIT)."""


@pytest.mark.django_db
def test_a_deletion_rewriting_an_orphan_export_file_does_not_extend_its_life(
    subject, settings, tmp_path
):
    """An export file no row names (its request failed after ``export_create`` returned, so
    its row rolled back: docs/operations.md:432-443, retention step 5) must be removed once
    it is ``MEMLEDGER_EXPORT_RETENTION_HOURS`` old: "hours an export's file and row are kept
    after it was made; the retention sweep then deletes them, and any file as old that no
    row names" (docs/operations.md:373); docs/portal.md:106: "The file is deleted
    MEMLEDGER_EXPORT_RETENTION_HOURS (24) after it was made".

    A later deletion of one of the subject's memories rewrites that orphan without the
    memory (``ExportsStore.purge`` -> ``_rewrite_file`` -> ``files.replacing``), which gives
    the file a new modification time; the orphan sweep judges age by that time alone, so the
    full copy of the person's other memories is kept another 24 hours after each such
    rewrite (each deletion of a memory the file holds, a retention sweep's too, restarts the
    clock)."""
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    gone = MemoryFactory(subject=subject, content="User lives at 12 Quay Street.")
    MemoryFactory(subject=subject, content="User's bank is Acme Savings.")
    person = SubjectPrincipal(tenant_id=subject.tenant_id, subject_id=subject.id, user_id=1)
    folder = exports.export_dir() / str(subject.tenant_id) / str(subject.id)
    with pytest.raises(_RequestFailed):  # the portal's request transaction rolls back
        with transaction.atomic():
            exports.export_create(principal=person)
            raise _RequestFailed
    assert not Export.objects.filter(subject=subject).exists()
    (orphan,) = folder.glob("*.json")
    made = (timezone.now() - timedelta(hours=23)).timestamp()
    os.utime(orphan, (made, made))

    operation = deletion_request(principal=person, memory_id=gone.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    assert "Acme Savings" in orphan.read_text()  # rewritten without the deleted memory only

    # Two hours on, the file was made 25 hours before: past the 24 hours it may be kept.
    export_files_orphaned_remove(now=timezone.now() + timedelta(hours=2))
    assert not orphan.exists(), "a full copy of the subject's memories outlived its 24 hours"


@pytest.mark.django_db(transaction=True)
def test_an_export_from_a_page_that_named_no_deletion_downloads_nothing_once_one_began(
    alice_client,  # noqa: F811
    alice,  # noqa: F811
    alice_memory,  # noqa: F811
    settings,
    tmp_path,
    monkeypatch,
):
    """docs/portal.md:106, ``/portal/export/``: "The form carries the deletions the page spoke of:
    a request from a page that did not say it (opened before the deletion began, or before a
    queued one was made) downloads nothing and shows the page again with 'Nothing was
    downloaded yet: ...'".

    ``ExportView.post`` reads the deletions in progress (``subject_deletions_in_progress``)
    before ``export_create`` takes the subject's lock, with nothing held in between. A
    deletion requested in that gap (the person deleting a memory in another tab) does not
    wait for the export: it commits, passes unseen (the page named none, none was read), and
    its memory is left out of the file. The person downloads an export that silently lacks a
    memory, from a page that told them it holds everything. Taking the subject's lock before
    the check makes such a deletion wait for the export instead (as it waits for
    ``export_create`` itself, docs/operations.md:115-119 "An export takes the same lock shared")."""
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    doomed = MemoryFactory(subject=alice_memory.subject, content="Alice likes jazz.")
    page = alice_client.get(reverse("portal:export")).content.decode()
    assert 'id="export-during-deletion"' not in page  # the page names no deletion
    tenant_id = alice_memory.tenant_id
    person = SubjectPrincipal(
        tenant_id=tenant_id, subject_id=alice_memory.subject_id, user_id=alice.pk
    )

    def delete_in_another_tab():
        with tenant_scope(tenant_id), transaction.atomic():
            deletion_request(principal=person, memory_id=doomed.id)

    real = portal_views.export_create
    tabs = []

    def a_deletion_is_asked_for_first(**kwargs):
        # After the view's check, before the export takes the subject's lock: the other
        # tab's deletion either commits now or waits for this request.
        tab = in_thread(delete_in_another_tab, name="other-tab")
        tabs.append(tab)
        until_waiting_or_done(tab)
        return real(**kwargs)

    monkeypatch.setattr(portal_views, "export_create", a_deletion_is_asked_for_first)
    try:
        response = alice_client.post(reverse("portal:export"), {"shown_deletions": ""})
        downloaded = response.has_header("Content-Disposition")
        body = b"".join(response.streaming_content).decode() if downloaded else ""
    finally:
        for tab in tabs:
            tab.outcome(60)
    assert not downloaded or "Alice likes jazz." in body, (
        "downloaded an export that leaves out a memory being deleted, from a page that "
        "named no deletion"
    )


@pytest.mark.django_db(transaction=True)
def test_an_export_written_while_its_tenant_is_deleted_is_answered_as_a_deleted_tenants_login(
    client,
    alice,  # noqa: F811
    alice_memory,  # noqa: F811
    settings,
    tmp_path,
    private_queue,  # noqa: F811
    monkeypatch,
):
    """docs/operations.md:222-228 (a whole tenant's deletion): an export in flight "either committed
    before the request took the row ... or waits for the request and is refused: ... the
    portal [answers] the 403 page of a login without membership, nothing of it is stored,
    and an export's file is removed with its row".

    The tenant's run does not wait for an export being written (``ExportsStore.purge`` takes
    the subjects' locks for a subject's deletion only: "A tenant's deletion closed the tenant
    to new rows"), and its ``exports`` step unlinks every ``*.json`` under the tenant's folder,
    the new file ``files.replacing`` is still writing included (``.memledger-new-*.json``).
    The export's rename then fails with FileNotFoundError, which the portal does not handle:
    the person's download is a 500 instead of the deleted tenant's 403 page (the failure stop
    50 fixed for a whole subject's deletion, tests/deletion/test_export_during_run.py)."""
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    client.force_login(alice)
    client.raise_request_exception = False
    tenant_id = alice_memory.tenant_id
    reached, go = threading.Event(), threading.Event()
    real = exports._events_by_memory

    def paused(*args, **kwargs):  # the export's new file is open, being written
        reached.set()
        assert go.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(exports, "_events_by_memory", paused)
    download = in_thread(
        lambda: client.post(reverse("portal:export"), {"shown_deletions": ""}),
        name="download",
        released=[reached],
    )
    try:
        assert reached.wait(60), download.error
        with tenant_scope(tenant_id):
            operation = tenant_deletion_request(tenant_id=tenant_id)
            # The file being written is left to the verification, which fails while it is
            # there, and to the next run.
            assert deletion_run(operation_id=operation.id) == "partial"
    finally:
        go.set()
    response = download.outcome(60)
    with tenant_scope(tenant_id):
        assert deletion_run(operation_id=operation.id) == "completed"
    assert not list(Path(settings.MEMLEDGER_EXPORT_DIR).rglob("*.json"))

    assert response.status_code == 403, response.status_code
    assert "this account is not linked to anyone's memories" in response.content.decode()
    assert [path for path in tmp_path.rglob("*") if path.is_file()] == []
