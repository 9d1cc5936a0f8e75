"""The evaluation step looks at every file of MEMLEDGER_EVAL_DATA_DIRS, linked folders too.

It looked only at ``*.json`` and ``*.jsonl`` spelt in lower case, and did not enter a
subfolder that is a symbolic link: a dataset named ``golden.JSON`` or ``golden.ndjson``, a CSV
or a text report, or one on shared storage linked into the folder, kept the deleted memory's
id and content while the step verified with ``files_scanned: 0``.

The folders are every tenant's (stop 49's audit): a copy of the deleted words in another
tenant's case is not the deleted memory's, and the step's figures that move with what the
folders held are not answered to agents.
"""

import json
import os
import uuid
from io import StringIO

import pytest
from django.core.management import call_command

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.models import DeletionStep
from memory_core.rls import tenant_scope
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def folder(settings, tmp_path):
    """The only evaluation folder: the test's own."""
    path = tmp_path / "eval"
    path.mkdir()
    settings.MEMLEDGER_EVAL_DATA_DIRS = [str(path)]
    return path


def _case(memory, query="What colour does the user like?"):
    return {"query": query, "expected_ids": [str(memory.id)], "expected_answer": memory.content}


def _delete(api_client, memory) -> dict:
    """Delete ``memory`` through the API, run the operation, and return the operation's
    answer and its evaluation step's."""
    response = api_client.delete(f"/api/v1/memories/{memory.id}")
    assert response.status_code == 202, response.content
    operation_id = response.json()["operation_id"]
    deletion_run(operation_id=operation_id)
    body = api_client.get(f"/api/v1/deletions/{operation_id}").json()
    step = next(step for step in body["steps"] if step["store"] == "evaluation")
    return body, step


def _stored(body) -> dict:
    """Return the evaluation step's evidence as stored (the admin's): with the figures the
    API withholds from clients (``purged``, ``files_scanned``, ``ms``)."""
    return DeletionStep.objects.get(operation_id=body["operation_id"], store="evaluation").evidence


@pytest.mark.parametrize("name", ["golden.JSON", "golden.Jsonl", "golden.ndjson", "golden.NDJSON"])
def test_a_dataset_whose_suffix_is_spelt_otherwise_is_scrubbed_case_by_case(
    api_client, memories, folder, name
):
    target, kept = memories[0], memories[1]
    path = folder / name
    cases = [_case(target), _case(kept, "What does the user read?")]
    if name.lower().endswith(".json"):
        path.write_text(json.dumps({"cases": cases}))
    else:
        path.write_text("".join(json.dumps(case) + "\n" for case in cases))

    body, step = _delete(api_client, target)

    assert body["status"] == "completed"
    text = path.read_text()
    assert str(target.id) not in text and target.content not in text
    assert str(kept.id) in text  # only the deleted memory's case went
    evidence = _stored(body)
    assert evidence["files_scanned"] == 1
    assert (evidence["files_citing"], evidence["files_with_content"]) == (0, 0)
    assert evidence["purged"] == {"rewritten": 1, "runs_removed": 0}


@pytest.mark.parametrize("name", ["report.txt", "notes", "golden.csv.bak"])
def test_any_other_file_naming_the_memory_is_removed(api_client, memories, folder, name):
    """A report has no cases to tell apart: it goes whole, as an unparsable JSON file naming
    the memory does."""
    target, kept = memories[0], memories[1]
    citing = folder / name
    citing.write_text(
        f"query,expected_id,answer\ncolour?,{str(target.id).upper()},x\nread?,{kept.id},y\n"
    )
    other = folder / f"other-{name}"
    other.write_text(f"read?,{kept.id},{kept.content}\n")

    body, step = _delete(api_client, target)

    assert body["status"] == "completed"
    assert not citing.exists()
    assert other.read_text() == f"read?,{kept.id},{kept.content}\n"  # about others only
    assert step["evidence"]["files_citing"] == 0
    assert _stored(body)["files_scanned"] == 1


