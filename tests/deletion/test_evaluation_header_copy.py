"""Stop 65's audit of deletion: a tenant's deletion of words that equal a column name (a CSV
header cell) or a JSON key of a shared evaluation dataset removed the whole file, other
tenants' cases with it.

docs/operations.md (the ``evaluation`` step) promises that a copy of the words in a case naming
other tenants only stays, and that a CSV or TSV file loses only its records about the memory
(since stop 50; ``test_evaluation_files.py::test_a_table_loses_only_the_records_about_the_memory``).
A header cell or a key is no case and no copy of anyone's memory: "query" is the name of a
column. Yet any agent could write the memory "query" (admission accepts it), delete it, and
the worker removed every shared table with a ``query`` column (the header's tenant cell,
"tenant", names nobody, so its copy was taken for the deleting tenant's), and every
mixed-tenant JSON dataset under a ``cases`` key (a copy in no case was judged by the whole
document, which names the deleting tenant), whole. Now a header or a key marks a file only by
naming the memory's id.
"""

import json

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.rls import tenant_scope
from tests.clients import client_for
from tests.deletion.conftest import eval_file
from tests.factories import AgentFactory, write_body

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_file_left():
    """Each deletion reads every file of the folder: leave none behind for later tests."""
    yield
    for name in ("shared-golden.csv", "shared-golden.json"):
        eval_file(name).unlink(missing_ok=True)


def _write_and_delete(tenant, content: str) -> str:
    """Tenant ``tenant``'s agent writes the memory ``content`` and deletes it; the deletion
    runs; return its status."""
    api = client_for(AgentFactory(tenant=tenant))
    written = api.post(
        "/api/v1/memories",
        write_body(
            subject="mallory", memory_type="project_constraint", memory_key="note", content=content
        ),
        format="json",
    )
    assert written.status_code == 201, written.content
    assert written.json()["decision"] == "accepted"
    deleted = api.delete(f"/api/v1/memories/{written.json()['memory']['id']}")
    assert deleted.status_code == 202, deleted.content
    with tenant_scope(tenant.id):
        return deletion_run(operation_id=deleted.json()["operation_id"])


def test_deleting_a_column_name_keeps_another_tenants_table(tenant, other_tenant):
    """Stop 65's audit of deletion: the header's cell "query" was read as the deleting
    tenant's copy of the memory "query", and the whole shared table went."""
    path = eval_file("shared-golden.csv")
    other_record = f"{other_tenant.slug},Which seat does Bob like?,Bob prefers aisle seats.\n"
    path.write_text("tenant,query,expected_answer\n" + other_record)

    assert _write_and_delete(tenant, "query") == "completed"

    # Nothing in the file is the deleting tenant's: the other tenant's record (and the header
    # that makes it readable) must stay, byte for byte.
    assert path.exists(), "the whole shared table was removed"
    assert path.read_text() == "tenant,query,expected_answer\n" + other_record


def test_deleting_a_json_key_keeps_another_tenants_cases(tenant, other_tenant):
    """Stop 65's audit of deletion: the key "cases" was read as a copy of the memory "cases"
    in no case, judged by the whole document (which names the deleting tenant), and the
    whole mixed-tenant dataset went."""
    path = eval_file("shared-golden.json")
    theirs = {"tenant": other_tenant.slug, "query": "Which seat?", "expected": "Aisle."}
    ours = {"tenant": tenant.slug, "query": "Which editor?", "expected": "Vim."}
    path.write_text(json.dumps({"cases": [theirs, ours]}))

    assert _write_and_delete(tenant, "cases") == "completed"

    assert path.exists(), "the whole shared dataset was removed"
    assert theirs in json.loads(path.read_text())["cases"]
    # A key is a field's name: the deleting tenant's own case, holding no copy, stays too.
    assert json.loads(path.read_text()) == {"cases": [theirs, ours]}
