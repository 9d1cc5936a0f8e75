"""An operator upgrades from the previous release (bd20f31) and restores one of its backups:
``pg_restore`` -> ``migrate`` (0038_ids_in_nfc rewrites ids to NFC) -> ``replay_deletions``
(docs/operations.md, "Restore procedure": "a backup older than this release: bring its schema
up to date before the replay").

The journal lines here are the shapes the previous release wrote (checked by running bd20f31
against a scratch database, stop 51's audit of an upgrade): a queued key's deletion names the
key by the SHA-256 of the key *as the request spelt it* (NFD from a macOS client), a task's close by
the SHA-256 of the task id as sent, and a policy line holds the retention as that release's
``retention_as_swept`` read it (a class's period of 0 kept as 0).
"""

import copy
import importlib
import unicodedata
import uuid
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.db import connection, transaction
from django.utils import timezone

from memory_core.deletion.ledger import (
    memory_task_close_entry,
    policy_retention_entry,
    queued_entry,
    task_digest,
)
from memory_core.deletion.replay import replay_deletions
from memory_core.models import DeletionOperation, Memory, PolicyVersion
from memory_core.policy_check import retention_as_swept
from memory_core.policy_defaults import DEFAULT_POLICY
from tests.factories import MemoryFactory, SubjectFactory

KEY_NFC = "thé.pref"
KEY_NFD = unicodedata.normalize("NFD", KEY_NFC)
TASK_NFC = "tâche-42"
TASK_NFD = unicodedata.normalize("NFD", TASK_NFC)
assert KEY_NFC != KEY_NFD and TASK_NFC != TASK_NFD


def migrate_0038() -> None:
    """Apply migration 0038's own rewrite to the rows as the old release stored them."""
    migration = importlib.import_module("memory_core.migrations.0038_ids_in_nfc")
    with transaction.atomic():
        migration.rewrite(None, SimpleNamespace(connection=connection))


@pytest.mark.django_db(transaction=True)
def test_a_queued_key_deletion_journaled_in_nfd_by_the_old_release_is_replayed_onto_the_nfc_key(
    tenant,
):
    """The backup (old release) holds two memories on the key "thé.pref" sent in NFD; after
    it, the user's key deletion was queued (journal line: sha256 of the NFD key) and the
    database was lost before a worker made it. Restored, migrated (keys now NFC), replayed:
    docs/operations.md says a queued key's line deletes "every one on the key the line names
    by its SHA-256" and that the replay makes every deletion since the backup again."""
    subject = SubjectFactory(tenant=tenant, external_id="jose")
    keyed = [
        MemoryFactory(subject=subject, memory_key=KEY_NFD, content=f"José drinks tea {n}.")
        for n in range(2)
    ]
    kept = MemoryFactory(subject=subject, memory_key="style.other")
    # The old release's line, as bd20f31 wrote it (its memory_key_digest: sha256 of the key
    # as queued, here NFD; checked against that release's journal).
    line = queued_entry(
        tenant_id=tenant.pk,
        subject_id=subject.pk,
        queued_at=timezone.now(),
        memory_key=KEY_NFD,
    )
    migrate_0038()
    assert set(
        Memory.objects.filter(pk__in=[m.pk for m in keyed]).values_list("memory_key", flat=True)
    ) == {KEY_NFC}

    result = replay_deletions(entries=[line])

    operation = DeletionOperation.objects.get(pk=line["operation_id"])
    statuses = {str(m.pk): Memory.objects.get(pk=m.pk).status for m in keyed}
    assert result["replayed"] == 1
    assert Memory.objects.get(pk=kept.pk).status == "active"
    assert sorted(map(str, operation.memory_ids)) == sorted(statuses), (
        "the replayed key deletion holds no memory of the key the user deleted"
    )
    assert set(statuses.values()) == {"deleted"}, statuses


@pytest.mark.django_db(transaction=True)
def test_a_task_close_journaled_in_nfd_by_the_old_release_expires_the_task_scoped_memory_again(
    tenant,
):
    """A memory scoped to task "tâche-42" (NFD, as sent) is in the backup; the task was closed
    after it (journal line: sha256 of the task id as sent). Restored, migrated (scope refs now
    NFC), replayed: docs/operations.md, `memory_task_closed`: the memory "is expired again if
    it is still bound to the task whose digest the line holds (its task_id, or a task:
    scope)", "otherwise an agent would be given the closed task's state and decisions again"."""
    subject = SubjectFactory(tenant=tenant, external_id="zoe")
    memory = MemoryFactory(
        subject=subject, scope_kind="task", scope_ref=TASK_NFD, content="Step 3 is done."
    )
    line = memory_task_close_entry(
        memory_id=memory.pk,
        tenant_id=tenant.pk,
        subject_id=subject.pk,
        closed_at=timezone.now(),
        task_sha256=task_digest(TASK_NFD),
    )
    migrate_0038()
    assert Memory.objects.get(pk=memory.pk).scope_ref == TASK_NFC

    result = replay_deletions(entries=[line])

    assert Memory.objects.get(pk=memory.pk).status == "expired", result.get("memories_task_closed")


@pytest.mark.django_db
def test_an_old_release_policy_line_with_a_class_period_of_0_narrows_the_restored_retention(
    tenant, journal
):
    """The backup holds the defaults (episodes kept 90 days); after it the tenant published
    episodic_days 0, which bd20f31 allowed and journaled as 0. This release refuses 0 for a
    class and reads a stored 0 as 1 (docs/operations.md: "a class's period of 0, refused since
    stop 51, is 1 hour or day"). The replay must narrow the restored 90 days ("a retention
    shortened since the backup is short again"), not give up and keep 90."""
    restored = PolicyVersion.objects.get(tenant=tenant, is_active=True)
    assert retention_as_swept(restored.document)["episodic_days"] == 90
    document = copy.deepcopy(DEFAULT_POLICY)
    document["retention"]["episodic_days"] = 0
    line = policy_retention_entry(
        version_id=uuid.uuid4(),
        tenant_id=tenant.pk,
        version=restored.version + 1,
        published_at=restored.created_at + timedelta(minutes=5),
        document=document,
    )
    line["retention"]["episodic_days"] = 0  # as the old release's retention_as_swept kept it

    result = replay_deletions(entries=[line])

    active = PolicyVersion.objects.get(tenant=tenant, is_active=True)
    assert result["policies_not_restored"] == {}, result["policies_not_restored"]
    assert result["policies_restored"] == 1
    assert retention_as_swept(active.document)["episodic_days"] == 1