def test_a_csv_holding_the_content_without_the_id_is_found_and_its_record_removed(
    api_client, memories, folder
):
    """A copy of the content in a cell (quoted, trivially different) and no id: the ledger's
    content hash finds it, as it does a JSON string."""
    target = memories[0]
    path = folder / "answers.csv"
    path.write_text(f'question,answer\ncolour?,"  {target.content.upper()} "\n')

    body, step = _delete(api_client, target)

    assert body["status"] == "completed"
    assert path.read_text() == "question,answer\n"
    assert step["evidence"]["files_with_content"] == 0


@pytest.mark.parametrize(("name", "sep"), [("golden.csv", ","), ("results.TSV", "\t")])
def test_a_table_loses_only_the_records_about_the_memory(api_client, memories, folder, name, sep):
    """A CSV or TSV file's records are its cases: the ones naming the memory (in any letter
    case, in a quoted field spanning lines) or copying its content go; the header and the
    other records stay byte for byte, their line ends too. Before, the whole file went, every
    other case with it (stop 49's open corner)."""
    target, kept = memories[0], memories[1]
    header = f"query{sep}expected_id{sep}answer\r\n"
    others = f"read?{sep}{kept.id}{sep}{kept.content}\r\n" + f'multi{sep}-{sep}"a\r\nb"\r\n'
    path = folder / name
    path.write_text(
        header
        + f"colour?{sep}{str(target.id).upper()}{sep}x\r\n"
        + others
        + f'why?{sep}-{sep}"because\n{target.id.hex} said so"\r\n'
        + f"copy?{sep}-{sep}{target.content}",
        newline="",
    )

    body, step = _delete(api_client, target)

    assert body["status"] == "completed"
    assert path.read_bytes().decode() == header + others
    assert (step["evidence"]["files_citing"], step["evidence"]["files_with_content"]) == (0, 0)
    assert _stored(body)["purged"] == {"rewritten": 1, "runs_removed": 0}


@pytest.mark.parametrize(
    "text",
    [
        # The header names the memory: what the columns are is not known without it.
        "query,{id}\nq,a\n",
        # Not a table: a field past the csv module's size limit.
        "query,answer\nq,{id}\n" + '"' + "x" * 200_000 + '"\n',
    ],
)
def test_a_table_without_a_header_of_its_own_or_not_parsable_goes_whole(
    api_client, memories, folder, text
):
    target = memories[0]
    path = folder / "golden.csv"
    path.write_text(text.format(id=target.id))

    body, step = _delete(api_client, target)

    assert body["status"] == "completed"
    assert not path.exists()
    assert step["status"] == "verified"


def test_a_dataset_in_a_linked_subfolder_is_scrubbed(api_client, memories, folder, tmp_path):
    target, kept = memories[0], memories[1]
    shared = tmp_path / "shared-eval"
    shared.mkdir()
    dataset = shared / "prod.jsonl"
    dataset.write_text(json.dumps(_case(target)) + "\n" + json.dumps(_case(kept)) + "\n")
    (folder / "mounted").symlink_to(shared, target_is_directory=True)
    # A link back up the tree, and a second link to the same folder: each walked once.
    (shared / "loop").symlink_to(folder, target_is_directory=True)
    (folder / "again").symlink_to(shared, target_is_directory=True)
    # A file linked in: the file it points to is rewritten, and the link stays.
    outside = tmp_path / "linked-file.json"
    outside.write_text(json.dumps([_case(target), _case(kept)]))
    (folder / "golden.json").symlink_to(outside)

    body, step = _delete(api_client, target)

    assert body["status"] == "completed"
    assert dataset.read_text() == json.dumps(_case(kept)) + "\n"
    assert json.loads(outside.read_text()) == [_case(kept)]
    assert (folder / "golden.json").is_symlink()
    evidence = _stored(body)
    assert evidence["files_scanned"] == 2
    assert evidence["purged"] == {"rewritten": 2, "runs_removed": 0}


