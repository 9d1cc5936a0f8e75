"""An export row's path never reaches outside the export folder (stop 69).

``exports.export_path`` was ``export_dir() / export.path``: a row restored or edited to name
``../outside.txt``, an absolute path, or a link in the folder leading out of it had the
retention sweep unlink, and a deletion unlink or rewrite, the file it named wherever it was.
Every row's path is made a file by ``exports.export_file`` now, which refuses them: the sweep
counts that export's failure and keeps it, the deletion's step fails naming it, and the file
outside stays. Migration 0057 refuses the first two in the table too: the tests drop its
constraint in their transaction, as a restore from before it would hold such a row.
"""

import importlib
import json
from datetime import timedelta

import psycopg
import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from memory_core.deletion.retention import exports_expire
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.exports import ExportPathRefused, export_create, export_dir, export_file
from memory_core.models import DeletionStep, Export
from memory_core.principals import SubjectPrincipal, SystemPrincipal
from tests.factories import MemoryFactory
from tests.rls_support import owner_conninfo, owner_execute

KINDS = ("dotdot", "absolute", "link")


CHECK = "export_path_inside_folder"


@pytest.fixture
def unchecked():
    """The table without migration 0057's constraint, as a restore from before it: dropped by
    the owner (the app role may not), put back after, once the test's rows are gone."""
    owner_execute(f"ALTER TABLE memory_core_export DROP CONSTRAINT {CHECK}")
    try:
        yield
    finally:
        Export.objects.filter(Q(path__startswith="/") | Q(path__contains="..")).delete()
        owner_execute(
            f"ALTER TABLE memory_core_export ADD CONSTRAINT {CHECK} CHECK "
            "(NOT (path::text LIKE '/%' AND path IS NOT NULL) "
            "AND NOT (path::text LIKE '%..%' AND path IS NOT NULL))"
        )


def pointed_outside(export: Export, kind: str, outside) -> None:
    """Make ``export``'s row name ``outside``, a file beside the export folder."""
    if kind == "link":
        link = export_dir() / str(export.tenant_id) / str(export.subject_id) / "link.json"
        link.symlink_to(outside)
        path = str(link.relative_to(export_dir()))
    else:
        path = "../outside.json" if kind == "dotdot" else str(outside)
    Export.objects.filter(pk=export.pk).update(path=path)


@pytest.fixture
def outside(settings, tmp_path):
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path / "exports")
    return tmp_path / "outside.json"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "relative", ["", "/etc/passwd", "../x.json", "a/../../x.json", "a/..", "a/\x00.json", "."]
)
def test_export_file_refuses_a_path_outside_the_folder(outside, relative):
    with pytest.raises(ExportPathRefused):
        export_file(relative)
    assert export_file("t/s/e.json") == export_dir() / "t/s/e.json"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", KINDS)
def test_the_sweep_keeps_the_file_outside_and_counts_the_export_failed(
    unchecked, subject, settings, outside, kind
):
    settings.MEMLEDGER_EXPORT_RETENTION_HOURS = 1
    outside.write_text("not ours")
    export = export_create(
        principal=SystemPrincipal(tenant_id=subject.tenant_id), subject_id=subject.id
    )
    pointed_outside(export, kind, outside)
    Export.objects.filter(pk=export.pk).update(created_at=timezone.now() - timedelta(hours=2))
    failures: list = []

    exports_expire(failures=failures)

    assert outside.read_text() == "not ours"
    assert Export.objects.filter(pk=export.pk).exists()  # kept for an operator
    assert failures == [{"step": "exports", "tenant_id": str(subject.tenant_id), "count": 1}]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("whole", [True, False], ids=["subject", "memory"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_deletion_leaves_the_file_outside_and_fails_naming_the_export(
    unchecked, subject, outside, kind, whole
):
    gone = MemoryFactory(subject=subject, content="User lives at 12 Quay Street.")
    document = json.dumps({"memories": [{"id": str(gone.id), "content": gone.content}]})
    outside.write_text(document)
    export = export_create(
        principal=SystemPrincipal(tenant_id=subject.tenant_id), subject_id=subject.id
    )
    pointed_outside(export, kind, outside)
    person = SubjectPrincipal(tenant_id=subject.tenant_id, subject_id=subject.id, user_id=1)
    if whole:
        operation = deletion_request(
            principal=SystemPrincipal(tenant_id=subject.tenant_id), subject_id=subject.id
        )
    else:
        operation = deletion_request(principal=person, memory_id=gone.id)

    deletion_run(operation_id=operation.id)

    assert outside.read_text() == document  # neither removed nor rewritten
    step = DeletionStep.objects.get(operation=operation, store="exports")
    assert step.status != DeletionStep.State.VERIFIED
    assert "name a file outside them" in step.evidence.get("problem", ""), (
        step.status,
        step.evidence,
        step.last_error,
    )
    assert str(export.id) in step.last_error


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["../outside.json", "/etc/passwd", "a/../../b.json"])
def test_the_table_refuses_a_path_outside_the_folder(subject, path):
    with pytest.raises(IntegrityError), transaction.atomic():
        Export.objects.create(tenant_id=subject.tenant_id, subject=subject, path=path)


@pytest.mark.django_db(transaction=True)
def test_migration_0057_takes_the_rows_the_service_wrote(subject, outside, unchecked):
    """Added over a table of service-written rows (as before 0057), the constraint holds."""
    system = SystemPrincipal(tenant_id=subject.tenant_id)
    export = export_create(principal=system, subject_id=subject.id)
    migration = importlib.import_module("memory_core.migrations.0057_export_path_inside_folder")
    (operation,) = migration.Migration.operations
    with psycopg.connect(**owner_conninfo(), dbname=connection.settings_dict["NAME"]) as owner:
        with owner.cursor() as cursor:
            sql = str(operation.constraint.constraint_sql(Export, connection.schema_editor()))
            cursor.execute(f"ALTER TABLE memory_core_export ADD {sql}")
            cursor.execute("UPDATE memory_core_export SET path = path")  # every row holds
            with pytest.raises(psycopg.errors.CheckViolation):
                cursor.execute("UPDATE memory_core_export SET path = '../outside.json'")
        owner.rollback()
    assert Export.objects.get().path == export.path
