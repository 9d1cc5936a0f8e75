"""Stop 66's review of its evaluation fix.

Stop 66 kept two things a deletion used to remove from a shared evaluation file: a table's
first row of labels (``Query,Expected Answer``) when the rest of the file shows it is the
header (``stores._heads_the_table``), and a mixed-tenant JSON dataset's name equal to the
deleted words (``stores._dataset_label``). The review built files in which those exemptions
kept a copy of the deleting tenant's words, or made the purge and the verification disagree.
"""

import json
import time

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.models import DeletionOperation
from memory_core.rls import tenant_scope
from tests.deletion.conftest import eval_file, written_and_deleted

pytestmark = pytest.mark.django_db

ROW = "Which seat does Bob like?,Bob prefers aisle seats.\n"
ROWS = ROW + "Where is the spare key?,Under the mat.\n"
NAMES = ("reviewed-golden.csv", "reviewed-golden.tsv", "reviewed-golden.json", "large.csv")


@pytest.fixture(autouse=True)
def _no_file_left():
    """Each deletion reads every file of the folder: leave none behind for later tests."""
    yield
    for name in NAMES:
        eval_file(name).unlink(missing_ok=True)


def _written(tenant, content: str) -> tuple[str, str]:
    """Tenant ``tenant``'s agent writes the memory ``content`` and asks for its deletion;
    return the operation's id and the memory's, for a file to cite before the deletion runs."""
    operation_id = written_and_deleted(tenant, content, subject="mallory", key="note")
    with tenant_scope(tenant.id):
        memory_id = DeletionOperation.objects.get(pk=operation_id).memory_ids[0]
    return operation_id, str(memory_id)


def _run(tenant, operation_id: str) -> tuple[str, str]:
    """Run the deletion once; return its status and its evaluation step's."""
    with tenant_scope(tenant.id):
        status = deletion_run(operation_id=operation_id)
        step = DeletionOperation.objects.get(pk=operation_id).steps.get(store="evaluation")
    return status, step.status


def _write_and_delete(tenant, content: str) -> tuple[str, str]:
    return _run(tenant, _written(tenant, content)[0])


# --- tables -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "words", "first_line"),
    [
        # Two labels to the csv module, the memory's words to a reader.
        (
            "reviewed-golden.csv",
            "Dana parks in bay 12, near the lift",
            "Dana parks in bay 12, near the lift\n",
        ),
        # A tab is whitespace to the content hash: the line is the sentence.
        (
            "reviewed-golden.tsv",
            "Dana parks in bay 12 near the lift",
            "Dana parks in bay 12\tnear the lift\n",
        ),
    ],
    ids=["csv", "tsv"],
)
def test_a_first_line_that_is_the_deleted_words_is_a_case_not_a_header(
    tenant, name, words, first_line
):
    """Its cells are labels and every row below is a question or a sentence, so the line was
    taken for the header and exempt whole: the memory's words, verbatim as the file's first
    line, stayed and the step verified. Column names are never a memory's words as a line."""
    rows = ROWS if name.endswith(".csv") else ROWS.replace(",", "\t")
    path = eval_file(name)
    path.write_text(first_line + rows)

    assert _write_and_delete(tenant, words) == ("completed", "verified")

    assert path.read_text() == rows


def test_a_header_left_alone_by_its_rows_going_is_judged_in_the_same_run(tenant):
    """The header of labels holds the words ("query"); the one row under it, which made it a
    header, cites the memory and went. The verification read what was left, a lone row of
    labels, as a case holding the words: the step failed, and only a second run removed it."""
    operation_id, memory_id = _written(tenant, "query")
    path = eval_file("reviewed-golden.csv")
    path.write_text(f"Query,Expected Answer\nWhat did I note?,{memory_id}\n")

    assert _run(tenant, operation_id) == ("completed", "verified")

    assert path.read_text() == ""


def test_a_header_with_a_column_without_a_name_stays(tenant):
    """The other direction: ``pandas.DataFrame.to_csv`` names the index column with an empty
    cell (``,Query,Expected Answer``). The fix claims such a header stays; its empty cell was
    no label, the row was read as a case, and the deletion of the memory "query" took it."""
    text = ",Query,Expected Answer\n0,Which seat does Bob like?,Bob prefers aisle seats.\n"
    path = eval_file("reviewed-golden.csv")
    path.write_text(text)

    assert _write_and_delete(tenant, "query") == ("completed", "verified")

    assert path.read_text() == text


def test_a_large_table_under_a_header_of_labels_is_read_in_linear_time(tenant):
    """50,000 records under a header of labels, the last one holding the words: a purge that
    judges what it keeps again (``stores._records_kept``) and a verification, in seconds."""
    rows = [
        f"Which seat does guest {n} like?,Guest {n} prefers aisle seats.\n" for n in range(50_000)
    ]
    path = eval_file("large.csv")
    path.write_text("Query,Expected Answer\n" + "".join(rows) + "Which set?,Golden set.\n")

    started = time.monotonic()
    assert _write_and_delete(tenant, "Golden set.") == ("completed", "verified")

    assert time.monotonic() - started < 20
    assert path.read_text() == "Query,Expected Answer\n" + "".join(rows)