def test_a_file_that_cannot_be_read_as_text_fails_the_step_until_it_is_dealt_with(
    api_client, memories, folder, settings
):
    """Nothing says a file the worker cannot read does not hold the memory: the step is not
    verified, and its error names the file."""
    settings.MEMLEDGER_DELETION_MAX_ATTEMPTS = 5
    target = memories[0]
    opaque = folder / "dataset.xlsx"
    opaque.write_bytes(b"PK\x03\x04\xff\xfe\x00" + str(target.id).encode())

    body, step = _delete(api_client, target)

    assert body["status"] != "completed"
    assert step["status"] == "failed"
    assert step["evidence"]["files_unreadable"] == 1
    # The operator is told which file (the step's last_error); the API's client, a count.
    assert "dataset.xlsx" not in json.dumps(body)
    [stored] = DeletionStep.objects.filter(operation_id=body["operation_id"], store="evaluation")
    assert "dataset.xlsx" in stored.last_error
    assert opaque.exists()  # not removed: only the operator knows what it is

    opaque.unlink()  # the operator moves it out, and the retry verifies
    assert deletion_run(operation_id=body["operation_id"]) == "completed"


def test_a_fifo_in_the_folder_is_not_read(api_client, memories, folder):
    """Only regular files are read: opening a FIFO with no writer blocks forever."""
    os.mkfifo(folder / "pipe")

    body, step = _delete(api_client, memories[0])

    assert body["status"] == "completed"
    assert _stored(body)["files_scanned"] == 0


@pytest.mark.parametrize("name", ["deep.json", "deep.jsonl"])
def test_a_dataset_nested_too_deeply_to_parse_is_read_as_text(api_client, memories, folder, name):
    """Arrays nested past Python's parser's depth raised RecursionError in the step (a
    failure every retry repeated); such a file or line is unparsable, read as text, and
    goes whole when it names the memory (a JSONL file line by line)."""
    target = memories[0]
    path = folder / name
    path.write_text("[" * 5000 + json.dumps(_case(target)) + "]" * 5000 + "\n")

    body, step = _delete(api_client, target)

    assert body["status"] == "completed"
    if name.endswith(".jsonl"):
        assert path.read_text() == ""  # its one line went
    else:
        assert not path.exists()


def test_the_status_answered_to_clients_names_no_folder_and_no_file(
    api_client, memories, folder, settings, tmp_path
):
    """A deletion's evidence is answered to agents (``GET /api/v1/deletions/{id}``) and shown
    to the user: counts. It named the evaluation folders that were missing
    (``missing_dirs``, the setting's paths) and the files the worker could not read
    (``problem``), paths of the server's disks; those stay the operator's (the step's
    ``last_error``, the log)."""
    settings.MEMLEDGER_DELETION_MAX_ATTEMPTS = 5
    absent = tmp_path / "eval-secret-mount"
    settings.MEMLEDGER_EVAL_DATA_DIRS = [str(folder), str(absent)]
    (folder / "private-report.xlsx").write_bytes(b"PK\x03\x04\xff\xfe\x00")

    body, step = _delete(api_client, memories[0])

    assert step["status"] == "failed"
    evidence = step["evidence"]
    assert (evidence["missing_dirs"], evidence["files_unreadable"], evidence["dirs"]) == (1, 1, 2)
    answered = json.dumps(body)
    for path in (str(tmp_path), "eval-secret-mount", "private-report.xlsx"):
        assert path not in answered, path
    assert "operator_detail" not in evidence
    assert "an operator must" in evidence["problem"]  # what is wrong, in counts
    listed = api_client.get("/api/v1/deletions").json()
    assert str(tmp_path) not in json.dumps(listed)
    stored = DeletionStep.objects.get(operation_id=body["operation_id"], store="evaluation")
    assert str(absent) in stored.last_error and "private-report.xlsx" in stored.last_error
    assert str(tmp_path) not in json.dumps(stored.evidence)


# --- whose case a copy of the words is (the folders are every tenant's) -------------------

SENTENCE = "User keeps a private diary written in Klingon."


