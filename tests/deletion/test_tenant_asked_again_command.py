"""A whole tenant's deletion asked again with ``delete_tenant --yes --run``: it runs the
deletions the request re-drove too (stop 53's end-to-end review; the test failed on the code
before, which ran only the tenant's own and said completed)."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request, tenant_deletion_request
from memory_core.models import DeletionOperation
from tests.deletion.conftest import seed_everywhere

pytestmark = pytest.mark.django_db


def _status(operation_id):
    return DeletionOperation.objects.values_list("status", flat=True).get(pk=operation_id)


def test_delete_tenant_run_asked_again_reports_completed_while_the_redriven_deletions_wait(
    settings, tenant, owner, owner_principal, memories, journal
):
    """docs/operations.md ("A whole tenant"): asked again, the tenant's request re-drives its
    dead-lettered operation "and so is every other dead-lettered deletion of the tenant (a
    memory's, a key's) ... while one of them is unfinished it is the one answered, not the
    completed tenant operation"; docs/security.md "Stop 53": "It re-drives them all now, and
    answers the unfinished one". ``delete_tenant --yes --run`` "runs the steps in this
    process" and exits non-zero unless the operation completed (``require_completed``).

    The evaluation folder is missing (a mount down): two memories' deletions and then the
    tenant's are dead-lettered. The folder is fixed; the operator runs
    ``delete_tenant <slug> --yes --run``, as the docs say. The request re-drove all three,
    but ``--run`` ran only the tenant's own operation: the command printed ``"status":
    "completed"`` and exited 0, while the two memories' deletions were left ``pending`` and the
    evaluation dataset still named both deleted memories.
    """
    seeded = seed_everywhere(owner, memories)
    configured = settings.MEMLEDGER_EVAL_DATA_DIRS
    settings.MEMLEDGER_DELETION_MAX_ATTEMPTS = 1
    settings.MEMLEDGER_EVAL_DATA_DIRS = ["/nonexistent/memledger-eval"]  # a mount down
    first = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    assert deletion_run(operation_id=first.id) == "failed"
    second = deletion_request(principal=owner_principal, memory_id=memories[1].id)
    assert deletion_run(operation_id=second.id) == "failed"
    tenant_operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=tenant_operation.id) == "failed"
    for operation in (first, second):  # re-driven by the tenant's request, failed again
        assert deletion_run(operation_id=operation.id) == "failed"

    settings.MEMLEDGER_EVAL_DATA_DIRS = configured  # fixed
    out = StringIO()
    call_command("delete_tenant", tenant.slug, "--yes", "--run", stdout=out, stderr=StringIO())
    reported = json.loads(out.getvalue().strip().splitlines()[-1])

    assert reported["status"] == "completed"  # what the operator is told
    dataset = seeded["eval_path"].read_text()
    left = {
        str(operation.id): _status(operation.id)
        for operation in (first, second)
        if _status(operation.id) != "completed"
    }
    assert not left, (
        f"delete_tenant --run said completed, but the tenant's re-driven deletions {left} were "
        f"not run; the evaluation file still names the deleted memories: "
        f"{[str(m.id) in dataset for m in memories[:2]]}"
    )
