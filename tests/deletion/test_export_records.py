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
from memory_core.exports import export_create, export_path
from memory_core.models import Export, Memory
from memory_core.principals import SystemPrincipal
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def test_a_memorys_deletion_keeps_the_record_of_a_memory_whose_reason_names_it(api_client, owner):
    kept = MemoryFactory(subject=owner, memory_key="style.old", content="Old style note.")
    gone = MemoryFactory(subject=owner, memory_key="style.new", content="New style note.")
    revoked = api_client.post(
        f"/api/v1/memories/{kept.id}/revoke",
        {"reason": f"replaced by memory {gone.id}"},
        format="json",
    )
    assert revoked.status_code == 200, revoked.json()
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