def _delete_as_worker(api_client, memory) -> tuple[dict, dict]:
    """Delete ``memory`` through the API and run the operation as the worker does, acting for
    its tenant alone (``tenant_scope``: row-level security hides the other tenants' rows);
    return the operation's answer and its evaluation step's."""
    response = api_client.delete(f"/api/v1/memories/{memory.id}")
    assert response.status_code == 202, response.content
    operation_id = response.json()["operation_id"]
    with tenant_scope(memory.tenant_id):
        deletion_run(operation_id=operation_id)
    body = api_client.get(f"/api/v1/deletions/{operation_id}").json()
    return body, next(step for step in body["steps"] if step["store"] == "evaluation")


def _theirs_by_tenant_id(theirs, tenant):
    return "golden.jsonl", json.dumps(
        {
            "tenant_id": str(tenant.id),
            "query": "What does the user write in?",
            "expected_ids": [str(theirs.id)],
            "expected_answer": SENTENCE,
        }
    )


def _theirs_by_tenant_hex(theirs, tenant):
    return "golden.jsonl", json.dumps({"tenant_id": tenant.id.hex.upper(), "answer": SENTENCE})


def _theirs_by_slug_in_context(theirs, tenant):
    return "golden.jsonl", json.dumps(
        {"context": {"tenant_id": tenant.slug, "user_id": "user-1"}, "answer": SENTENCE}
    )


def _theirs_by_memory_id_only(theirs, tenant):
    return "golden.jsonl", json.dumps({"expected_ids": [str(theirs.id)], "answer": SENTENCE})


def _theirs_by_the_datasets_tenant(theirs, tenant):
    return "golden.json", json.dumps({"tenant": tenant.slug, "cases": [{"answer": SENTENCE}]})


def _theirs_by_a_csv_tenant_column(theirs, tenant):
    return "report.csv", f'tenant,query,answer\n{tenant.slug},q,"{SENTENCE}"\n'


@pytest.mark.parametrize(
    "case",
    [
        _theirs_by_tenant_id,
        _theirs_by_tenant_hex,
        _theirs_by_slug_in_context,
        _theirs_by_memory_id_only,
        _theirs_by_the_datasets_tenant,
        _theirs_by_a_csv_tenant_column,
    ],
)
def test_a_deletion_neither_removes_nor_reveals_another_tenants_case_holding_the_same_words(
    api_client, owner, other_tenant, folder, case
):
    """The evaluation folders are every tenant's. The step took any string hashing to the
    deleted memory's content for a copy of it, whoever's case held it: tenant A's agent,
    writing and deleting a guessed sentence, removed tenant B's case holding the same words
    (a case naming B's tenant by id or slug, B's dataset, or B's memory), and its deletion's
    status (``purged.rewritten`` 1 instead of 0, ``files_scanned``) told it some file had
    held them. Now a case that names another tenant, or memories none of which is the
    deleted one, stays; the purge and the verification agree, so the step verifies; and A's
    agent is answered what it is answered when no such case exists."""
    theirs = MemoryFactory(
        subject=SubjectFactory(tenant=other_tenant, external_id="user-1"), content=SENTENCE
    )
    name, text = case(theirs, other_tenant)
    path = folder / name
    path.write_text(text)

    body, step = _delete_as_worker(api_client, MemoryFactory(subject=owner, content=SENTENCE))

    assert path.read_text() == text, "tenant B's case was removed"
    assert body["status"] == "completed"
    assert step["status"] == "verified"
    assert {"purged", "files_scanned", "ms"}.isdisjoint(step["evidence"])
    # ...the answer of a deletion of the same words when no file holds them.
    path.unlink()
    _, alone = _delete_as_worker(api_client, MemoryFactory(subject=owner, content=SENTENCE))
    assert step["evidence"] == alone["evidence"]


