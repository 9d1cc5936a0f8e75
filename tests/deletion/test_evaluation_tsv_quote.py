"""Stop 65's audit of deletion: a copy of a deleted memory's words in a hand-written TSV line
of the deleting tenant stayed, and the deletion completed, when an earlier line of another
tenant opened a quotation mark.

Python's csv module reads a cell that begins with ``"`` up to the next ``"``, later lines
included: the other tenant's record swallows the deleting tenant's line. Stop 50's review made
the step *find* the copy in such a line (``Residue.records_about`` splits each physical line
at the delimiter), but whose it was was read from the swallowing record's tenant cell, the
other tenant's, so the purge kept it and the verification counted nothing: the operation said
``completed`` while the file still held the words, in a line that names the deleting tenant.
Now a copy in a line is judged by that line's own tenant cell too.

Stop 65's review of that fix: the test passed whenever the deletion failed, for any reason; and
a swallowed line whose copy is a quoted cell (a CSV writer quotes words holding a comma) was
split at the delimiter without quoting rules, no piece hashed to the words, and they stayed.
"""

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.models import DeletionOperation
from memory_core.rls import tenant_scope
from tests.deletion.conftest import eval_file, written_and_deleted

pytestmark = pytest.mark.django_db

WORDS = "Dana's locker code is kept in the blue binder."
COMMA_WORDS = "Dana's locker code, 4471, is kept in the blue binder."


@pytest.fixture
def table():
    path = eval_file("handwritten-golden.tsv")
    yield path
    path.unlink(missing_ok=True)  # every deletion reads every file of the folder


@pytest.fixture
def comma_table():
    path = eval_file("handwritten-golden.csv")
    yield path
    path.unlink(missing_ok=True)


def _write_and_delete(tenant, content: str):
    """Tenant ``tenant``'s agent writes the memory ``content`` and deletes it; the deletion
    runs; return its status and the evaluation step."""
    operation_id = written_and_deleted(tenant, content, subject="dana", key="locker")
    with tenant_scope(tenant.id):
        status = deletion_run(operation_id=operation_id)
        step = DeletionOperation.objects.get(pk=operation_id).steps.get(store="evaluation")
    return status, step


def test_a_line_swallowed_by_another_tenants_open_quote_loses_the_deleted_words(
    tenant, other_tenant, table
):
    """Stop 65's audit of deletion: the copy in the deleting tenant's own line was judged by
    the other tenant's cell of the record that swallowed it, kept, and the step verified."""
    header = "tenant\tquery\texpected_answer\n"
    theirs = f"{other_tenant.slug}\tWhich editor does Bob use?\tVim.\n"
    table.write_text(
        header
        + theirs
        # The other tenant's hand-written cell opens a quotation mark it never closes.
        + f'{other_tenant.slug}\t"Which seat does Bob like?\tAisle.\n'
        # The deleting tenant's own line, holding the words it deletes.
        + f"{tenant.slug}\tWhere is Dana's locker code?\t{WORDS}\n"
    )

    status, step = _write_and_delete(tenant, WORDS)

    # Stop 65's review: asserted as "not (completed and the words left)", the test passed
    # whenever the deletion failed. The record holding the line goes (the other tenant's
    # swallowing record with it: the safe side); the header and their other record stay.
    assert status == "completed", (step.status, step.evidence)
    assert table.read_text() == header + theirs


def test_a_swallowed_line_whose_copy_is_a_quoted_cell_loses_the_deleted_words(
    tenant, other_tenant, comma_table
):
    """Stop 65's audit of deletion: the deleting tenant's line, swallowed by another tenant's
    open quotation mark, quotes the words because they hold a comma; split at the delimiter
    without quoting rules, no piece hashed to them, and the step verified with them left."""
    header = "tenant,query,expected_answer\n"
    theirs = f"{other_tenant.slug},Which editor does Bob use?,Vim.\n"
    comma_table.write_text(
        header
        + theirs
        + f'{other_tenant.slug},"Which seat does Bob like?,Aisle.\n'
        + f'{tenant.slug},Where is the code?,"{COMMA_WORDS}"\n'
    )

    status, step = _write_and_delete(tenant, COMMA_WORDS)

    assert status == "completed", (step.status, step.evidence)
    assert comma_table.read_text() == header + theirs
