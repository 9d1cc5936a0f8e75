"""Stop 67's fix of a JSON dataset whose cases are under another key than ``cases``.

docs/security.md ("Left open", stop 66) kept one way a deletion of words that are a shared
evaluation dataset's name removed more than the memory's copies: a dataset keeping its cases
under ``examples``, ``data``, ``items``, ``samples`` or ``tests`` went whole when its name
equalled a deleted memory's words, every other tenant's case with it. Only an object holding
its cases under ``cases`` had its name exempt (``stores._dataset_label``): the name, a scalar
in no case, was judged by the whole document, which names the deleting tenant.

Now a document that is nothing but a dataset, its names and its list of cases under one of
those keys, has its name judged as under ``cases`` (stop 67's review: below the document
such an object is not told from a field of one case, and a name is a string or a number).
A case's own field beside a list of its own (``{"name", "query", "examples": [...]}``:
few-shot examples, a context), or above it, is no dataset's name, and a one-case document
holding the words still goes whole (stop 66's review). The deleting tenant's cases holding
the words go wherever the words are in them.
"""

import json
import time

import pytest

from tests.deletion.conftest import eval_file
from tests.deletion.test_stop66_evaluation_review import _write_and_delete
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db

WORDS = "Golden set"
NAME = "listed-golden.json"
KEYS = ["examples", "data", "items", "samples", "tests", "Examples", "DATA"]


@pytest.fixture(autouse=True)
def _no_file_left():
    """Each deletion reads every file of the folder: leave none behind for later tests."""
    yield
    eval_file(NAME).unlink(missing_ok=True)


def _case(tenant, query: str, **more) -> dict:
    return {"tenant": tenant.slug, "query": query, **more}


def _shared_cases(tenant, other_tenant) -> tuple[list[dict], list[dict]]:
    """Return the cases of a dataset shared by two tenants, and those a deletion of the
    deleting tenant's memory "Golden set" keeps: the deleting tenant's cases holding the words,
    as a value, nested deeper or as a label map's key, go; the other tenant's stay."""
    theirs = _case(other_tenant, "Which seat?", expected="Aisle.")
    theirs_with_the_words = _case(other_tenant, "Which set?", expected=WORDS)
    ours = _case(tenant, "Which editor?", expected="Vim.")
    ours_with_the_words = _case(tenant, "Which set did I pick?", expected=WORDS)
    ours_nested = _case(tenant, "Which set?", context={"memory": {"texts": ["x", WORDS]}})
    ours_keyed = _case(tenant, "Which label?", labels={WORDS: "pii"})
    cases = [theirs, ours_with_the_words, theirs_with_the_words, ours_nested, ours_keyed, ours]
    return cases, [theirs, theirs_with_the_words, ours]


@pytest.mark.parametrize("key", KEYS)
def test_a_mixed_tenant_datasets_name_under_another_cases_key_keeps_the_dataset(
    tenant, other_tenant, key
):
    """Stop 66's "Left open": the name "Golden set" above cases under ``examples`` (not ``cases``)
    was a copy in no case, judged by the whole document, and the file went whole, the other
    tenant's cases with it. The name is the dataset's, as under ``cases``; the deleting
    tenant's cases holding the words still go, and the step verifies what is left."""
    cases, kept = _shared_cases(tenant, other_tenant)
    path = eval_file(NAME)
    path.write_text(json.dumps({"name": WORDS, "version": "2", key: cases}))

    assert _write_and_delete(tenant, WORDS) == ("completed", "verified")

    assert path.exists(), "the whole shared dataset was removed"
    assert json.loads(path.read_text()) == {"name": WORDS, "version": "2", key: kept}