def test_a_copy_in_the_operations_tenants_case_or_in_nobodys_still_goes(
    api_client, owner, tenant, other_tenant, folder
):
    """Completeness stays: a copy of the deleted words goes from a case that names the
    operation's tenant (by id or slug, or through another of its memories, whatever else it
    names), a dataset of that tenant, and a case or a report line naming no tenant and no
    memory (an id of nothing is no owner); another tenant's case beside them in the same file
    stays."""
    theirs = MemoryFactory(subject=SubjectFactory(tenant=other_tenant), content=SENTENCE)
    ours = MemoryFactory(subject=owner, content=SENTENCE)
    theirs_case = {"tenant_id": str(other_tenant.id), "answer": SENTENCE}
    kept = MemoryFactory(subject=owner, content="User reads science fiction.")
    lines = folder / "golden.jsonl"
    lines.write_text(
        "".join(
            json.dumps(case) + "\n"
            for case in (
                {"tenant_id": str(tenant.id), "expected_ids": [str(theirs.id)], "a": SENTENCE},
                {"context": {"tenant_id": tenant.slug}, "answer": SENTENCE},
                {"case_id": str(uuid.uuid4()), "answer": SENTENCE},
                # Another of the tenant's memories by id, the deleted one by its words only:
                # every memory id was taken for another tenant's (stop 49's review).
                {"memories": [{"id": str(kept.id)}, {"text": SENTENCE}]},
                theirs_case,
                {"answer": "Something else."},
            )
        )
    )
    dataset = folder / "dataset.json"
    dataset.write_text(
        json.dumps({"tenant": tenant.slug, "cases": [{"answer": SENTENCE}, {"answer": "k"}]})
    )
    report = folder / "report.csv"
    report.write_text(
        f'tenant,query,answer\n{other_tenant.slug},q,"{SENTENCE}"\n,q,"{SENTENCE}"\n'
        f'{tenant.slug},q,"{SENTENCE}"\n{tenant.slug},q,"Something else."\n'
    )

    body, step = _delete_as_worker(api_client, ours)

    assert body["status"] == "completed"
    assert lines.read_text() == json.dumps(theirs_case) + "\n" + '{"answer": "Something else."}\n'
    assert json.loads(dataset.read_text()) == {"tenant": tenant.slug, "cases": [{"answer": "k"}]}
    assert report.read_text() == (
        f'tenant,query,answer\n{other_tenant.slug},q,"{SENTENCE}"\n'
        f'{tenant.slug},q,"Something else."\n'
    )
    # the admin's figures keep the count
    assert _stored(body)["purged"] == {"rewritten": 3, "runs_removed": 0}
    assert step["status"] == "verified"


def test_the_evaluation_steps_shared_figures_are_left_out_of_every_answer_to_agents(
    api_client, memories, folder
):
    """The list answers each operation's steps as the detail does: without the evaluation
    step's purge counts, files scanned and duration (the stored step keeps them); the other
    steps keep theirs."""
    (folder / "golden.jsonl").write_text(json.dumps(_case(memories[0])) + "\n")

    body, _ = _delete(api_client, memories[0])

    [listed] = api_client.get("/api/v1/deletions").json()["results"]
    for answer in (body, listed):
        steps = {step["store"]: step["evidence"] for step in answer["steps"]}
        assert {"purged", "files_scanned", "ms"}.isdisjoint(steps["evaluation"])
        assert steps["evaluation"]["files_citing"] == 0
        assert "purged" in steps["primary"] and "ms" in steps["primary"]
    stored = _stored(body)
    assert stored["purged"] == {"rewritten": 1, "runs_removed": 0} and stored["files_scanned"] == 1
    assert "ms" in stored


def test_a_new_file_a_dead_rewrite_left_is_verified_then_scrubbed_once_abandoned(
    api_client, memories, folder
):
    """The purge leaves alone a new file another deletion's rewrite is writing
    (``files.being_written``: read as a dataset of its own, it was put back beside the
    dataset it had become, stop 49's audit). One left by a process that died mid-write may
    hold the words: the verification reads it (the step is not verified), and once it is
    older than ``files.ABANDONED_SECONDS`` the purge scrubs it as any file."""
    import os
    import time

    from memory_core.deletion.runner import deletion_run
    from memory_core.files import ABANDONED_SECONDS, NEW_FILE_PREFIX

    left = folder / f"{NEW_FILE_PREFIX}a1b2.jsonl"
    left.write_text(json.dumps(_case(memories[0])) + "\n")
    body, step = _delete(api_client, memories[0])
    assert step["status"] != "verified" and left.exists()
    stale = time.time() - ABANDONED_SECONDS - 5
    os.utime(left, (stale, stale))
    assert deletion_run(operation_id=body["operation_id"]) == "completed"
    assert not left.exists() or str(memories[0].id) not in left.read_text()


