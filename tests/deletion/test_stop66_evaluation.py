"""Stop 66's fix of the evaluation items left open at stop 65.

docs/security.md ("Left open") kept two ways a deletion of words that are a name in a shared
evaluation file removed more than the memory's copies:

- a table headed by column names with spaces and no tenant column (``Query,Expected Answer``)
  lost its header row to a deletion of the memory "query": only a header of tokens or one
  naming a tenant column was a header, any other first record was a case;
- a mixed-tenant JSON dataset was removed whole when its name (``{"name": "golden", "cases":
  [...]}``) equalled a deleted memory's words: a scalar above the cases was judged by the
  whole document, which names the deleting tenant, and a copy in no case drops the document.

Now a first record of labels heads a table when the rest of the file is the table it heads
(``stores.table_header``), and a dataset's name is its own when the file says its cases are
other tenants' too (``stores._dataset_label``). Completeness stays: a data row holding the
words goes wherever the file's header is, and the deleting tenant's cases holding them go.
"""

import json

import pytest

from tests.deletion.conftest import eval_file
from tests.deletion.test_evaluation_header_copy import _write_and_delete
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db

SPACED_HEADER = "Query,Expected Answer\n"
ROW = "Which seat does Bob like?,Bob prefers aisle seats.\n"
NAMES = ("spaced-golden.csv", "spaced-golden.tsv", "named-golden.json")


@pytest.fixture(autouse=True)
def _no_file_left():
    """Each deletion reads every file of the folder: leave none behind for later tests."""
    yield
    for name in NAMES:
        eval_file(name).unlink(missing_ok=True)


# --- a header of column names with spaces --------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("spaced-golden.csv", SPACED_HEADER + ROW + "Where is the spare key?,Under the mat.\n"),
        (
            "spaced-golden.tsv",
            "Query\tExpected Answer\tNotes\n"
            "Which seat does Bob like?\tBob prefers aisle seats.\t\n"
            "Which editor?\tVim, with his own vimrc.\tSaid in chat 12.\n",
        ),
    ],
)
def test_a_header_of_spaced_column_names_stays_when_a_column_name_is_deleted(tenant, name, text):
    """Stop 65's "Left open": the header ``Query,Expected Answer`` (no tenant column, a name
    with a space) was read as a record, its cell "Query" as the deleting tenant's copy of the
    memory "query", and the row went; the records below it lost the names of their columns."""
    path = eval_file(name)
    path.write_text(text)

    assert _write_and_delete(tenant, "query") == "completed"

    assert path.read_text() == text


@pytest.mark.parametrize(
    ("words", "left"),
    [
        ("Dana's locker code is kept in the blue binder.", SPACED_HEADER + ROW),
        # A value below that is itself a label (the copy "query") leaves the first record's
        # kind undecided: a headerless table whose first case is short words looks the same
        # (the next test), so the header goes too, as before: the safe side.
        ("query", ROW),
    ],
)
def test_a_data_row_holding_the_words_under_a_spaced_header_still_goes(tenant, words, left):
    """The header alone is exempt: a record below it holding the words is a case, and goes."""
    path = eval_file("spaced-golden.csv")
    path.write_text(SPACED_HEADER + ROW + f'{words},"Something only the user knows, kept."\n')

    assert _write_and_delete(tenant, words) == "completed"

    assert path.read_text() == left


@pytest.mark.parametrize(
    ("text", "left"),
    [
        # The real header is the second record: the first is a case of short words.
        ("query,Blue binder\n" + SPACED_HEADER + ROW, ROW),
        # No header: the first case is short words, and so is a column of answers below.
        ("query,Blue binder\nWhich editor?,Vim\n" + ROW, "Which editor?,Vim\n" + ROW),
        # No header: a record below is as short, nothing tells the first from it.
        ("query,Blue binder\nFavourite colour,Green\n" + ROW, "Favourite colour,Green\n" + ROW),
        # The first record is not as wide as the table below it.
        ("query,Blue binder,Spare\n" + ROW, ROW),
    ],
)
def test_a_first_record_of_short_words_the_file_does_not_show_as_its_header_is_a_case(
    tenant, text, left
):
    """Completeness stays: a first record whose cells look like column names is a header only
    when the rest of the file is a table under it (as wide, no value below it a label).
    Otherwise it is a case, and holding the words it goes."""
    path = eval_file("spaced-golden.csv")
    path.write_text(text)

    assert _write_and_delete(tenant, "query") == "completed"

    assert path.read_text() == left