@pytest.mark.parametrize("key", ["examples", "data"])
def test_named_datasets_nested_in_a_document_keep_their_name_under_cases_only(
    tenant, other_tenant, key
):
    """Datasets by name in one document (``{"set-a": {"title", "cases"}, ...}``), one shared
    and named as the words, one the deleting tenant's holding them in a case: the shared one
    stays whole, the deleting tenant's loses its case. Under ``examples`` or ``data`` the
    document is not told from one case of the deleting tenant whose fields are objects
    (``{"input", "expected"}``, stop 67's review): it goes whole, the safe side."""
    shared = {"title": WORDS, "cases": [_case(other_tenant, "Which seat?")]}
    document = {
        "set-a": shared,
        "mine": {"title": "mine", "cases": [_case(tenant, "Which set?", expected=WORDS)]},
    }
    path = eval_file(NAME)
    path.write_text(json.dumps(document))

    assert _write_and_delete(tenant, WORDS) == ("completed", "verified")

    assert json.loads(path.read_text()) == {"set-a": shared, "mine": {"title": "mine", "cases": []}}

    for case in (shared, document["mine"]):
        case[key] = case.pop("cases")
    path.write_text(json.dumps(document))

    assert _write_and_delete(tenant, WORDS) == ("completed", "verified")

    assert not path.exists()


def test_a_large_document_of_named_datasets_under_cases_is_read_in_linear_time(
    tenant, other_tenant
):
    """5,500 datasets by name, each named as the deleted words under ``cases`` and shared
    with another tenant, and one of the deleting tenant's holding them in a case: whether the
    objects above a dataset hold nothing but datasets is read once an object, not once a
    name (``stores._holds_datasets``). (Under ``examples`` until stop 67's review, which
    makes such a document go whole.)"""
    shared = {"name": WORDS, "cases": [_case(other_tenant, "Which seat?")]}
    document = {f"set-{n}": shared for n in range(5_500)}
    document["mine"] = {"cases": [_case(tenant, "Which set?", expected=WORDS)]}
    path = eval_file(NAME)
    path.write_text(json.dumps(document, indent=1))

    started = time.monotonic()
    assert _write_and_delete(tenant, WORDS) == ("completed", "verified")

    assert time.monotonic() - started < 20
    assert json.loads(path.read_text()) == {**document, "mine": {"cases": []}}


def test_a_top_level_list_of_cases_loses_only_the_deleting_tenants_cases(tenant, other_tenant):
    """A dataset that is a list of cases, with no name: each case is judged alone, as under
    ``cases``; the deleting tenant's holding the words go, the other tenant's stay."""
    cases, kept = _shared_cases(tenant, other_tenant)
    path = eval_file(NAME)
    path.write_text(json.dumps(cases))

    assert _write_and_delete(tenant, WORDS) == ("completed", "verified")

    assert json.loads(path.read_text()) == kept


def _theirs_by_a_memory_they_cite(tenant, other, key) -> dict:
    theirs = MemoryFactory(subject=SubjectFactory(tenant=other), content="Aisle.")
    cited = {"query": "Which seat?", "expected_ids": [str(theirs.id)]}
    return {"name": WORDS, key: [_case(tenant, "q"), cited]}