# --- tables read by hand (stop 50's review) ------------------------------------------------


def test_a_copy_after_a_row_with_an_unclosed_quote_is_still_removed(api_client, owner, folder):
    """A hand-written TSV (no quoting convention) whose earlier row's text starts with a
    quotation mark: the csv module reads the rest of the file as one field of that record,
    so the later record copying the deleted content is never seen. Until stop 50 the file's
    lines were read one by one and the copy's line was found (the file went): stop 50's
    review."""
    ours = MemoryFactory(subject=owner, content=SENTENCE)
    path = folder / "golden.tsv"
    path.write_text(
        f'query\tanswer\n"Which one, Rust or Go?\tGo\nWhat does the user write?\t{SENTENCE}\n'
    )

    body, step = _delete_as_worker(api_client, ours)

    assert body["status"] == "completed"
    assert step["status"] == "verified"
    assert not path.exists() or SENTENCE not in path.read_text(), path.read_text()


def test_a_naive_tsv_field_that_is_the_content_in_quotes_is_removed(api_client, owner, folder):
    """A TSV cell holding the deleted content verbatim, whose text begins with a quoted word:
    the csv module strips the quotes, so neither the field nor the record hashes to the
    content, and the copy stays while the step verifies."""
    content = '"Rust" is the language the user prefers.'
    ours = MemoryFactory(subject=owner, content=content)
    path = folder / "golden.tsv"
    path.write_text(f"query\tanswer\nfavourite language?\t{content}\nother\tx\n")

    body, step = _delete_as_worker(api_client, ours)

    assert body["status"] == "completed"
    assert step["status"] == "verified"
    assert not path.exists() or "the language the user prefers" not in path.read_text()


def test_a_csv_with_a_byte_order_mark_keeps_it(api_client, owner, folder):
    """The records kept are written back "byte for byte" (table_records' docstring,
    docs/operations.md: "the header and the other records stay byte for byte"); a CSV saved
    by a spreadsheet as "CSV UTF-8" starts with a byte order mark, without which the same
    spreadsheet opens its accented text as mojibake."""
    target = MemoryFactory(subject=owner)
    kept = MemoryFactory(subject=owner, content="User likes crème brûlée.")
    header = "query,expected_id,answer\r\n"
    others = f"dessert?,{kept.id},{kept.content}\r\n"
    path = folder / "golden.csv"
    path.write_bytes(("\ufeff" + header + f"colour?,{target.id},x\r\n" + others).encode("utf-8"))

    body, step = _delete_as_worker(api_client, target)

    assert body["status"] == "completed"
    assert path.read_bytes() == ("\ufeff" + header + others).encode("utf-8")


def test_a_linked_dataset_folder_that_cannot_be_reached_does_not_verify(
    settings, tmp_path, owner_principal, memories
):
    """docs/operations.md, the ``evaluation`` step: it reads every file under the folders of
    MEMLEDGER_EVAL_DATA_DIRS, "following subfolders that are symbolic links (shared storage
    mounted there)"; "a file the worker cannot read ... and a subfolder it cannot list, are
    left as they are and fail the step: nothing says they do not hold the memory", and "a
    folder the step cannot see is not 'verified'". The link dangling while its storage was
    unmounted was skipped as "a link to nothing", and the operation completed (stop 54's
    audit of deletion)."""
    eval_dir = tmp_path / "eval"
    eval_dir.mkdir()
    storage = tmp_path / "nfs" / "datasets"  # the shared storage
    storage.mkdir(parents=True)
    dataset = storage / "golden.jsonl"
    dataset.write_text(json.dumps({"query": "q", "expected_ids": [str(memories[0].id)]}) + "\n")
    os.symlink(storage, eval_dir / "shared")  # mounted into the evaluation folder
    settings.MEMLEDGER_EVAL_DATA_DIRS = [str(eval_dir)]

    storage.rename(tmp_path / "nfs" / "unmounted")  # the mount is down: the link dangles
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    status = deletion_run(operation_id=operation.id)
    (tmp_path / "nfs" / "unmounted").rename(storage)  # back up

    step = operation.steps.get(store="evaluation")
    assert status != "completed" and step.status != "verified"
    assert "shared" in step.last_error  # the link that cannot be followed, named
    assert deletion_run(operation_id=operation.id) == "completed"  # once the mount is back
    assert str(memories[0].id) not in dataset.read_text()


