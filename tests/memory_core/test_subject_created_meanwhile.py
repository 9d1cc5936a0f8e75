"""A write or an import about a new user whose subject another transaction creates meanwhile
(a subject token issued for the user at the same moment), then the whole subject's deletion
(transactional: each side commits on its own).

The write's insert of the subject waits for the other transaction's and then reads its row
back: that row must be read with the subject's lock shared, as the subjects read at the start
are (``services.memories.subjects_ensure_locked``, ``memory_core.locks``), so that the
deletion waits for the write to commit and deletes what it stored.
"""

import threading
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import transaction

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.embeddings import get_embedder
from memory_core.management.commands import import_memories as import_module
from memory_core.models import Memory, Status
from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.rls import tenant_scope
from memory_core.services.writes import memory_write
from memory_core.subject_tokens import subject_ensure
from tests.celery_worker import wait_for
from tests.deletion.conftest import private_queue, until_waiting_or_done  # noqa: F401 (a fixture)
from tests.factories import AgentFactory, write_body
from tests.memory_core.admission.test_commands import record
from tests.threads import in_thread, someone_waits_for_a_lock

pytestmark = pytest.mark.django_db(transaction=True)

NEW = "user-created-meanwhile"


def _deleted_after_storing_meanwhile(tenant, store, stored: threading.Event, go) -> tuple:
    """Run ``store()`` on a thread while another transaction creates subject ``NEW``; once it
    has stored its rows (``stored`` set, its transaction still open until ``go`` is set),
    request the whole subject's deletion, let ``store`` commit once the request waits for it
    (or has ended), and run the deletion. Return (what ``store`` returned, the deletion's
    outcome, the memories of ``NEW`` left undeleted)."""
    get_embedder().embed(["warm the model up outside the held transactions"])
    created, release_creator = threading.Event(), threading.Event()

    def create_subject():
        with tenant_scope(tenant.id), transaction.atomic():
            subject_ensure(tenant_id=tenant.id, user_id=NEW)
            created.set()
            assert release_creator.wait(30)

    def delete():
        with tenant_scope(tenant.id):
            return deletion_request(
                principal=SystemPrincipal(tenant_id=tenant.id), subject_external_id=NEW
            )

    creator = in_thread(create_subject, released=[created])
    assert created.wait(30), creator.error
    storer = in_thread(store, released=[stored])
    try:
        # The store's insert of the subject waits for the other transaction's.
        wait_for(
            lambda: someone_waits_for_a_lock("transactionid") or not storer.is_alive(),
            message="the store to wait for the subject's insert",
        )
        release_creator.set()
        creator.outcome(30)
        assert stored.wait(30), storer.error
        deleter = in_thread(delete)
        until_waiting_or_done(deleter)  # waits for the store in flight (or, unfixed, ends)
    finally:
        release_creator.set()
        go.set()
    result = storer.outcome(30)
    outcome = deletion_run(operation_id=deleter.outcome(30).id)
    with tenant_scope(tenant.id):
        left = list(
            Memory.objects.filter(subject__external_id=NEW)
            .exclude(status=Status.DELETED)
            .values_list("status", "content")
        )
    return result, outcome, left


def test_a_write_about_a_subject_created_meanwhile_is_deleted_with_the_subject(
    tenant,
    private_queue,  # noqa: F811
):
    """Stop 63's audit of races found that a write about a new user held no lock of the
    user's subject when another transaction created it meanwhile: ``_ensure_subjects``'s
    ``get_or_create`` waited for that insert and read the row back unlocked. The whole
    subject's deletion requested then neither waited for the write nor read its row: it
    completed having taken no memory, and the write committed after it, in use, its content
    kept. Now the write holds the subject's lock shared from its read on: the deletion waits
    for the write and deletes its memory."""
    principal = AgentPrincipal.from_agent(AgentFactory(tenant=tenant, name="writer"))
    stored, go = threading.Event(), threading.Event()

    def write():
        with tenant_scope(tenant.id), transaction.atomic():
            result = memory_write(
                principal=principal,
                data=write_body(subject=NEW, content="User prefers concise answers."),
            )
            stored.set()
            assert go.wait(30)
        return result

    result, outcome, left = _deleted_after_storing_meanwhile(tenant, write, stored, go)
    assert result.decision == "accepted"
    assert outcome == "completed"
    assert left == []


def test_an_import_about_a_subject_created_meanwhile_is_deleted_with_the_subject(
    tenant,
    tmp_path,
    monkeypatch,
    private_queue,  # noqa: F811
):
    """Stop 63's audit of races found the same gap in ``import_memories``: a missing subject
    was inserted with ``ignore_conflicts`` and read back with a plain query, so one another
    transaction created meanwhile was waited for, skipped and read without its lock, against
    ``Command._subjects``' own docstring. The whole subject's deletion completed having taken
    none of the import's rows, and the imported memory stayed in use. Now the import locks the
    subjects it creates, or finds created meanwhile: the deletion waits for it and deletes
    what it imported."""
    path = tmp_path / "in.jsonl"
    path.write_text(record(tenant, subject=NEW))
    stored, go = threading.Event(), threading.Event()
    real_store_many = import_module.memory_store_many

    def store_then_hold(**kwargs):
        rows = real_store_many(**kwargs)
        stored.set()  # its rows are inserted, its transaction not yet committed
        assert go.wait(30)
        return rows

    monkeypatch.setattr(import_module, "memory_store_many", store_then_hold)

    def run_import():
        call_command("import_memories", str(path), stdout=StringIO(), stderr=StringIO())

    _, outcome, left = _deleted_after_storing_meanwhile(tenant, run_import, stored, go)
    assert outcome == "completed"
    assert left == []
