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

Stop 65's review of that fix: exempting every key and the first record whole kept deleted
words while the step verified: a key that is text (a label map's, a dataset keyed by the
words), the first row of a table without a header, every row of one whose header opens a
quotation mark it never closes. And a blank or comment line before the header made it data
again. Now only a key or a header cell that is a field's name (a token without spaces) is
exempt, and the header is the first record neither blank nor a comment that looks like one.
"""

import json

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.rls import tenant_scope
from tests.deletion.conftest import eval_file, written_and_deleted

pytestmark = pytest.mark.django_db

WORDS = "Dana's locker code is kept in the blue binder."
NAMES = (
    "shared-golden.csv",
    "shared-golden.json",
    "keyed-golden.json",
    "keyed-golden.jsonl",
    "labels.json",
    "headerless-golden.csv",
    "open-header-golden.tsv",
)


@pytest.fixture(autouse=True)
def _no_file_left():
    """Each deletion reads every file of the folder: leave none behind for later tests."""
    yield
    for name in NAMES:
        eval_file(name).unlink(missing_ok=True)


def _write_and_delete(tenant, content: str) -> str:
    """Tenant ``tenant``'s agent writes the memory ``content`` and deletes it; the deletion
    runs; return its status."""
    operation_id = written_and_deleted(tenant, content, subject="mallory", key="note")
    with tenant_scope(tenant.id):
        return deletion_run(operation_id=operation_id)


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


def test_json_key_holding_the_deleted_words_in_own_tenants_case(tenant, other_tenant):
    """Stop 65's audit of deletion: a JSON key was never read for a copy, so the deleting
    tenant's case holding the words as a key (a label map) stayed and the step verified; a key
    that is no field's name is now read as a value is, and the case goes."""
    path = eval_file("keyed-golden.json")
    ours = {"tenant": tenant.slug, "query": "Which note is sensitive?", "labels": {WORDS: "pii"}}
    theirs = {"tenant": other_tenant.slug, "query": "Which seat?", "expected": "Aisle."}
    path.write_text(json.dumps({"cases": [theirs, ours]}))

    assert _write_and_delete(tenant, WORDS) == "completed"

    assert json.loads(path.read_text()) == {"cases": [theirs]}


def test_jsonl_line_keyed_by_the_deleted_words(tenant):
    """Stop 65's audit of deletion: a JSONL line holding the words as a key stayed."""
    path = eval_file("keyed-golden.jsonl")
    kept = json.dumps({"tenant": tenant.slug, "answers": {"Other words.": True}}) + "\n"
    path.write_text(json.dumps({"tenant": tenant.slug, "answers": {WORDS: True}}) + "\n" + kept)

    assert _write_and_delete(tenant, WORDS) == "completed"

    assert path.read_text() == kept


def test_plain_mapping_keyed_by_the_deleted_words(tenant):
    """Stop 65's audit of deletion: a dataset mapping memory text to labels
    (``{"<words>": [...]}``) kept the words; the key is in no case, so the file goes."""
    path = eval_file("labels.json")
    path.write_text(json.dumps({WORDS: ["locker", "binder"]}))

    assert _write_and_delete(tenant, WORDS) == "completed"

    assert not path.exists()


def test_headerless_csv_keeps_the_words_in_its_first_record(tenant):
    """Stop 65's audit of deletion: the first record was exempt as the header whatever it
    held, so a table without a header row kept the words of its first row."""
    path = eval_file("headerless-golden.csv")
    kept = f"{tenant.slug},Which editor?,Vim.\n"
    path.write_text(f'{tenant.slug},Where is the code?,"{WORDS}"\n' + kept)

    assert _write_and_delete(tenant, WORDS) == "completed"

    assert path.read_text() == kept


def test_header_with_an_open_quote_swallows_every_record_into_the_exempt_header(tenant):
    """Stop 65's audit of deletion: a header cell opening a quotation mark it never closes
    made the csv module read the whole file as the (exempt) header; the lines it swallowed
    are now judged as data, and a header about the memory takes the table whole."""
    path = eval_file("open-header-golden.tsv")
    path.write_text(f'tenant\tquery\t"expected answer\n{tenant.slug}\tWhere is it?\t{WORDS}\n')

    assert _write_and_delete(tenant, WORDS) == "completed"

    assert not path.exists()


@pytest.mark.parametrize("before", ["\n", "# built from production cases\n"])
def test_blank_line_before_the_header_and_a_column_name_deletion(tenant, other_tenant, before):
    """Stop 65's audit of deletion: a leading blank or comment line made the header the
    second record, judged as data: its cell "query" was the deleting tenant's copy, and
    another tenant's table lost its header."""
    path = eval_file("shared-golden.csv")
    original = (
        f"{before}tenant,query,expected_answer\n"
        f"{other_tenant.slug},Which seat does Bob like?,Bob prefers aisle seats.\n"
    )
    path.write_text(original)

    assert _write_and_delete(tenant, "query") == "completed"

    assert path.read_text() == original
