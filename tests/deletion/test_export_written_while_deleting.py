"""A memory's deletion running while an export of the same subject is being written.

The export's new file (``files.replacing``: ``.memledger-new-*``) sits in the subject's
export folder until it is renamed over its name. A memory's deletion's ``exports`` step reads
every file of that folder (stop 55) and rewrites or removes one naming the memory, the new
file included: the export's rename then fails (FileNotFoundError) or renames what the deletion
made of it. A whole tenant's deletion leaves such a file alone (``_still_written``, stop 53);
a memory's does not.

Stop 55's review of the exports step, which reads every file of the folder since: such a
file is left alone by every deletion now, as by a tenant's (the test failed before).
"""

import hashlib
import json
import os
import threading

import pytest
from django.db import transaction

from memory_core import files as files_module
from memory_core.deletion.runner import deletion_run
from memory_core.exports import export_create, export_path
from memory_core.models import Export
from memory_core.principals import SystemPrincipal
from memory_core.rls import tenant_scope
from tests.deletion.conftest import owner, private_queue, until_waiting_or_done  # noqa: F401
from tests.deletion.test_export_records import revoked_naming_its_successor
from tests.threads import in_thread


@pytest.mark.django_db(transaction=True)
def test_a_memorys_deletion_leaves_an_export_being_written_alone(
    api_client,
    owner,  # noqa: F811
    settings,
    tmp_path,
    private_queue,  # noqa: F811
    monkeypatch,
):
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    kept, gone = revoked_naming_its_successor(api_client, owner)
    deleted = api_client.delete(f"/api/v1/memories/{gone.id}")
    assert deleted.status_code == 202, deleted.json()
    operation_id = deleted.json()["operation_id"]
    tenant_id = owner.tenant_id

    reached, go = threading.Event(), threading.Event()
    real_replace = os.replace

    def paused_replace(src, dst, *args, **kwargs):
        # The export's new file is written and fsynced, not yet renamed over its name.
        if threading.current_thread().name == "export":
            reached.set()
            assert go.wait(60)
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(files_module.os, "replace", paused_replace)

    def export():
        with tenant_scope(tenant_id), transaction.atomic():
            return export_create(
                principal=SystemPrincipal(tenant_id=tenant_id), subject_id=owner.id
            )

    exporting = in_thread(export, name="export", released=[reached])
    try:
        assert reached.wait(60), exporting.error
        folder = tmp_path / str(tenant_id) / str(owner.id)
        assert [p.name[:15] for p in folder.iterdir()] == [".memledger-new-"]

        def run():
            with tenant_scope(tenant_id):
                return deletion_run(operation_id=operation_id)

        running = in_thread(run, name="deletion")
        until_waiting_or_done(running)
    finally:
        go.set()
    export_row = exporting.outcome(60)
    running.outcome(60)
    row = Export.objects.get(pk=export_row.pk)
    data = export_path(row).read_bytes()
    assert [str(i) for i in row.memory_ids] == [str(kept.id)]
    # The deletion rewrote the export's new file by the evaluation files' rule (the kept
    # memory's event names the deleted id), and the export renamed that over its name: the
    # person's export lacks a memory its row names, and no longer matches its hash.
    assert [m["id"] for m in json.loads(data)["memories"]] == [str(kept.id)]
    assert row.sha256 == hashlib.sha256(data).hexdigest()