# --- a label above a mixed-tenant dataset's cases ------------------------------------------


def _case(tenant, query: str, expected: str) -> dict:
    return {"tenant": tenant.slug, "query": query, "expected": expected}


def test_a_mixed_tenant_datasets_name_equal_to_the_words_keeps_the_dataset(tenant, other_tenant):
    """Stop 65's "Left open": the dataset's name "golden", equal to the deleted memory's words,
    was a copy in no case judged by the whole document (which names the deleting tenant), and
    the file went whole, the other tenant's cases with it. The name is the dataset's; the
    deleting tenant's case holding the words still goes, the other tenant's stays."""
    path = eval_file("named-golden.json")
    theirs = _case(other_tenant, "Which seat?", "Aisle.")
    theirs_with_the_words = _case(other_tenant, "Which set?", "golden")
    ours = _case(tenant, "Which editor?", "Vim.")
    ours_with_the_words = _case(tenant, "Which set did I pick?", "golden")
    path.write_text(
        json.dumps(
            {
                "name": "golden",
                "cases": [theirs, ours_with_the_words, theirs_with_the_words, ours],
            }
        )
    )

    assert _write_and_delete(tenant, "golden") == "completed"

    assert path.exists(), "the whole shared dataset was removed"
    assert json.loads(path.read_text()) == {
        "name": "golden",
        "cases": [theirs, theirs_with_the_words, ours],
    }


def _theirs_by_a_memory_they_cite(tenant, other) -> dict:
    theirs = MemoryFactory(subject=SubjectFactory(tenant=other), content="Aisle.")
    cited = {"query": "Which seat?", "expected_ids": [str(theirs.id)]}
    return {"name": "golden", "cases": [_case(tenant, "q", "a"), cited]}


@pytest.mark.parametrize(
    "dataset",
    [
        # Every case is the deleting tenant's: the dataset, its name with it, is theirs.
        lambda tenant, other: {"name": "golden", "cases": [_case(tenant, "q", "a")]},
        # The dataset says it is the deleting tenant's.
        lambda tenant, other: {
            "tenant": tenant.slug,
            "name": "golden",
            "cases": [_case(other, "q", "a")],
        },
        # No case says whose it is.
        lambda tenant, other: {"name": "golden", "cases": [{"query": "q", "expected": "a"}]},
        # A case is another tenant's only through a memory it cites: the file does not say.
        _theirs_by_a_memory_they_cite,
        # Not a name: a case's own field, beside a list of its context.
        lambda tenant, other: {
            "query": "golden",
            "context": [{"tenant": tenant.slug}, {"tenant": other.slug}],
        },
        # A name that is no label: a sentence, as a memory's words are.
        lambda tenant, other: {
            "name": "Dana keeps the golden key.",
            "cases": [_case(tenant, "q", "a"), _case(other, "q", "a")],
        },
    ],
    ids=[
        "only-the-deleters-cases",
        "the-deleters-dataset",
        "no-case-says-whose",
        "another-tenant-only-through-a-memory",
        "a-cases-own-field",
        "a-sentence",
    ],
)
def test_a_scalar_above_the_cases_that_may_be_the_deleting_tenants_copy_still_goes(
    tenant, other_tenant, dataset
):
    """Completeness stays: a scalar above the cases is kept only as the name of a dataset the
    file says holds other tenants' cases; where it may be the deleting tenant's copy, the
    file goes whole, as before."""
    document = dataset(tenant, other_tenant)
    words = document.get("name") or document.get("query")
    path = eval_file("named-golden.json")
    path.write_text(json.dumps(document))

    assert _write_and_delete(tenant, words) == "completed"

    assert not path.exists()
