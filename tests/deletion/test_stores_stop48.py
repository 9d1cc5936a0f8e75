"""Steps of a deletion that could never complete, or completed with the words left behind:

- the traces step of an operation of many memories looked for the ids left in a trace with
  one regular expression of every id, which PostgreSQL refuses past ~800 ids;
- a tenant's identities step named the admin's history entries with one bound parameter per
  subject (65,535 at most), and gave each subject its row id as external id in one UPDATE,
  which the unique external id refused when another subject held that id;
- the evaluation step split JSON Lines files with ``str.splitlines``, which also breaks a
  line at U+2028, U+2029 and U+0085, characters a JSON string holds unescaped.
"""

import json
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request, tenant_deletion_request
from memory_core.deletion.stores import _admin_log_by_id
from memory_core.models import Memory, RetrievalTrace, Subject
from tests.factories import MemoryFactory, SubjectFactory, insert_memories

pytestmark = pytest.mark.django_db

LINE_SEPARATOR = "\u2028"


@pytest.fixture(autouse=True)
def own_eval_folder(settings, tmp_path):
    """The test's own evaluation folder and journal (no other test's files are scanned)."""
    folder = tmp_path / "eval"
    folder.mkdir()
    settings.MEMLEDGER_EVAL_DATA_DIRS = [str(folder)]
    settings.MEMLEDGER_DELETION_LEDGER = tmp_path / "deletion-ledger.jsonl"
    return folder


# --- traces -------------------------------------------------------------------------------

# Past what one regular expression of every id held (two forms each): ~800 ids.
MANY = 1_000


def _delete_key(owner, owner_principal, key):
    operation = deletion_request(
        principal=owner_principal, subject_id=owner.id, memory_key=key, time_limited=False
    )
    status = deletion_run(operation_id=operation.id)
    traces = operation.steps.get(store="traces")
    assert status == "completed", (traces.status, traces.last_error[:300])
    return operation


def test_a_keys_deletion_of_many_memories_scrubs_the_traces_citing_some(owner, owner_principal):
    insert_memories(owner, MANY, memory_class="episodic", memory_type="episode", memory_key="notes")
    kept = MemoryFactory(subject=owner)
    on_key = list(
        Memory.objects.filter(subject=owner, memory_key="notes").values_list("pk", flat=True)[:3]
    )
    trace = RetrievalTrace.objects.create(
        tenant_id=owner.tenant_id,
        subject=owner,
        mode="task",
        cited_ids=[*on_key, kept.id],
        selected_ids=[on_key[0], kept.id],
        stages={"candidates": [{"id": str(i)} for i in [*on_key, kept.id]]},
    )

    operation = _delete_key(owner, owner_principal, "notes")

    assert len(operation.memory_ids) == MANY
    trace.refresh_from_db()
    assert [str(i) for i in trace.cited_ids] == [str(kept.id)]
    assert trace.stages["candidates"] == [{"id": str(kept.id)}]


def test_with_many_ids_a_trace_naming_one_elsewhere_goes_as_with_few(owner, owner_principal):
    """What is looked for is the same for any number of ids: a trace still naming a deleted
    id in a list the scrub does not know (in capitals, or as ``uuid.hex``) goes; one naming
    only memories kept, or an id merely like a deleted one, stays."""
    insert_memories(owner, MANY, memory_class="episodic", memory_type="episode", memory_key="notes")
    kept = MemoryFactory(subject=owner)
    gone = list(
        Memory.objects.filter(subject=owner, memory_key="notes").values_list("pk", flat=True)[:3]
    )

    def trace(cited, **extra):
        return RetrievalTrace.objects.create(
            tenant_id=owner.tenant_id,
            subject=owner,
            mode="task",
            cited_ids=[cited, kept.id],
            stages={"candidates": [{"id": str(cited)}, {"id": str(kept.id)}], **extra},
        )

    in_capitals = trace(gone[0], notes=[str(gone[1]).upper()])
    as_hex = trace(gone[1], notes=[f"see {gone[2].hex}."])
    # One hex digit off a deleted id, in both forms: no deleted memory's.
    near = str(gone[2])[:-1] + ("0" if str(gone[2])[-1] != "0" else "1")
    clean = trace(gone[2], notes=[str(kept.id), near, near.replace("-", "")])

    _delete_key(owner, owner_principal, "notes")

    left = set(RetrievalTrace.objects.filter(subject=owner).values_list("pk", flat=True))
    assert in_capitals.pk not in left
    assert as_hex.pk not in left
    assert clean.pk in left
    clean.refresh_from_db()
    assert [str(i) for i in clean.cited_ids] == [str(kept.id)]


# --- a tenant's identities -----------------------------------------------------------------