@pytest.mark.parametrize("key", ["examples", "data", "items", "samples", "tests"])
@pytest.mark.parametrize(
    "dataset",
    [
        # Every case is the deleting tenant's: the dataset, its name with it, is theirs.
        lambda tenant, other, key: {"name": WORDS, key: [_case(tenant, "q")]},
        # Its one case names another tenant besides the deleting one: a cross-tenant case.
        lambda tenant, other, key: {
            "name": WORDS,
            key: [_case(tenant, "q", forbidden={"tenant": other.slug})],
        },
        # The dataset says it is the deleting tenant's.
        lambda tenant, other, key: {"tenant": tenant.slug, "name": WORDS, key: [_case(other, "q")]},
        # No case says whose it is.
        lambda tenant, other, key: {"name": WORDS, key: [{"query": "q", "expected": "a"}]},
        # A case is another tenant's only through a memory it cites: the file does not say.
        _theirs_by_a_memory_they_cite,
        # One case of the deleting tenant, its own list of examples naming two tenants: an
        # object with a case's field beside its list is no dataset, so its name no dataset's.
        lambda tenant, other, key: {
            "name": WORDS,
            "query": "Which set did I pick?",
            key: [_case(tenant, "Picked last week."), _case(other, "Not this one.")],
        },
        # The same, its list in an object of its own: the object is no dataset of a document
        # of datasets, but a field of the case.
        lambda tenant, other, key: {
            "query": "Which set did I pick?",
            "context": {"name": WORDS, key: [_case(tenant, "q"), _case(other, "q")]},
        },
        # The same, the case's field a label: still a field no dataset has.
        lambda tenant, other, key: {
            "name": WORDS,
            "expected": "Blue set",
            key: [_case(tenant, "q"), _case(other, "q")],
        },
        # A name that is no label: a sentence, as a memory's words are.
        lambda tenant, other, key: {
            "name": "Dana keeps the golden key.",
            key: [_case(tenant, "q"), _case(other, "q")],
        },
    ],
    ids=[
        "only-the-deleters-cases",
        "a-cross-tenant-case",
        "the-deleters-dataset",
        "no-case-says-whose",
        "another-tenant-only-through-a-memory",
        "one-case-with-a-list-of-its-own",
        "one-case-with-a-nested-list-of-its-own",
        "one-case-with-a-labels-field",
        "a-sentence",
    ],
)
def test_a_name_that_may_be_the_deleting_tenants_copy_still_goes(
    tenant, other_tenant, dataset, key
):
    """Completeness stays: a name above cases under another key is kept only where it would
    be under ``cases`` and the object is nothing but a dataset; where it may be the deleting
    tenant's copy, the file goes whole, as before."""
    document = dataset(tenant, other_tenant, key)
    path = eval_file(NAME)
    path.write_text(json.dumps(document))

    words = document.get("name") or document["context"]["name"]
    assert _write_and_delete(tenant, words) == ("completed", "verified")

    assert not path.exists()


def test_a_cases_list_below_a_cases_field_names_no_dataset(tenant, other_tenant):
    """A one-case document of the deleting tenant whose context holds a named list under
    ``cases`` naming two tenants (``{"query", "context": {"name", "cases": [...]}}``) kept
    the deleted words as the context's name, and the step verified: a ``cases`` list below
    a case's field is the case's own, and its name one of the case's fields, judged with the
    document, which goes."""
    document = {
        "query": "Which set did I pick?",
        "context": {
            "name": WORDS,
            "cases": [_case(tenant, "Which seat?"), _case(other_tenant, "Which seat?")],
        },
    }
    path = eval_file(NAME)
    path.write_text(json.dumps(document))

    assert _write_and_delete(tenant, WORDS) == ("completed", "verified")

    assert not path.exists() or WORDS not in path.read_text()


# --- stop 67's review ---------------------------------------------------------------------


def test_a_one_case_document_whose_fields_are_objects_names_no_dataset(tenant, other_tenant):
    """Stop 67's review: a document of datasets by name (``{"set-a": {...}, "mine": {...}}``)
    is not told from one case whose fields are objects (``{"input", "expected"}``), which the
    purge takes whole, the safe side. So a one-case document of the deleting tenant whose
    input held the words as a name beside its few-shot examples, one another tenant's, kept
    the words as "the dataset's name", and the step verified. Under ``examples``, ``data``,
    ``items``, ``samples`` or ``tests`` a dataset is the document itself only."""
    document = {
        "input": {"name": WORDS, "examples": [_case(other_tenant, "Which seat?")]},
        "expected": {"memories": [_case(tenant, "Which set did I pick?", expected="Blue")]},
    }
    path = eval_file(NAME)
    path.write_text(json.dumps(document))

    assert _write_and_delete(tenant, WORDS) == ("completed", "verified")

    assert not path.exists()


def test_a_dataset_only_object_holds_names_as_strings(tenant, other_tenant):
    """Stop 67's review: an object was "nothing but a dataset" when each key was a name's or
    a list of cases', whatever it held, so a one-case document of the deleting tenant holding
    its case under ``dataset`` (an object, its context naming the tenant) beside its few-shot
    ``examples`` kept the words as its name, and the step verified. A name is a string."""
    document = {
        "name": WORDS,
        "dataset": {"query": "Which set did I pick?", "context": [_case(tenant, "Picked.")]},
        "examples": [_case(other_tenant, "Which seat?")],
    }
    path = eval_file(NAME)
    path.write_text(json.dumps(document))

    assert _write_and_delete(tenant, WORDS) == ("completed", "verified")

    assert not path.exists()
