"""A memory's deletion rewrites the subject's export without it; the other records stay.

When a kept memory's event reason named the deleted memory's id (an agent's revoke,
"replaced by memory <id>", as the event in the database keeps it), the step's second pass
over the subject's folder, meant for files no row describes, rewrote the file the row
describes too, by the evaluation files' rule: the kept memory's whole record went, and the
file no longer matched its row (``memory_ids``, ``sha256``) (stop 55's audit of deletion).
"""

import hashlib
import json

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.exports import export_create, export_dir, export_path
from memory_core.models import Export, Memory
from memory_core.principals import SubjectPrincipal, SystemPrincipal
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def revoked_naming_its_successor(api_client, owner):
    """A memory an agent revoked with a reason naming the memory that replaces it (an id, no
    content); return both."""
    kept = MemoryFactory(subject=owner, memory_key="style.old", content="Old style note.")
    gone = MemoryFactory(subject=owner, memory_key="style.new", content="New style note.")
    revoked = api_client.post(
        f"/api/v1/memories/{kept.id}/revoke",
        {"reason": f"replaced by memory {gone.id}"},
        format="json",
    )
    assert revoked.status_code == 200, revoked.json()
    return kept, gone


def _export_copy(subject, memory):
    """An operator's copy of an export in the subject's folder, under another suffix."""
    folder = export_dir() / str(subject.tenant_id) / str(subject.id)
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / "export-copy.json.bak"
    copy.write_text(json.dumps({"memories": [{"id": str(memory.id), "content": memory.content}]}))
    return copy


def test_a_memorys_deletion_keeps_the_record_of_a_memory_whose_reason_names_it(api_client, owner):
    kept, gone = revoked_naming_its_successor(api_client, owner)
    system = SystemPrincipal(tenant_id=owner.tenant_id)
    export = export_create(principal=system, subject_id=owner.id)
    deleted = api_client.delete(f"/api/v1/memories/{gone.id}")
    assert deleted.status_code == 202, deleted.json()
    assert deletion_run(operation_id=deleted.json()["operation_id"]) == "completed"

    assert Memory.objects.get(pk=kept.id).status == "revoked"
    data = export_path(export).read_bytes()
    row = Export.objects.get(pk=export.pk)
    assert [m["id"] for m in json.loads(data)["memories"]] == [str(kept.id)]
    assert [str(i) for i in row.memory_ids] == [str(kept.id)]
    assert row.sha256 == hashlib.sha256(data).hexdigest()


def test_a_subjects_deletion_takes_every_file_of_its_export_folder(subject, settings, tmp_path):
    """docs/operations.md (retention, step 5): "A deletion of the subject ... its `exports`
    step scrubs and verifies every file in the subject's folder, rows or none"; and the step's
    verification: "no file of the subject's export folder contains the id". The tenant's
    deletion was made to take any file (stop 55); a subject's still read ``*.json`` only, so
    an operator's ``export-copy.json.bak`` in the subject's folder kept the memory and the
    step verified (stop 55's review)."""
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    memory = MemoryFactory(subject=subject, content="User lives at 12 Quay Street.")
    copy = _export_copy(subject, memory)
    person = SubjectPrincipal(tenant_id=subject.tenant_id, subject_id=subject.id, user_id=1)
    operation = deletion_request(principal=person, subject_id=subject.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    assert not copy.exists(), "a copy of the deleted subject's memory is left in its folder"


def test_a_memorys_deletion_leaves_no_file_of_the_subjects_folder_naming_it(
    subject, settings, tmp_path
):
    """The `exports` step's verification (docs/operations.md): "no file of the subject's export
    folder contains the id". A memory's deletion read ``*.json`` only: a ``.json.bak`` copy
    of an export in the subject's folder kept naming the deleted memory, with its words, and
    the step verified (stop 55's review)."""
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    gone = MemoryFactory(subject=subject, content="User lives at 12 Quay Street.")
    MemoryFactory(subject=subject, content="User's bank is Acme Savings.")
    folder = _export_copy(subject, gone).parent
    person = SubjectPrincipal(tenant_id=subject.tenant_id, subject_id=subject.id, user_id=1)
    operation = deletion_request(principal=person, memory_id=gone.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    naming = [
        p.name
        for p in folder.iterdir()
        if p.is_file() and str(gone.id) in p.read_text(errors="replace")
    ]
    assert naming == [], "a file of the subject's export folder still names the deleted memory"
