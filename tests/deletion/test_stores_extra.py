"""Replicas (when configured), the beat schedule, and export scoping."""

import json

import pytest
from django.conf import settings

from config.celery_app import app
from memory_core.deletion.runner import deletion_run, operation_context
from memory_core.deletion.services import deletion_request
from memory_core.deletion.stores import REGISTRY
from memory_core.exceptions import NotFound
from memory_core.exports import export_create, export_path, export_read
from memory_core.models import Memory
from memory_core.principals import SubjectPrincipal
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


def test_no_replica_step_when_none_is_configured(owner_principal, memories):
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    assert not operation.steps.filter(store="replicas").exists()


def test_a_configured_replica_is_verified(owner_principal, memories, settings):
    # The primary stands in for a replica here (no streaming replica in the test setup):
    # this checks the step's queries and verdicts, not replication itself.
    settings.MEMLEDGER_REPLICA_DATABASES = ["default"]
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    assert operation.steps.filter(store="replicas").exists()
    assert deletion_run(operation_id=operation.id) == "completed"
    step = operation.steps.get(store="replicas")
    assert step.status == "verified"
    assert step.evidence["replicas"]["default"] == {"tombstones": 1, "rows_with_content": 0}
    # A replica still holding content (lag) fails the verification.
    Memory.objects.filter(pk=memories[0].id).update(memory_key="lagging")
    ok, evidence = REGISTRY["replicas"].verify(operation_context(operation))
    assert not ok and evidence["replicas"]["default"]["rows_with_content"] == 1


def test_beat_schedule_names_registered_tasks():
    import memory_core.tasks  # noqa: F401  (registers the tasks)

    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in app.tasks, entry["task"]


def test_export_is_scoped_to_its_subject(owner, owner_principal, tenant, other_tenant):
    mine = MemoryFactory(subject=owner)
    neighbour = SubjectFactory(tenant=tenant)
    MemoryFactory(subject=neighbour, content="The neighbour's secret")
    export = export_create(principal=owner_principal)
    document = json.loads(export_path(export).read_text())
    assert [m["id"] for m in document["memories"]] == [str(mine.id)]
    assert export_read(principal=owner_principal, export_id=export.id)["export_id"] == str(
        export.id
    )
    with pytest.raises(NotFound):
        export_create(principal=owner_principal, subject_id=neighbour.id)
    other = SubjectPrincipal(tenant_id=tenant.id, subject_id=neighbour.id, user_id=3)
    with pytest.raises(NotFound):
        export_read(principal=other, export_id=export.id)
    stranger = SubjectPrincipal(
        tenant_id=other_tenant.id, subject_id=SubjectFactory(tenant=other_tenant).id, user_id=4
    )
    with pytest.raises(NotFound):
        export_read(principal=stranger, export_id=export.id)


def test_subject_deletion_removes_the_subjects_exports(owner, owner_principal, memories):
    export = export_create(principal=owner_principal)
    operation = deletion_request(principal=owner_principal, subject_id=owner.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    assert not export_path(export).exists()
    assert operation.steps.get(store="exports").evidence["files_scanned"] == 0
