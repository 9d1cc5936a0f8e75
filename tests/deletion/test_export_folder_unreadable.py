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
from memory_core.exports import export_dir
from memory_core.models import DeletionStep
from memory_core.principals import SubjectPrincipal
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
