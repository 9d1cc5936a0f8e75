"""The evaluation step looks at every file of MEMLEDGER_EVAL_DATA_DIRS, linked folders too.

It looked only at ``*.json`` and ``*.jsonl`` spelt in lower case, and did not enter a
subfolder that is a symbolic link: a dataset named ``golden.JSON`` or ``golden.ndjson``, a CSV
or a text report, or one on shared storage linked into the folder, kept the deleted memory's
id and content while the step verified with ``files_scanned: 0``.
"""

import json
import os

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.models import DeletionStep

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
    evidence = step["evidence"]
    assert evidence["files_scanned"] == 1
    assert (evidence["files_citing"], evidence["files_with_content"]) == (0, 0)
    assert evidence["purged"] == {"rewritten": 1}


@pytest.mark.parametrize("name", ["golden.csv", "report.txt", "results.TSV", "notes"])
def test_any_other_file_naming_the_memory_is_removed(api_client, memories, folder, name):
    """A CSV or a report has no cases to tell apart: it goes whole, as an unparsable JSON
    file naming the memory does."""
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
    evidence = step["evidence"]
    assert (evidence["files_scanned"], evidence["files_citing"]) == (1, 0)


def test_a_csv_holding_the_content_without_the_id_is_found_and_removed(
    api_client, memories, folder
):
    """A copy of the content in a cell (quoted, trivially different) and no id: the ledger's
    content hash finds it, as it does a JSON string."""
    target = memories[0]
    path = folder / "answers.csv"
    path.write_text(f'question,answer\ncolour?,"  {target.content.upper()} "\n')

    body, step = _delete(api_client, target)

    assert body["status"] == "completed"
    assert not path.exists()
    assert step["evidence"]["files_with_content"] == 0


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
    evidence = step["evidence"]
    assert evidence["files_scanned"] == 2
    assert evidence["purged"] == {"rewritten": 2}


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
    assert step["evidence"]["files_scanned"] == 0


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