@pytest.mark.parametrize("name", ["golden-lines.json", "golden-lines.jsonl"])
def test_a_copy_of_the_content_in_json_lines_named_json_goes(owner, owner_principal, folder, name):
    """One JSON object a line under a `.json` name (HuggingFace's ``to_json`` writes so) is no
    JSON document: it was read as a text report, whose lines (or their CSV fields) must be the
    content, so the copy inside a line's JSON string stayed and the step verified (stop 55's
    audit of deletion). It is read and rewritten as JSON Lines now."""
    words = "User keeps a pet axolotl named Bartholomew."
    memory = MemoryFactory(subject=owner, content=words)
    other = {"query": "unrelated", "expected_answer": "Something else entirely."}
    path = folder / name
    path.write_text(
        json.dumps({"query": "what pet does the user keep?", "expected_answer": words})
        + "\n"
        + json.dumps(other)
        + "\n"
    )
    operation = deletion_request(principal=owner_principal, memory_id=memory.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    assert [json.loads(line) for line in path.read_text().splitlines()] == [other]


def test_an_evaluation_setting_naming_a_file_inside_data_dir_fails_the_step(
    owner, owner_principal, settings, tmp_path
):
    """``MEMLEDGER_EVAL_DATA_DIRS`` naming a dataset's file inside ``DATA_DIR`` in its folder's
    place: exempted as memledger's own folder not made yet, it was neither read (the step
    walks folders) nor reported, and the step verified while the file named the memory
    (stop 55's audit of deletion). It is reported as a folder that is not one now."""
    from memory_core.deletion.stores import eval_dirs_missing

    settings.DATA_DIR = tmp_path
    dataset = tmp_path / "golden.jsonl"
    settings.MEMLEDGER_EVAL_DATA_DIRS = [str(dataset), str(tmp_path / "not-made-yet")]
    memory = MemoryFactory(subject=owner, content="User keeps a pet axolotl.")
    dataset.write_text(json.dumps(_case(memory)) + "\n")
    assert eval_dirs_missing() == [str(dataset)]  # the folder not made yet is still exempt

    operation = deletion_request(principal=owner_principal, memory_id=memory.id)
    assert deletion_run(operation_id=operation.id) != "completed"
    step = DeletionStep.objects.get(operation=operation, store="evaluation")
    assert step.status != DeletionStep.State.VERIFIED


def _entry(local_id, content, tenant, key, **fields):
    """A memory entry of the project's dataset format (../shared/eval/FORMAT.md)."""
    return {"id": local_id, "tenant": tenant.slug, "subject": "u",
            "memory_type": "user_preference", "memory_key": key, "scope": "global",
            "content": content,
            "authority": "explicit_user", **fields}  # fmt: skip


def _format_case(case_id, tenant, **ids):
    return {"case_id": case_id, "request": "What does the user like?",
            "intent": "load_preferences", "context": {"tenant_id": tenant.slug, "user_id": "u"},
            **ids}  # fmt: skip


def test_a_dataset_in_the_format_still_runs_after_a_deletion_scrubs_it(
    owner, owner_principal, tenant, folder, tmp_path
):
    """Stop 59's audit of evaluation found that a dataset in the project's own format
    (FORMAT.md) was refused by ``eval_retrieval`` once a deletion scrubbed it: the deleted
    memory's entry went (its content is a copy of the words), but the cases citing it by the
    file's own id stayed ("names 'm1', which no memory of the file has"). Every case citing
    an entry that went now goes whole (by ``required_memory_ids``, ``ranked_before`` or any
    other id list), an entry superseding it only loses its ``supersedes`` (it holds none of
    the words), and the file still runs."""
    target = MemoryFactory(subject=owner, content="Prefers green tea in the morning.")
    kept = MemoryFactory(subject=owner, content="Reads science fiction at night.")
    path = folder / "golden.json"
    path.write_text(
        json.dumps({
            "dataset": "from-production",
            "memories": [
                _entry("m1", target.content, tenant, "drink"),
                _entry("m2", kept.content, tenant, "books"),
                _entry("m3", "Prefers black tea in the evening.", tenant, "drink",
                       supersedes="m1"),
            ],
            "cases": [
                _format_case("c1", tenant, required_memory_ids=["m1"]),
                _format_case("c2", tenant, acceptable_memory_ids=["m2"]),
                _format_case("c3", tenant, required_memory_ids=["m3"],
                             ranked_before=[["m3", "m1"]]),
                _format_case("c4", tenant, required_memory_ids=["m3"],
                             forbidden_memory_ids=["m1"]),
                _format_case("c5", tenant, required_memory_ids=["m3"]),
            ],
        })
    )  # fmt: skip

    operation = deletion_request(principal=owner_principal, memory_id=target.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    scrubbed = json.loads(path.read_text())
    assert target.content not in path.read_text()
    assert [case["case_id"] for case in scrubbed["cases"]] == ["c2", "c5"]
    assert [m["id"] for m in scrubbed["memories"]] == ["m2", "m3"]
    assert "supersedes" not in scrubbed["memories"][1]

    out = tmp_path / "out.json"
    call_command("eval_retrieval", "--dataset", str(path), "--json", str(out), stdout=StringIO())
    assert json.loads(out.read_text())["cases"] == 2


def test_deleting_a_middle_version_does_not_put_the_oldest_version_back_in_use(
    owner, owner_principal, tenant, folder
):
    """Stop 59's audit of evaluation found that in a dataset of the format holding a chain
    m1 <- m2 <- m3 (m1 and m2 loaded superseded, m3 in use), a deletion of m2's words took
    m2's entry and ``_uncited`` dropped only m3's ``supersedes``: nothing superseded m1 any
    more, and the loader stored the version the person had corrected twice ``active`` again,
    beside m3. A deletion takes a memory and the older versions it supersedes (docs/api.md):
    m1 should go with m2, and the cases citing it, while m3 loses only its link and stays
    the one in use."""
    from memory_core.evaluation.dataset import load_dataset_memories
    from memory_core.models import Memory
    from memory_core.rls import platform_scope

    def statuses(data, prefix) -> dict:
        with platform_scope("test"):
            loaded = load_dataset_memories(data, tenant_prefix=prefix, evaluation_run=True)
            rows = Memory.objects.filter(pk__in=loaded.dataset_ids)
            return {loaded.dataset_ids[pk]: s for pk, s in rows.values_list("pk", "status")}

    target = MemoryFactory(subject=owner, content="Prefers green tea in the morning.")
    path = folder / "golden.json"
    data = {
        "dataset": "chain",
        "memories": [
            _entry("m1", "Prefers coffee in the morning.", tenant, "drink"),
            _entry("m2", target.content, tenant, "drink", supersedes="m1"),
            _entry("m3", "Prefers black tea in the morning.", tenant, "drink", supersedes="m2"),
        ],
        "cases": [
            _format_case("c1", tenant, required_memory_ids=["m3"]),
            _format_case("c2", tenant, required_memory_ids=["m3"], forbidden_memory_ids=["m1"]),
        ],
    }
    path.write_text(json.dumps(data))
    assert statuses(data, "before-") == {"m1": "superseded", "m2": "superseded", "m3": "active"}

    operation = deletion_request(principal=owner_principal, memory_id=target.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    scrubbed = json.loads(path.read_text())
    assert statuses(scrubbed, "after-") == {"m3": "active"}
    assert [m["id"] for m in scrubbed["memories"]] == ["m3"]
    assert "supersedes" not in scrubbed["memories"][0]
    assert [case["case_id"] for case in scrubbed["cases"]] == ["c1"]
