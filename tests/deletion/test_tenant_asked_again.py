"""A whole tenant's deletion asked again re-drives the tenant's other dead-lettered deletions
(stop 53's audit of deletion; the test failed on the code before, which re-drove only its own)."""

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import tenant_deletion_request
from memory_core.models import DeletionOperation

pytestmark = pytest.mark.django_db


def _status(operation_id):
    return DeletionOperation.objects.values_list("status", flat=True).get(pk=operation_id)


def test_tenant_deletion_asked_again_redrives_the_tenants_failed_memory_deletions(
    settings, tenant, memories, failed_memory_deletion
):
    """docs/operations.md, "Deletion reaches derived state": "a whole subject's (or tenant's)
    request re-drives the subject's (the tenant's) failed deletions of single memories and
    keys: their memories are in the ledger too, so the whole operation would not look for what
    those left"; and, "A whole tenant": "Asking again returns the operation; a dead-lettered
    one is re-driven (fresh attempts, as `deletion_retry`), since every memory of the tenant
    is in its ledger and no reviewer of the tenant can log in to retry it".

    An evaluation folder is missing (a mount down, or a misspelt setting): a memory's deletion
    is dead-lettered, then the tenant's deletion (which re-drives it once) is dead-lettered
    too, as is the memory's re-driven run. The folder is fixed and the operator runs
    `delete_tenant` again, as the docs say. Asked again, the request re-drove only the
    tenant's own operation: the memory's dead-lettered deletion stayed failed, and the
    evaluation dataset still named the deleted memory (and held its content), which the
    tenant operation never looks for, with no reviewer of the deleted tenant to retry it.
    """
    memory_operation, seeded = failed_memory_deletion
    assert _status(memory_operation.id) == "failed"
    deleted = memories[0]
    configured = settings.MEMLEDGER_EVAL_DATA_DIRS

    # The folder still missing: the tenant's deletion re-drives the memory's, and both fail.
    settings.MEMLEDGER_EVAL_DATA_DIRS = ["/nonexistent/memledger-eval"]
    tenant_operation = tenant_deletion_request(tenant_id=tenant.id)
    assert _status(memory_operation.id) == "pending"  # re-driven by the first request
    assert deletion_run(operation_id=tenant_operation.id) == "failed"
    assert deletion_run(operation_id=memory_operation.id) == "failed"

    # Fixed; the operator asks for the tenant's deletion again, and it runs.
    settings.MEMLEDGER_EVAL_DATA_DIRS = configured
    again = tenant_deletion_request(tenant_id=tenant.id)
    assert again.id == tenant_operation.id
    assert deletion_run(operation_id=tenant_operation.id) == "completed"

    still_cited = str(deleted.id) in seeded["eval_path"].read_text()
    assert _status(memory_operation.id) != "failed", (
        "the tenant's deletion asked again re-drove only its own operation: the memory's "
        f"deletion stays dead-lettered (evaluation file still names the memory: {still_cited}) "
        "while the tenant's deletion says completed"
    )
