"""A memory's deletion over a subject's export folder holding a file that is no UTF-8 text.

Since stop 55 the ``exports`` step of a memory's (or a key's) deletion reads every file of
the subject's folder, not only ``*.json``. A file it cannot decode (an operator's gzipped
copy of an export, a ``.DS_Store``) raises ``UnicodeDecodeError`` out of the purge: the files
after it (in sorted order) are never scrubbed, an ``export-copy.json.bak`` naming the deleted
memory with its words included, and the step's ``last_error`` names no file, though
docs/security.md says a step's ``last_error`` names by path "a file the worker cannot read".

Stop 55's review of the exports step: a file that is not UTF-8 text stopped the scrub at it,
the error naming none; the others are scrubbed now and the verification names it (the test
failed before).
"""

import gzip
import json

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.exports import export_create, export_dir, export_path
from memory_core.models import DeletionStep
from memory_core.principals import SubjectPrincipal, SystemPrincipal
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def test_an_undecodable_file_neither_hides_its_name_nor_stops_the_other_files_scrub(
    subject, settings, tmp_path
):
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    gone = MemoryFactory(subject=subject, content="User lives at 12 Quay Street.")
    MemoryFactory(subject=subject, content="User's bank is Acme Savings.")
    folder = export_dir() / str(subject.tenant_id) / str(subject.id)
    folder.mkdir(parents=True, exist_ok=True)
    document = json.dumps({"memories": [{"id": str(gone.id), "content": gone.content}]})
    (folder / "a-copy.json.gz").write_bytes(gzip.compress(document.encode()))
    copy = folder / "b-copy.json.bak"
    copy.write_text(document)
    person = SubjectPrincipal(tenant_id=subject.tenant_id, subject_id=subject.id, user_id=1)
    operation = deletion_request(principal=person, memory_id=gone.id)
    deletion_run(operation_id=operation.id)

    step = DeletionStep.objects.get(operation=operation, store="exports")
    assert step.status != DeletionStep.State.VERIFIED  # it may hold the memory: not verified
    assert not (copy.exists() and str(gone.id) in copy.read_text()), (
        "a readable copy naming the deleted memory was left because another file of the "
        f"folder could not be decoded (last_error: {step.last_error!r})"
    )
    assert "a-copy.json.gz" in step.last_error, step.last_error


def test_an_undecodable_export_row_file_does_not_stop_the_other_exports_scrub(
    subject, settings, tmp_path
):
    """Stop 57's audit of deletion found the same of a file an Export row describes: its
    rewrite (``export_remove_memories``) raised ``UnicodeDecodeError`` out of the purge, the
    subject's other exports were never scrubbed and ``last_error`` named no file. Now the
    purge leaves it to the files, as one no row describes: the others are scrubbed and the
    verification names it (``files_unreadable``)."""
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    gone = MemoryFactory(subject=subject, content="User lives at 12 Quay Street.")
    MemoryFactory(subject=subject, content="User's bank is Acme Savings.")
    system = SystemPrincipal(tenant_id=subject.tenant_id)
    exports = [export_create(principal=system, subject_id=subject.id) for _ in range(2)]
    first, second = sorted(exports, key=lambda e: e.id)
    # The first export's file, compressed in place by an operator (or otherwise not UTF-8).
    path = export_path(first)
    path.write_bytes(gzip.compress(path.read_bytes()))

    person = SubjectPrincipal(tenant_id=subject.tenant_id, subject_id=subject.id, user_id=1)
    operation = deletion_request(principal=person, memory_id=gone.id)
    deletion_run(operation_id=operation.id)

    step = DeletionStep.objects.get(operation=operation, store="exports")
    assert step.status != DeletionStep.State.VERIFIED
    assert step.evidence["files_unreadable"] == 1
    second.refresh_from_db()
    readable = export_path(second).read_text()
    assert gone.id not in second.memory_ids and str(gone.id) not in readable, (
        "a readable export naming the deleted memory, with its words, was left because "
        f"another export's file could not be decoded (last_error: {step.last_error!r})"
    )
    assert str(first.path).split("/")[-1] in step.last_error, step.last_error