def test_the_admins_history_of_many_rows_is_named_by_one_statement_of_few_parameters(tenant):
    """A statement carries at most 65,535 parameters (server-side binding): the ids went one
    parameter each, and a tenant of more subjects could never be deleted. Now the rows are
    named by a subquery, whatever their number (here 300, enough to tell)."""
    from django.contrib.admin.models import CHANGE, LogEntry

    subjects = [
        SubjectFactory(tenant=tenant, external_id=f"dana{n}@example.com") for n in range(300)
    ]
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-1")
    LogEntry.objects.log_actions(admin.pk, subjects[:2], CHANGE, "[]")
    statements = []

    def record(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        changed = _admin_log_by_id({Subject: Subject.objects.filter(tenant=tenant)})

    assert changed == 2
    [(sql, params)] = [s for s in statements if s[0].startswith("UPDATE")]
    assert len(params) < 10, len(params)
    history = dict(LogEntry.objects.values_list("object_id", "object_repr"))
    assert history == {str(s.pk): str(s.pk) for s in subjects[:2]}


def test_a_tenant_is_deleted_when_external_ids_are_other_subjects_row_ids(tenant):
    """An agent that sent a subject's UUID as the user_id of a write made a subject named by
    it: giving the first subject its row id as external id collided with the second (the
    unique external id of a tenant), and every run rolled back. Two subjects named by each
    other's row id (a cycle) no order of updates resolves either."""
    first = Subject.objects.create(tenant=tenant, external_id="dana@example.com")
    named_by_first = Subject.objects.create(
        tenant=tenant, external_id=str(first.id), display_name=str(first.id)
    )
    one, other = (Subject.objects.create(tenant=tenant, external_id=f"p{n}") for n in range(2))
    Subject.objects.filter(pk=one.pk).update(external_id=str(other.id))
    Subject.objects.filter(pk=other.pk).update(external_id=str(one.id))
    # Spelt like a row id, of no subject: it goes too.
    stray = Subject.objects.create(tenant=tenant, external_id=str(uuid.uuid4()))

    operation = tenant_deletion_request(tenant_id=tenant.id)
    status = deletion_run(operation_id=operation.id)

    identities = operation.steps.get(store="identities")
    assert status == "completed", (identities.status, identities.last_error[:200])
    assert identities.evidence["subjects_with_identity"] == 0
    names = dict(Subject.objects.filter(tenant=tenant).values_list("pk", "external_id"))
    assert names == {s.pk: str(s.pk) for s in (first, named_by_first, one, other, stray)}


# --- evaluation files -----------------------------------------------------------------------


def _write_jsonl(path, *cases):
    path.write_text(
        "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in cases), encoding="utf-8"
    )


def _delete(owner_principal, memory):
    operation = deletion_request(principal=owner_principal, memory_id=memory.id)
    status = deletion_run(operation_id=operation.id)
    return status, operation.steps.get(store="evaluation")


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_a_jsonl_rewrite_keeps_a_case_holding_a_line_separator_whole(
    owner, owner_principal, own_eval_folder, separator
):
    deleted = MemoryFactory(subject=owner)
    path = own_eval_folder / "golden.jsonl"
    other = {"query": f"first paragraph{separator}second paragraph", "expected": ["k-1"]}
    _write_jsonl(path, other, {"query": "q", "expected_ids": [str(deleted.id)]})

    status, _ = _delete(owner_principal, deleted)

    assert status == "completed"
    assert path.read_text(encoding="utf-8") == json.dumps(other, ensure_ascii=False) + "\n"


def test_a_jsonl_case_copying_the_content_is_found_though_it_holds_a_line_separator(
    owner, owner_principal, own_eval_folder
):
    deleted = MemoryFactory(subject=owner, content="Dana takes 20 mg of lisinopril daily.")
    path = own_eval_folder / "answers.jsonl"
    kept = {"query": "unrelated", "expected_answer": "Something else."}
    about = {
        "query": f"what does she take?{LINE_SEPARATOR}(from the chart)",
        "expected_answer": deleted.content,
    }
    # Windows line ends: the "\r" is no part of a case.
    path.write_bytes(
        "".join(json.dumps(c, ensure_ascii=False) + "\r\n" for c in (kept, about)).encode()
    )

    status, evaluation = _delete(owner_principal, deleted)

    assert status == "completed", evaluation.last_error
    assert path.read_text(encoding="utf-8") == json.dumps(kept) + "\n"


def test_a_csv_cell_copying_content_that_holds_a_line_separator_is_found(
    owner, owner_principal, own_eval_folder
):
    """A table is read in records, and its lines end as a text-mode read ends them (a
    spreadsheet's rows may end with "\\r"): a cell copying content that holds U+2028 was cut
    in two."""
    deleted = MemoryFactory(subject=owner, content=f"Dana's chart:{LINE_SEPARATOR}lisinopril.")
    path = own_eval_folder / "report.csv"
    path.write_text(f'query,answer\r"q","{deleted.content}"\r', encoding="utf-8")

    status, evaluation = _delete(owner_principal, deleted)

    assert status == "completed", evaluation.last_error
    assert path.read_bytes() == b"query,answer\r"  # the record went, the header stayed