# --- a dataset's name ---------------------------------------------------------------------


def _case(tenant, query: str, **more) -> dict:
    return {"tenant": tenant.slug, "query": query, **more}


def test_a_dataset_whose_every_case_is_the_deleters_keeps_no_name_of_its_words(
    tenant, other_tenant
):
    """Its one case is the deleting tenant's and names the other tenant too (a cross-tenant
    case: what must never be retrieved). A case naming the operation's tenant is its own,
    whatever else it names; yet the name counted the other tenant as the dataset's, and the
    words stayed as its name."""
    cross = _case(tenant, "Which seat?", forbidden={"tenant": other_tenant.slug, "text": "x"})
    path = eval_file("reviewed-golden.json")
    path.write_text(json.dumps({"name": "golden", "cases": [cross]}))

    assert _write_and_delete(tenant, "golden") == ("completed", "verified")

    assert not path.exists()


def test_one_case_with_a_name_and_a_context_list_naming_two_tenants_goes(tenant, other_tenant):
    """A document that is one case, of the deleting tenant (its context names it), whose
    ``name`` holds the words: its context is a list of objects naming two tenants, which read
    as a shared dataset's cases, and the words stayed as the dataset's name."""
    case = {
        "name": "golden",
        "query": "Which set did I pick?",
        "context": [
            {"tenant": tenant.slug, "text": "Picked last week."},
            {"tenant": other_tenant.slug, "text": "Not this one."},
        ],
    }
    path = eval_file("reviewed-golden.json")
    path.write_text(json.dumps(case))

    assert _write_and_delete(tenant, "golden") == ("completed", "verified")

    assert not path.exists()


def test_a_name_whose_other_tenants_case_goes_is_judged_in_the_same_run(tenant, other_tenant):
    """In the project's own format: the other tenant's case cites the deleting tenant's
    memory entry holding the words, so it goes with the entry (``_uncited``). The name was
    judged while that case was there, and kept; the verification read the dataset left, every
    case the deleting tenant's, and failed the step until a second run."""
    dataset = {
        "dataset": "golden",
        "memories": [{"id": "m1", "tenant": tenant.slug, "content": "golden"}],
        "cases": [
            {"case_id": "c1", "tenant": other_tenant.slug, "forbidden_memory_ids": ["m1"]},
            {"case_id": "c2", "tenant": tenant.slug, "request": "Which seat?"},
        ],
    }
    path = eval_file("reviewed-golden.json")
    path.write_text(json.dumps(dataset))

    assert _write_and_delete(tenant, "golden") == ("completed", "verified")

    assert not path.exists()


def test_a_large_document_of_named_datasets_is_read_in_linear_time(tenant, other_tenant):
    """5,500 datasets by name in one document of about 50,000 lines, each named as the deleted
    words and shared with another tenant, and one case of the deleting tenant holding them.
    Each dataset's name was judged by reading the fields of every dataset again: minutes."""
    shared = {"name": "golden", "cases": [_case(other_tenant, "Which seat?")]}
    document = {f"set-{n}": shared for n in range(5_500)}
    document["mine"] = {"cases": [_case(tenant, "Which set?", expected="golden")]}
    path = eval_file("reviewed-golden.json")
    path.write_text(json.dumps(document, indent=1))

    started = time.monotonic()
    assert _write_and_delete(tenant, "golden") == ("completed", "verified")

    assert time.monotonic() - started < 20
    assert json.loads(path.read_text()) == {**document, "mine": {"cases": []}}


# --- a first row of labels holding a deleted memory of two words or more -----------------


@pytest.mark.parametrize(
    ("name", "delimiter"),
    [("reviewed-golden.csv", ","), ("reviewed-golden.tsv", "\t")],
    ids=["csv", "tsv"],
)
def test_a_headerless_first_row_holding_the_deleted_words_in_a_cell_is_a_case(
    tenant, name, delimiter
):
    """A table without a header whose first case is short words (``User prefers Vim,yes``)
    over rows of sentences: its cells are labels, the rows below are not, so it was taken for
    the header and its cells for column names, and the memory "User prefers Vim" stayed, a
    verbatim copy, while the step verified. A column's name is one word ("query"); a cell of
    two or more words equal to a deleted memory's words is a memory, and the row a case."""
    rows = ROWS.replace(",", delimiter)
    path = eval_file(name)
    path.write_text(f"User prefers Vim{delimiter}yes\n" + rows)

    assert _write_and_delete(tenant, "User prefers Vim") == ("completed", "verified")

    assert path.read_text() == rows


def test_a_header_of_labels_goes_when_a_deleted_memory_is_one_of_its_names_of_two_words(tenant):
    """On purpose: the header ``Query,Expected Answer`` loses its row to a deletion of the
    memory "expected answer", and the rows under it stay, without their columns' names. Such
    a row cannot be told from a headerless table's first case (the test above), and a memory
    of a few words is a real one: deleting it is the safe side. A one-word name ("query") is
    still a column's name, and that header stays (``test_stop66_evaluation``)."""
    path = eval_file("reviewed-golden.csv")
    path.write_text("Query,Expected Answer\n" + ROWS)

    assert _write_and_delete(tenant, "expected answer") == ("completed", "verified")

    assert path.read_text() == ROWS
