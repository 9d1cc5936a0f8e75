"""Retention: expiry past valid_until and per-class retention, through deletion operations."""

import copy
import json
import os
import time
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memory_core.deletion.retention import retention_apply, traces_expire
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.models import (
    AccessDenial,
    Authority,
    DeletionOperation,
    Memory,
    MemoryClass,
    MemoryEvent,
    MemoryType,
    PolicyVersion,
    RetrievalTrace,
    Status,
    Tombstone,
)
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.services.policy import policy_ensure, policy_publish
from tests.factories import MemoryFactory, SubjectFactory, TenantFactory, write_body

pytestmark = pytest.mark.django_db


def _memory(owner, memory_type, memory_class, age, **fields):
    created = timezone.now() - age
    return MemoryFactory(
        subject=owner,
        memory_type=memory_type,
        memory_class=memory_class,
        created_at=created,
        valid_from=created,
        **fields,
    )


def test_retention_expires_and_deletes_by_class(owner):
    working_old = _memory(owner, MemoryType.TASK_STATE, MemoryClass.WORKING, timedelta(hours=25))
    working_new = _memory(owner, MemoryType.TASK_STATE, MemoryClass.WORKING, timedelta(hours=2))
    episode_old = _memory(owner, MemoryType.EPISODE, MemoryClass.EPISODIC, timedelta(days=91))
    episode_new = _memory(owner, MemoryType.EPISODE, MemoryClass.EPISODIC, timedelta(days=10))
    preference_old = _memory(
        owner, MemoryType.USER_PREFERENCE, MemoryClass.PREFERENCE, timedelta(days=900)
    )
    revoked = _memory(
        owner,
        MemoryType.USER_PREFERENCE,
        MemoryClass.PREFERENCE,
        timedelta(days=3),
        status="revoked",
    )
    inferred_old = _memory(
        owner,
        MemoryType.USER_PREFERENCE,
        MemoryClass.PREFERENCE,
        timedelta(days=31),
        authority=Authority.MODEL_INFERENCE,
        source_type="model_inference",
    )
    past_validity = _memory(
        owner,
        MemoryType.PROJECT_CONSTRAINT,
        MemoryClass.PREFERENCE,
        timedelta(days=2),
        valid_until=timezone.now() - timedelta(minutes=1),
    )

    result = retention_apply()

    assert result["expired"] == 1
    past_validity.refresh_from_db()
    assert past_validity.status == "expired"
    assert MemoryEvent.objects.filter(memory_id=past_validity.id, action="expired").count() == 1
    gone = {working_old.id, episode_old.id, revoked.id, inferred_old.id}
    assert set(Tombstone.objects.values_list("memory_id", flat=True)) == gone
    reasons = set(DeletionOperation.objects.values_list("reason_code", flat=True))
    assert reasons == {
        "retention:working",
        "retention:episodic",
        "retention:revoked",
        "retention:inferred",
    }
    for operation in DeletionOperation.objects.all():
        assert deletion_run(operation_id=operation.id) == "completed"
    for memory in (working_new, episode_new, preference_old):
        assert Memory.objects.get(pk=memory.id).status == "active"  # preferences until revoked
    assert set(Memory.objects.filter(status="deleted").values_list("pk", flat=True)) == gone

    # A second sweep finds nothing more to do.
    assert retention_apply() == {
        "expired": 0,
        "conflicts_healed": 0,
        "conflicts_settled": 0,
        "deletion_operations": 0,
        "tenants_left": 0,
        "memories_deleted": 0,
        "traces_deleted": 0,
        "access_denials_deleted": 0,
        "idempotency_records_deleted": 0,
        "exports_deleted": 0,
        "export_files_orphaned_deleted": 0,
        "steps_left": [],
        "steps_failed": [],
        "tenant_failures": [],
        "subjects_busy": [],
    }


def test_a_retention_deletion_is_journaled_as_it_commits(
    owner, django_capture_on_commit_callbacks, monkeypatch
):
    from memory_core.deletion.ledger import ledger_read

    sent = []
    monkeypatch.setattr("memory_core.deletion.services.deletion_enqueue", sent.append)
    working_old = _memory(owner, MemoryType.TASK_STATE, MemoryClass.WORKING, timedelta(hours=25))
    with django_capture_on_commit_callbacks(execute=True):
        assert retention_apply()["deletion_operations"] == 1
    operation = DeletionOperation.objects.get()
    assert sent == [operation.id]
    # In the journal before any run: a database lost before a worker ran it is replayed.
    assert operation.journaled_at is not None and operation.attempts == 0
    (entry,) = [
        e
        for e in ledger_read(since=operation.requested_at)
        if e["operation_id"] == str(operation.id)
    ]
    assert entry["reason_code"] == "retention:working"
    assert [t["memory_id"] for t in entry["tombstones"]] == [str(working_old.id)]


def _publish_trace_days(tenant, days):
    document = PolicyVersion.objects.get(tenant=tenant, is_active=True).document
    document["retention"]["trace_days"] = days
    policy_publish(tenant=tenant, document=document, note=f"traces kept {days} days")


def _trace(tenant, age):
    trace = RetrievalTrace.objects.create(tenant=tenant, mode="hybrid", stages={"counts": {}})
    RetrievalTrace.objects.filter(pk=trace.pk).update(created_at=timezone.now() - age)
    return trace


def test_traces_past_the_tenant_s_trace_days_are_deleted_and_others_kept(tenant, other_tenant):
    old = [_trace(tenant, timedelta(days=31)) for _ in range(3)]
    recent = _trace(tenant, timedelta(days=29))
    _publish_trace_days(other_tenant, 365)  # another tenant keeps its traces for a year
    elsewhere = _trace(other_tenant, timedelta(days=31))

    assert retention_apply()["traces_deleted"] == 3
    assert not RetrievalTrace.objects.filter(pk__in=[t.pk for t in old]).exists()
    assert set(RetrievalTrace.objects.values_list("pk", flat=True)) == {recent.pk, elsewhere.pk}
    assert traces_expire() == 0


def test_refused_requests_are_kept_as_long_as_traces(tenant, other_tenant):
    now = timezone.now()
    old = AccessDenial.objects.create(
        tenant=tenant, code="forbidden", created_at=now - timedelta(days=31)
    )
    recent = AccessDenial.objects.create(
        tenant=tenant, code="forbidden", created_at=now - timedelta(days=29)
    )
    _publish_trace_days(other_tenant, 365)
    elsewhere = AccessDenial.objects.create(
        tenant=other_tenant, code="forbidden", created_at=now - timedelta(days=31)
    )
    assert retention_apply()["access_denials_deleted"] == 1
    assert set(AccessDenial.objects.values_list("pk", flat=True)) == {recent.pk, elsewhere.pk}
    assert not AccessDenial.objects.filter(pk=old.pk).exists()


def test_trace_days_null_keeps_traces_and_the_limit_bounds_one_run(tenant):
    traces = [_trace(tenant, timedelta(days=40 + i)) for i in range(5)]
    assert traces_expire(limit=2) == 2
    # Oldest first.
    assert set(RetrievalTrace.objects.values_list("pk", flat=True)) == {t.pk for t in traces[:3]}
    _publish_trace_days(tenant, None)
    assert traces_expire() == 0
    assert RetrievalTrace.objects.count() == 3


# The plan that re-runs a ``pk IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED)`` subquery for
# each row: the rows the statement already deleted are skipped on the next run (a row
# locked FOR UPDATE after the command deleted it is passed over), so LIMIT n gave the next n,
# and a capped sweep deleted everything due (seen once in CI, on a plan chosen by chance).
_RESCANNING_PLAN = (
    "SET LOCAL enable_hashjoin = off",
    "SET LOCAL enable_mergejoin = off",
    "SET LOCAL enable_hashagg = off",
    "SET LOCAL enable_material = off",
    "SET LOCAL enable_sort = off",
)


def test_a_capped_trace_sweep_deletes_at_most_its_limit_whatever_the_plan(tenant):
    from django.db import connection

    # Oldest first, so that the table's own order reaches the two due first before the rest.
    traces = [_trace(tenant, timedelta(days=44 - i)) for i in range(5)]
    with connection.cursor() as cursor:
        for setting in _RESCANNING_PLAN:
            cursor.execute(setting)
    assert traces_expire(limit=2) == 2
    assert set(RetrievalTrace.objects.values_list("pk", flat=True)) == {t.pk for t in traces[2:]}


def test_a_capped_conflict_settling_settles_at_most_its_limit_whatever_the_plan(owner):
    from django.db import connection

    from memory_core.deletion.retention import conflicts_settle
    from memory_core.models import ReviewItem

    # Inserted in id order, the order the batch takes them in: the table's own order reaches
    # the first of the batch before the rest.
    items = [
        ReviewItem.objects.create(
            id=uuid.UUID(int=number + 1),
            tenant_id=owner.tenant_id,
            subject=owner,
            kind="conflict",
            memory_key=f"k{number}",
            candidate_ids=[MemoryFactory(subject=owner, memory_key=f"k{number}").id],
        )
        for number in range(3)
    ]
    with connection.cursor() as cursor:
        for setting in _RESCANNING_PLAN:
            cursor.execute(setting)
    assert conflicts_settle(limit=1) == 1
    settled = ReviewItem.objects.filter(pk__in=[i.pk for i in items], state="resolved")
    assert list(settled.values_list("pk", flat=True)) == [items[0].pk]


def _chain_of_two(owner):
    """Return (v1, v2): a preference and the version superseding it, like a correction."""
    v1 = _memory(
        owner,
        MemoryType.USER_PREFERENCE,
        MemoryClass.PREFERENCE,
        timedelta(days=5),
        memory_key="ui.theme",
        status="superseded",
        content="User prefers dark mode.",
    )
    v2 = _memory(
        owner,
        MemoryType.USER_PREFERENCE,
        MemoryClass.PREFERENCE,
        timedelta(days=4),
        memory_key="ui.theme",
        supersedes=v1,
        version=2,
        content="User prefers dark mode with high contrast.",
    )
    return v1, v2


def test_a_revoked_preference_is_deleted_with_its_older_versions(owner):
    v1, v2 = _chain_of_two(owner)
    keep = _memory(owner, MemoryType.USER_PREFERENCE, MemoryClass.PREFERENCE, timedelta(days=3))
    Memory.objects.filter(pk=v2.pk).update(status="revoked")

    assert retention_apply()["memories_deleted"] == 2
    operation = DeletionOperation.objects.get(reason_code="retention:revoked")
    assert set(operation.memory_ids) == {v1.id, v2.id}
    assert deletion_run(operation_id=operation.id) == "completed"
    rows = dict(Memory.objects.filter(pk__in=[v1.id, v2.id]).values_list("pk", "content"))
    assert rows == {v1.id: "", v2.id: ""}
    assert Memory.objects.get(pk=keep.id).status == "active"
    assert retention_apply()["deletion_operations"] == 0


def _revoked_head_deleted_alone(owner, head) -> None:
    """Delete the revoked ``head`` alone under the sweep's revoked rule, as retention did
    before it followed chains (stop 45): its older versions are left behind."""
    from memory_core.deletion.retention import RETENTION_PRINCIPAL_NAME
    from memory_core.deletion.services import _operation_create
    from memory_core.principals import SystemPrincipal

    _operation_create(
        principal=SystemPrincipal(tenant_id=owner.tenant_id, name=RETENTION_PRINCIPAL_NAME),
        tenant_id=owner.tenant_id,
        subject_id=owner.id,
        target=DeletionOperation.Target.MEMORY,
        candidates=Memory.objects.filter(pk=head.pk),
        reason_code="retention:revoked",
    )


def test_older_versions_left_by_an_earlier_revoked_deletion_are_deleted(owner):
    v1, v2 = _chain_of_two(owner)
    # What retention did before it followed the chain: the revoked head alone.
    Memory.objects.filter(pk=v2.pk).update(status="revoked")
    _revoked_head_deleted_alone(owner, v2)
    assert Memory.objects.get(pk=v1.id).content == "User prefers dark mode."

    assert retention_apply()["memories_deleted"] == 1
    assert Memory.objects.get(pk=v1.id).status == "deleted"
    assert Tombstone.objects.filter(memory_id=v1.id).exists()


def _left_behind(owner):
    """Return (v0, v1, v2): a chain of three preferences whose revoked head v2 retention
    deleted alone, as it did before it followed chains (stop 45)."""
    v0 = _memory(
        owner, MemoryType.USER_PREFERENCE, MemoryClass.PREFERENCE, timedelta(days=6),
        memory_key="ui.theme", status="superseded", content="User prefers light mode.",
    )  # fmt: skip
    v1, v2 = _chain_of_two(owner)
    Memory.objects.filter(pk=v1.pk).update(supersedes=v0, version=2)
    Memory.objects.filter(pk=v2.pk).update(status="revoked", version=3)
    _revoked_head_deleted_alone(owner, v2)
    return v0, v1, v2


def test_an_export_says_the_versions_an_earlier_revoked_deletion_left_end_now(owner):
    """docs/portal.md: ``expires_at`` is the day the retention sweep deletes the memory. The
    sweep's next run deletes the older versions an earlier one left behind when it deleted a
    revoked head alone, a level at a time, and the export said they were kept with no end
    (left open since stop 53's audit of retention; stop 56 reads it in the rows' statement)."""
    from memory_core.exports import export_create, export_path
    from memory_core.principals import SystemPrincipal

    v0, v1, v2 = _left_behind(owner)
    kept = _memory(owner, MemoryType.USER_PREFERENCE, MemoryClass.PREFERENCE, timedelta(days=3))
    deleted_at = Tombstone.objects.get(memory_id=v2.id).deleted_at
    export = export_create(
        principal=SystemPrincipal(tenant_id=owner.tenant_id), subject_id=owner.id
    )
    records = {m["id"]: m for m in json.loads(export_path(export).read_bytes())["memories"]}
    assert str(v2.id) not in records  # deleted: no record
    for memory in (v0, v1):
        record = records[str(memory.id)]
        assert (record["expires_at"], record["expires_by_retention"]) == (
            deleted_at.isoformat(),
            True,
        ), record
    assert records[str(kept.id)]["expires_at"] is None
    retention_apply()  # what the sweep does with them: both, at once
    statuses = Memory.objects.filter(pk__in=[v0.id, v1.id]).values_list("status", flat=True)
    assert set(statuses) == {"deleted"}


def test_an_export_gives_no_end_to_a_version_the_revoked_rule_does_not_reach(owner):
    """The sweep's revoked rule takes, under a head it deleted alone, superseded preferences
    only, a level at a time (``retention._rules``): a version under an expired one is kept,
    and the export says it has no end."""
    from memory_core.exports import export_create, export_path
    from memory_core.principals import SystemPrincipal

    v0, v1, _ = _left_behind(owner)
    Memory.objects.filter(pk=v1.pk).update(status="expired")
    export = export_create(
        principal=SystemPrincipal(tenant_id=owner.tenant_id), subject_id=owner.id
    )
    records = {m["id"]: m for m in json.loads(export_path(export).read_bytes())["memories"]}
    assert records[str(v0.id)]["expires_at"] is None, records[str(v0.id)]
    retention_apply()
    statuses = dict(Memory.objects.filter(pk__in=[v0.id, v1.id]).values_list("pk", "status"))
    assert statuses == {v0.id: "superseded", v1.id: "expired"}


def test_a_write_a_reviewer_refused_is_deleted_rejected_days_after_the_decision(owner):
    now = timezone.now()
    refused_long_ago = _memory(
        owner, MemoryType.USER_PREFERENCE, MemoryClass.PREFERENCE, timedelta(days=60),
        status="rejected", content="User has asthma.", updated_at=now - timedelta(days=31),
    )  # fmt: skip
    refused_lately = _memory(
        owner, MemoryType.USER_PREFERENCE, MemoryClass.PREFERENCE, timedelta(days=60),
        status="rejected", content="User has hay fever.", updated_at=now - timedelta(days=2),
    )  # fmt: skip
    report = retention_apply()
    assert report["deletion_operations"] == 1
    operation = DeletionOperation.objects.get(reason_code="retention:rejected")
    assert operation.memory_ids == [refused_long_ago.id]
    assert deletion_run(operation_id=operation.id) == "completed"
    assert Memory.objects.get(pk=refused_long_ago.id).content == ""
    assert Memory.objects.get(pk=refused_lately.id).content == "User has hay fever."


def test_an_export_is_deleted_a_day_after_it_was_made(owner, settings):
    """Each export is a full copy of what is remembered about its subject, kept only for its
    download: it was kept until a deletion of the subject."""
    from memory_core.deletion.retention import exports_expire
    from memory_core.exports import export_create, export_path
    from memory_core.models import Export
    from memory_core.principals import SystemPrincipal

    MemoryFactory(subject=owner)
    system = SystemPrincipal(tenant_id=owner.tenant_id)
    old = export_create(principal=system, subject_id=owner.id)
    new = export_create(principal=system, subject_id=owner.id)
    Export.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=25))
    assert export_path(old).exists()

    assert retention_apply()["exports_deleted"] == 1
    assert not export_path(old).exists() and not Export.objects.filter(pk=old.pk).exists()
    assert export_path(new).exists() and Export.objects.filter(pk=new.pk).exists()

    settings.MEMLEDGER_EXPORT_RETENTION_HOURS = 0  # kept until a deletion removes them
    Export.objects.filter(pk=new.pk).update(created_at=timezone.now() - timedelta(days=400))
    assert exports_expire() == 0 and export_path(new).exists()


def test_one_export_whose_file_cannot_be_removed_stops_no_other_export_nor_the_sweep(
    owner, other_tenant
):
    """Stop 57's audit of the sweeps found that an export whose file the worker could not
    unlink (a folder at its path here; a file an operator restored as another user fails the
    same way) failed the whole retention sweep, at every run: every tenant's expired exports,
    each a full copy of a subject's memories, stayed on disk, and the sweep's figures and its
    orphan-file step were lost. That one keeps its row for the next sweep and is counted in
    ``tenant_failures``; the others go."""
    from memory_core.exports import export_create, export_path
    from memory_core.models import Export
    from memory_core.principals import SystemPrincipal

    MemoryFactory(subject=owner)
    stuck = export_create(principal=SystemPrincipal(tenant_id=owner.tenant_id), subject_id=owner.id)
    stranger = SubjectFactory(tenant=other_tenant)
    MemoryFactory(subject=stranger)
    theirs = export_create(
        principal=SystemPrincipal(tenant_id=other_tenant.id), subject_id=stranger.id
    )
    # The stuck one is the oldest: the sweep reaches it first.
    Export.objects.filter(pk=stuck.pk).update(created_at=timezone.now() - timedelta(hours=30))
    Export.objects.filter(pk=theirs.pk).update(created_at=timezone.now() - timedelta(hours=26))
    path = export_path(stuck)
    path.unlink()
    path.mkdir()
    (path / "kept").write_text("x")
    try:
        result = retention_apply()
        assert not Export.objects.filter(pk=theirs.pk).exists()
        assert not export_path(theirs).exists()
        assert result["exports_deleted"] == 1
        assert {"step": "exports", "tenant_id": str(owner.tenant_id), "count": 1} in result[
            "tenant_failures"
        ]
        assert Export.objects.filter(pk=stuck.pk).exists()  # left for the next sweep
    finally:
        (path / "kept").unlink()
        path.rmdir()


def test_an_orphan_export_file_that_cannot_be_removed_does_not_stop_the_others(
    settings, tmp_path, monkeypatch
):
    """The orphan removal stopped at the first file the worker could not remove (a file of
    another owner in a folder it may not write): the sweep failed there at every run, and
    every orphaned copy after it stayed on disk (stop 58's audit of failures; what stop 57
    fixed in ``exports_expire``). That one is skipped and its tenant listed in the failures;
    the others go."""
    import errno
    import pathlib

    from memory_core.deletion.retention import export_files_orphaned_remove

    settings.MEMLEDGER_EXPORT_DIR = tmp_path / "exports"
    settings.MEMLEDGER_EXPORT_RETENTION_HOURS = 24
    old = time.time() - 3 * 24 * 3600
    files = {}
    for name in ("stuck", "removable"):
        folder = settings.MEMLEDGER_EXPORT_DIR / str(uuid.uuid4()) / str(uuid.uuid4())
        folder.mkdir(parents=True)
        path = folder / f"{uuid.uuid4()}.json"
        path.write_text('{"memories": [{"content": "a copy of what is remembered"}]}')
        os.utime(path, (old, old))
        files[name] = path

    unlink = pathlib.Path.unlink

    def refused(self, missing_ok=False):
        if self == files["stuck"]:  # a file of another owner in a folder the worker can't write
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(pathlib.Path, "unlink", refused)
    failures = []
    assert export_files_orphaned_remove(failures=failures) == 1
    assert not files["removable"].exists() and files["stuck"].exists()
    stuck_tenant = files["stuck"].parent.parent.name
    assert failures == [{"step": "export_files", "tenant_id": stuck_tenant, "count": 1}]


def test_an_export_folder_that_cannot_be_read_does_not_stop_the_others(
    settings, tmp_path, monkeypatch
):
    """The same for a subject's folder the worker cannot list (stop 58's audit of failures):
    its scan raised, and no other tenant's orphaned file was reached."""
    import errno

    from memory_core.deletion.retention import export_files_orphaned_remove

    settings.MEMLEDGER_EXPORT_DIR = tmp_path / "exports"
    old = time.time() - 3 * 24 * 3600
    unreadable = settings.MEMLEDGER_EXPORT_DIR / str(uuid.uuid4()) / str(uuid.uuid4())
    unreadable.mkdir(parents=True)
    folder = settings.MEMLEDGER_EXPORT_DIR / str(uuid.uuid4()) / str(uuid.uuid4())
    folder.mkdir(parents=True)
    removable = folder / f"{uuid.uuid4()}.json"
    removable.write_text("{}")
    os.utime(removable, (old, old))
    real_scandir = os.scandir

    def scandir(path):
        if str(path) == str(unreadable):  # as a folder of mode 0700 of another user fails
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    failures = []
    assert export_files_orphaned_remove(failures=failures) == 1
    assert not removable.exists()
    assert failures == [{"step": "export_files", "tenant_id": unreadable.parent.name, "count": 1}]


def test_the_sweep_settles_the_conflicts_left_with_fewer_than_two_active_candidates(owner):
    """A candidate that expired, or was revoked while another transaction held the item (a
    revoke skips a locked item), left the conflict open with nothing to choose: it stayed in
    the reviewers' queue for ever."""
    from memory_core.models import ReviewItem

    past = timezone.now() - timedelta(minutes=1)

    def conflict(key, *rivals):
        return ReviewItem.objects.create(
            tenant_id=owner.tenant_id,
            subject=owner,
            kind="conflict",
            memory_key=key,
            candidate_ids=[m.id for m in rivals],
        )

    def rival(key, **fields):
        return MemoryFactory(subject=owner, memory_key=key, **fields)

    live = conflict("live", rival("live"), rival("live"), rival("live", status="revoked"))
    expiring = conflict(
        "expiring",
        rival("expiring"),
        rival("expiring", valid_from=past - timedelta(hours=1), valid_until=past),
    )
    revoked = conflict("revoked", rival("revoked"), rival("revoked", status="revoked"))
    report = retention_apply()
    assert report["conflicts_settled"] == 2
    states = {
        item.memory_key: (item.state, item.resolution)
        for item in ReviewItem.objects.filter(pk__in=[live.pk, expiring.pk, revoked.pk])
    }
    assert states == {
        "live": ("open", ""),
        "expiring": ("resolved", "settled"),
        "revoked": ("resolved", "settled"),
    }
    assert retention_apply()["conflicts_settled"] == 0


def _store_policy(tenant, retention):
    """Make ``retention`` the tenant's active policy as stored before policy_errors bounded
    it (the row itself: policy_publish refuses it now)."""
    policy = PolicyVersion.objects.get(tenant=tenant, is_active=True)
    policy.document = {**policy.document, "retention": retention}
    policy.save(update_fields=["document"])


def test_a_stored_retention_past_any_date_neither_fails_the_sweep_nor_deletes(owner, other_tenant):
    """episodic_days = 1,000,000 (stored before the bound) raised OverflowError in every
    sweep, for every tenant: it now keeps what a hundred years keep, and the sweep goes on."""
    _store_policy(owner.tenant, {**DEFAULT_POLICY["retention"], "episodic_days": 1_000_000})
    kept = _memory(owner, MemoryType.EPISODE, MemoryClass.EPISODIC, timedelta(days=400))
    stranger = SubjectFactory(tenant=other_tenant)
    old = _memory(stranger, MemoryType.EPISODE, MemoryClass.EPISODIC, timedelta(days=91))

    result = retention_apply()

    assert result["tenant_failures"] == []
    assert set(Tombstone.objects.values_list("memory_id", flat=True)) == {old.id}
    assert Memory.objects.get(pk=kept.id).status == "active"


def test_one_tenants_unreadable_policy_is_logged_and_the_other_tenants_go_on(
    owner, other_tenant, caplog, monkeypatch
):
    # A policy no stored shape makes unreadable any more (``stored_section`` reads a section
    # that is not an object as absent, stop 53): one tenant's cutoffs fail by a fault put in.
    from memory_core.deletion import retention

    real = retention._cutoff

    def unreadable(now, section, key, tenant_id):
        if str(tenant_id) == str(owner.tenant_id):
            raise TypeError("the tenant's policy cannot be read")
        return real(now, section, key, tenant_id)

    monkeypatch.setattr(retention, "_cutoff", unreadable)
    stranger = SubjectFactory(tenant=other_tenant)
    old = _memory(stranger, MemoryType.EPISODE, MemoryClass.EPISODIC, timedelta(days=91))
    _trace(other_tenant, timedelta(days=31))

    result = retention_apply()

    tenant = str(owner.tenant_id)
    assert result["tenant_failures"] == [
        {"step": "traces", "tenant_id": tenant, "count": 1},
        {"step": "access_denials", "tenant_id": tenant, "count": 1},
        {"step": "delete", "tenant_id": tenant, "count": 1},
    ]
    assert f"retention delete: tenant {tenant} failed" in caplog.text
    assert set(Tombstone.objects.values_list("memory_id", flat=True)) == {old.id}
    assert result["traces_deleted"] == 1


def _out_of_time_at_the_first_tenant(monkeypatch) -> list:
    """Make the task's soft time limit (Celery's ``SoftTimeLimitExceeded``) end the first
    tenant's part of the retention sweep; return the list of the tenants whose part began."""
    from celery.exceptions import SoftTimeLimitExceeded

    from memory_core.deletion import retention

    real, parts = retention._tenant_retention_delete, []

    def out_of_time_at_the_first(tenant_id, *args, **kwargs):
        parts.append(tenant_id)
        if len(parts) == 1:
            raise SoftTimeLimitExceeded()
        return real(tenant_id, *args, **kwargs)

    monkeypatch.setattr(retention, "_tenant_retention_delete", out_of_time_at_the_first)
    return parts


def test_the_tasks_soft_time_limit_inside_a_tenants_part_ends_the_sweep(
    owner, other_tenant, monkeypatch
):
    """Stop 59's audit of retention found the beat task's soft time limit (Celery's
    ``SoftTimeLimitExceeded``, raised while a tenant's part runs) taken for that tenant's
    failure: logged, listed in ``tenant_failures``, and the sweep went on with every other
    tenant and step into the hard kill. It ends the sweep; the next run goes on. The
    cross-tenant expiries (traces and the rest) ran before the tenants' turns, since stop
    64's review."""
    from celery.exceptions import SoftTimeLimitExceeded

    for subject in (owner, SubjectFactory(tenant=other_tenant)):
        _memory(subject, MemoryType.TASK_STATE, MemoryClass.WORKING, timedelta(hours=30))
    _trace(other_tenant, timedelta(days=31))
    parts = _out_of_time_at_the_first_tenant(monkeypatch)

    with pytest.raises(SoftTimeLimitExceeded):
        retention_apply()

    assert len(parts) == 1  # no other tenant's part ran after it
    assert not Tombstone.objects.exists()
    assert not RetrievalTrace.objects.exists()  # expired before the tenants' turns


def test_a_tenant_whose_part_the_soft_time_limit_ends_takes_its_turn_after_the_others(
    owner, other_tenant, monkeypatch
):
    """Stop 63's review of its retention fix found a tenant's turn marked only as it ended:
    a tenant whose one batch outlasted the task's soft limit was never marked, kept its
    place at the head of the next run, and the limit ended every run there. The turn is
    taken as it starts: the next run begins with the others and comes back to it."""
    from celery.exceptions import SoftTimeLimitExceeded

    due = {
        subject.tenant_id: _memory(
            subject, MemoryType.TASK_STATE, MemoryClass.WORKING, timedelta(hours=30)
        )
        for subject in (owner, SubjectFactory(tenant=other_tenant))
    }
    parts = _out_of_time_at_the_first_tenant(monkeypatch)
    with pytest.raises(SoftTimeLimitExceeded):
        retention_apply()
    stalled = parts[0]

    retention_apply()

    assert parts[1] != stalled
    assert parts[-1] == stalled
    assert set(Tombstone.objects.values_list("memory_id", flat=True)) == {
        memory.id for memory in due.values()
    }


def test_a_tenant_whose_batch_always_outlasts_the_soft_limit_starves_no_later_step(
    tenant, other_tenant, monkeypatch
):
    """Stop 64's review of retention turns: a batch the soft limit cuts short is rolled back
    (a transaction a batch), so the same batch outlasts it at every run. The tenant went
    last, but every run still ended in ``SoftTimeLimitExceeded`` there, and the sweep's later
    steps (traces, access denials, idempotency records, exports past
    ``MEMLEDGER_EXPORT_RETENTION_HOURS``) never ran for any tenant. They come before the
    tenants' turns now."""
    from celery.exceptions import SoftTimeLimitExceeded

    from memory_core.deletion import retention

    stalled = tenant.id
    real = retention._tenant_retention_delete

    def always_out_of_time(tenant_id, *args, **kwargs):
        if tenant_id == stalled:
            raise SoftTimeLimitExceeded()
        return real(tenant_id, *args, **kwargs)

    monkeypatch.setattr(retention, "_tenant_retention_delete", always_out_of_time)
    expired = _trace(other_tenant, timedelta(days=31))  # past the default trace_days

    for _ in range(3):  # three beats, 15 minutes
        with pytest.raises(SoftTimeLimitExceeded):
            retention_apply()

    assert not RetrievalTrace.objects.filter(pk=expired.pk).exists()


def test_a_tenants_part_takes_no_batch_once_the_run_is_out_of_time(owner, monkeypatch):
    """Stop 64's review of retention turns: a tenant's part checked the run's time only after
    each batch, and went on to a whole batch of each rule left: begun just before the
    deadline, it ran into the task's soft limit. Out of time, it stops after its first batch
    that deletes anything (so that a run still moves on), every later rule left to the next
    run."""
    from memory_core.deletion import retention

    monkeypatch.setattr(retention, "SWEEP_SECONDS", 0)
    due = {
        _memory(owner, MemoryType.TASK_STATE, MemoryClass.WORKING, timedelta(hours=30)).id,
        _memory(owner, MemoryType.EPISODE, MemoryClass.EPISODIC, timedelta(days=91)).id,
    }

    retention_apply()
    first = set(Tombstone.objects.values_list("memory_id", flat=True))
    retention_apply()

    assert len(first) == 1 and first < due
    assert set(Tombstone.objects.values_list("memory_id", flat=True)) == due


def _orphan(tenant_id, subject_id, name, text, *, age):
    """A file under the export folder that no Export row names (a request that failed after
    writing it), last modified ``age`` ago."""
    import os

    from memory_core.exports import export_dir

    path = export_dir() / str(tenant_id) / str(subject_id) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    mtime = (timezone.now() - age).timestamp()
    os.utime(path, (mtime, mtime))
    return path


def test_an_export_file_no_row_names_is_deleted_once_past_the_export_retention(
    owner, other_tenant, settings
):
    """export_create renames the file into place, then inserts its row: a request that
    failed after the rename (a lost connection, COMMIT failing, gunicorn's timeout) rolled
    the row back and left the subject's full copy on disk for ever (the expiry walked rows)."""
    from memory_core.exports import export_create, export_dir, export_path
    from memory_core.models import Export
    from memory_core.principals import SystemPrincipal

    MemoryFactory(subject=owner)
    export = export_create(
        principal=SystemPrincipal(tenant_id=owner.tenant_id), subject_id=owner.id
    )
    day = timedelta(hours=25)
    old = _orphan(owner.tenant_id, owner.id, f"{uuid.uuid4()}.json", '{"memories": []}', age=day)
    half_written = _orphan(owner.tenant_id, owner.id, ".memledger-new-x1y2.json", '{"memo', age=day)
    recent = _orphan(owner.tenant_id, owner.id, f"{uuid.uuid4()}.json", "{}", age=timedelta(0))
    # An export of another tenant, its file under its own tenant's folder: found by its row
    # there, never by a row of another tenant with the same path below it.
    stranger = SubjectFactory(tenant=other_tenant)
    theirs = export_create(
        principal=SystemPrincipal(tenant_id=other_tenant.id), subject_id=stranger.id
    )
    Export.objects.filter(pk=theirs.pk).update(created_at=timezone.now() - timedelta(hours=1))
    os.utime(export_path(theirs), (time.time() - 90_000, time.time() - 90_000))
    not_ours = export_dir() / "notes.json"
    not_ours.write_text("{}")
    os.utime(not_ours, (time.time() - 90_000, time.time() - 90_000))

    result = retention_apply()

    assert result["export_files_orphaned_deleted"] >= 2  # and what earlier tests left
    assert not old.exists() and not half_written.exists()
    assert recent.exists() and export_path(export).exists() and export_path(theirs).exists()
    assert not_ours.exists()
    not_ours.unlink()

    # Exports kept until a deletion (0): a file no row names is removed a day after all.
    settings.MEMLEDGER_EXPORT_RETENTION_HOURS = 0
    os.utime(recent, (time.time() - 90_000, time.time() - 90_000))
    Export.objects.filter(pk=export.pk).update(created_at=timezone.now() - timedelta(days=400))
    os.utime(export_path(export), (time.time() - 90_000, time.time() - 90_000))
    assert retention_apply()["export_files_orphaned_deleted"] == 1
    assert not recent.exists() and export_path(export).exists()


@pytest.mark.parametrize("whole_subject", [True, False])
def test_a_subjects_deletion_reaches_an_export_file_no_row_names(
    owner, owner_principal, whole_subject
):
    """The exports step looks at the files in the subject's folder, not only at rows: a
    file left by a failed export request (or a write killed before its rename) is removed
    with the subject, or rewritten without the deleted memory."""
    memory, kept = MemoryFactory(subject=owner), MemoryFactory(subject=owner)
    document = {
        "memories": [
            {"id": str(memory.id), "content": memory.content},
            {"id": str(kept.id), "content": kept.content},
        ]
    }
    import json as json_module

    left = _orphan(
        owner.tenant_id,
        owner.id,
        f"{uuid.uuid4()}.json",
        json_module.dumps(document),
        age=timedelta(0),
    )
    half = _orphan(
        owner.tenant_id,
        owner.id,
        ".memledger-new-a1b2.json",
        json_module.dumps(document)[:60],
        age=timedelta(0),
    )
    if whole_subject:
        operation = deletion_request(principal=owner_principal, subject_id=owner.id)
    else:
        operation = deletion_request(principal=owner_principal, memory_id=memory.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    step = DeletionOperation.objects.get(pk=operation.id).steps.get(store="exports")
    assert step.evidence["files_citing"] == 0, step.evidence
    if whole_subject:
        assert not left.exists() and not half.exists()
    else:
        assert str(memory.id) not in left.read_text() and str(kept.id) in left.read_text()
        assert not half.exists() or str(memory.id) not in half.read_text()


@pytest.mark.django_db(transaction=True)
def test_the_beat_task_expires_outside_any_transaction_of_the_caller(tenant):
    """The sweep runs in autocommit (a Celery task): the expiry's row locks need its own
    transaction. Moved onto another function, it was lost, and every sweep failed at its first
    step ("select_for_update cannot be used outside of a transaction"); the tests, each
    inside a transaction of pytest's, passed."""
    from memory_core.tasks import retention_sweep

    now = timezone.now()
    memory = MemoryFactory(
        subject=SubjectFactory(tenant=tenant),
        valid_from=now - timedelta(days=2),
        valid_until=now - timedelta(days=1),
    )
    result = retention_sweep.apply().get()
    assert result["expired"] == 1 and result["tenant_failures"] == []
    memory.refresh_from_db()
    assert memory.status == "expired"


def test_a_tenants_database_error_inside_a_transaction_stops_no_other_tenant(
    owner, other_tenant, monkeypatch
):
    """In a caller's transaction (as here, in the test's), a database error in the first
    tenant's part aborted the transaction, and every later tenant's statements failed with
    it: each tenant's part now runs in a savepoint."""
    from django.db import connection

    from memory_core.deletion import retention

    stranger = SubjectFactory(tenant=other_tenant)
    old = {
        owner.tenant_id: _memory(
            owner, MemoryType.EPISODE, MemoryClass.EPISODIC, timedelta(days=91)
        ),
        other_tenant.id: _memory(
            stranger, MemoryType.EPISODE, MemoryClass.EPISODIC, timedelta(days=91)
        ),
    }
    real = retention._tenant_retention_delete
    failed = []

    def first_tenant_fails(tenant_id, *args, **kwargs):
        # Its operation is made, then the database refuses a statement.
        real(tenant_id, *args, **kwargs)
        if not failed:
            failed.append(tenant_id)
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1 / 0")

    monkeypatch.setattr(retention, "_tenant_retention_delete", first_tenant_fails)

    result = retention_apply()

    (failing,) = failed
    (going_on,) = set(old) - {failing}
    assert result["tenant_failures"] == [{"step": "delete", "tenant_id": str(failing), "count": 1}]
    assert set(Tombstone.objects.values_list("memory_id", flat=True)) == {old[going_on].id}
    assert Memory.objects.get(pk=old[failing].id).status == "active"  # its part was undone
    assert result["deletion_operations"] == 1 and result["memories_deleted"] == 1


@pytest.mark.django_db(transaction=True)
def test_a_sweep_that_finds_its_rows_taken_meanwhile_opens_no_empty_operation(owner):
    """A sweep delivered twice (or a user's deletion of the same rows) locked rows another
    operation had just deleted, and opened an operation of no memories, which the user's
    deletions page listed as "0 memories, the retention policy, completed"."""
    from memory_core.principals import SubjectPrincipal
    from memory_core.rls import platform_scope
    from tests.deletion.conftest import held_in_another_transaction
    from tests.threads import in_thread, someone_waits_for_a_lock

    old = _memory(owner, MemoryType.EPISODE, MemoryClass.EPISODIC, timedelta(days=91))
    user = SubjectPrincipal(tenant_id=owner.tenant_id, subject_id=owner.id, user_id=1)

    def sweep():
        with platform_scope("retention sweep"):
            return retention_apply()

    with held_in_another_transaction(
        owner.tenant_id, lambda: deletion_request(principal=user, memory_id=old.id)
    ):
        sweeper = in_thread(sweep)
        deadline = time.monotonic() + 30
        while not someone_waits_for_a_lock() and sweeper.is_alive():
            assert time.monotonic() < deadline
            time.sleep(0.02)
    assert sweeper.outcome(30)["deletion_operations"] == 0
    assert list(DeletionOperation.objects.values_list("reason_code", flat=True)) == ["requested"]


def test_an_episode_under_a_policy_without_episodic_days_is_deleted_at_the_default_period(
    api_client, tenant
):
    """A policy that leaves a retention key out was read two ways: admission gave the write
    the default period, and the sweep read the missing key as no limit, so the episode was
    only marked expired and kept with no end (stop 54's audit of retention). Every part
    reads a missing key at its default now (``policy_defaults.retention_section``)."""
    document = copy.deepcopy(DEFAULT_POLICY)
    del document["retention"]["episodic_days"]  # every key may be absent: the defaults fill in
    policy_publish(tenant=tenant, document=document, note="shorter working memory only")

    response = api_client.post(
        "/api/v1/memories",
        write_body(
            memory_type="episode",
            memory_key="",
            content="User described the outage of the billing service last night.",
        ),
        format="json",
    )
    assert response.status_code == 201, response.json()
    memory = response.json()["memory"]
    # Admission read the missing key at its default: the episode's end is 90 days away.
    assert "ttl.defaulted" in response.json()["rule_codes"]
    created = Memory.objects.get(pk=memory["id"]).created_at
    assert Memory.objects.get(pk=memory["id"]).valid_until <= created + timedelta(days=90)

    # 91 days later the retention sweep runs under the same policy version.
    retention_apply(now=timezone.now() + timedelta(days=91))

    row = Memory.objects.get(pk=memory["id"])
    # Expected: deleted by "retention:episodic" after the 90 days admission applied, as under
    # the default policy. Found: only marked expired, its content kept with no end.
    assert row.status == "deleted", (row.status, row.content)


DUE = 7  # two batches of three, and one more


def _due_rows(owner, prefix: str, **fields) -> None:
    from memory_core.text import content_hash

    Memory.objects.bulk_create(
        [
            Memory(
                tenant_id=owner.tenant_id,
                subject=owner,
                memory_key="",
                content=f"{prefix} {i}.",
                content_hash=content_hash(f"{prefix} {i}."),
                source_type="user_input",
                authority="explicit_user",
                status=Status.ACTIVE,
                memory_class=MemoryClass.EPISODIC,
                memory_type=MemoryType.EPISODE,
                **fields,
            )
            for i in range(DUE)
        ]
    )


@pytest.mark.parametrize("due", ["past its valid_until", "past its class's retention"])
def test_one_sweep_takes_every_memory_due_batch_after_batch(owner, private_queue, monkeypatch, due):
    """One run of the sweep expired one batch past ``valid_until`` and deleted one batch a
    retention rule and tenant (5,000): with more due every 5 minutes than that (about 17 a
    second) the backlog only grew, the overdue rows keeping their content (stop 55's audit of
    the worker). It takes batch after batch now, until none is left or its time is up."""
    from memory_core.deletion import retention

    monkeypatch.setattr(retention, "SWEEP_BATCH", 3)
    now = timezone.now()
    if due == "past its valid_until":
        then = now - timedelta(days=3)
        _due_rows(
            owner, "Observed", created_at=then, valid_from=then, valid_until=now - timedelta(days=1)
        )
        report = retention_apply(now=now)
        assert report["expired"] == DUE
        assert not Memory.objects.filter(subject=owner, status=Status.ACTIVE).exists()
    else:
        old = now - timedelta(days=200)  # episodic_days: 90 by default
        _due_rows(owner, "Old episode", created_at=old, valid_from=old, valid_until=None)
        report = retention_apply(now=now)
        assert (report["memories_deleted"], report["deletion_operations"]) == (DUE, 3)
        assert not Memory.objects.filter(subject=owner).exclude(content="").exists()


def test_a_sweep_out_of_time_leaves_the_rest_to_the_next_run(owner, private_queue, monkeypatch):
    """The task's soft limit is 240 s: past ``SWEEP_SECONDS`` a run takes no further batch."""
    from memory_core.deletion import retention

    monkeypatch.setattr(retention, "SWEEP_BATCH", 3)
    monkeypatch.setattr(retention, "SWEEP_SECONDS", 0)
    now = timezone.now()
    then = now - timedelta(days=3)
    _due_rows(
        owner, "Observed", created_at=then, valid_from=then, valid_until=now - timedelta(days=1)
    )
    assert retention_apply(now=now)["expired"] == 3
    assert retention_apply(now=now)["expired"] == 3
    assert retention_apply(now=now)["expired"] == 1


def test_a_tenant_without_a_policy_gets_no_default_end_at_admission():
    """A tenant without an active policy limits nothing (``retention_section(None)``), as
    retrieval, the sweep and the pages read it. Admission read the defaults' retention for
    it: an episode got ``ttl.defaulted`` and a 90-day end, was marked expired then and kept,
    content and all, with no end, the bug stop 54 fixed for a missing key (stop 56's audit
    of policies). Admission reads no limit for it now (``policy_defaults.NO_POLICY``)."""
    tenant = TenantFactory()
    SubjectFactory(tenant=tenant, external_id="user-1")
    assert not PolicyVersion.objects.filter(tenant=tenant, is_active=True).exists()
    from memory_core.principals import SystemPrincipal
    from memory_core.services.writes import memory_write

    result = memory_write(
        principal=SystemPrincipal(tenant_id=tenant.id),
        data=write_body(
            memory_type="episode",
            memory_key="",
            content="We met on Monday to plan the atlas launch.",
        ),
    )
    assert result.decision == "accepted", result.rule_codes
    memory = result.memory
    # 91 days on: the row's dates moved back, as time passing would leave them.
    shift = timedelta(days=91)
    Memory.objects.filter(pk=memory.pk).update(
        created_at=memory.created_at - shift,
        valid_from=memory.valid_from - shift,
        updated_at=memory.updated_at - shift,
        valid_until=None if memory.valid_until is None else memory.valid_until - shift,
    )
    retention_apply()
    for operation in DeletionOperation.objects.exclude(status="completed"):
        deletion_run(operation_id=operation.id)
    memory.refresh_from_db()
    kept_unused_with_content = memory.status == "expired" and memory.content != ""
    assert not kept_unused_with_content, (
        f"status {memory.status}, rule codes {result.rule_codes}: the episode was given "
        "admission's default end and is now kept expired, its content with it, forever"
    )


def test_a_revoked_preference_of_a_tenant_without_a_policy_goes_when_its_export_says(
    settings, tmp_path
):
    """A tenant without an active policy limits nothing, but its revoked preferences go at
    the sweep's next run as the revoke page and the export say: the sweep ran over tenants
    with an active policy only, and kept them, content and all, with no end (stop 56's
    review)."""
    from memory_core.exports import export_create, export_path
    from memory_core.principals import SubjectPrincipal
    from memory_core.services.writes import memory_revoke

    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    tenant = TenantFactory()
    assert not PolicyVersion.objects.filter(tenant=tenant, is_active=True).exists()
    subject = SubjectFactory(tenant=tenant)
    v1 = MemoryFactory(
        subject=subject,
        memory_key="ui.theme",
        status="superseded",
        content="User prefers dark mode.",
    )
    v2 = MemoryFactory(
        subject=subject,
        memory_key="ui.theme",
        supersedes=v1,
        version=2,
        content="User prefers dark mode with high contrast.",
    )
    principal = SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1)
    memory_revoke(principal=principal, memory_id=v2.pk, reason="")
    export = export_create(principal=principal)
    path = export_path(export)
    records = {r["id"]: r for r in json.loads(path.read_text())["memories"]}
    said_ended = [records[str(m.pk)]["expires_at"] for m in (v1, v2)]
    retention_apply()
    for operation in DeletionOperation.objects.exclude(status="completed"):
        deletion_run(operation_id=operation.id)
    kept = list(Memory.objects.filter(pk__in=[v1.pk, v2.pk]).exclude(status="deleted"))
    assert all(said_ended), said_ended
    assert not kept, [m.status for m in kept]


def _most_tenants_one_statement_binds(tenant_ids) -> int:
    """Run the sweep; return the most of ``tenant_ids`` that one of its statements binds, each
    as a parameter of its own (an array parameter is one, whatever it holds)."""
    ids = {str(tenant_id) for tenant_id in tenant_ids}
    most = 0

    def count(execute, sql, params, many, context):
        nonlocal most
        if not many and params:
            values = params.values() if isinstance(params, dict) else params
            most = max(most, len({str(value) for value in values} & ids))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        retention_apply()
    return most


def test_the_sweep_binds_no_parameter_per_tenant_with_a_policy():
    """Stop 62's audit of policies found the sweep leaving out the tenants with an active
    policy by a list of their ids (``Tenant.objects.exclude(pk__in=[...])`` in
    ``retention_delete``), one bound parameter per tenant: past 65,535 tenants the statement
    could not be sent (psycopg's server-side binding), and the whole sweep failed at every
    run, every tenant's overdue memories, traces and exports kept. They are left out by a
    subquery now: no statement binds more than one tenant's id, with 2 tenants with a policy
    as with 6 (the audit's 65,536 tenants took half a minute to make), and the overdue rows
    of tenants with and without a policy go."""
    due = []

    def tenants_with_a_policy(count: int) -> None:
        for _ in range(count):
            tenant = TenantFactory()
            policy_ensure(tenant=tenant)
            owner = SubjectFactory(tenant=tenant)
            due.append(
                _memory(owner, MemoryType.TASK_STATE, MemoryClass.WORKING, timedelta(hours=25))
            )

    without = SubjectFactory(tenant=TenantFactory())
    revoked = _memory(
        without,
        MemoryType.USER_PREFERENCE,
        MemoryClass.PREFERENCE,
        timedelta(days=3),
        status="revoked",
    )
    bound = []
    for count in (2, 4):  # 2 tenants with a policy, then 6
        tenants_with_a_policy(count)
        tenant_ids = PolicyVersion.objects.filter(is_active=True).values_list(
            "tenant_id", flat=True
        )
        assert len(tenant_ids) == len(due)
        bound.append(_most_tenants_one_statement_binds([*tenant_ids, without.tenant_id]))

    assert bound == [1, 1]
    gone = set(Tombstone.objects.values_list("memory_id", flat=True))
    assert gone == {memory.id for memory in due} | {revoked.id}


def test_a_sweep_out_of_time_starts_the_next_run_at_the_tenants_it_did_not_reach(monkeypatch):
    """Stop 62's audit of policies found the sweep visiting every tenant in one order and
    checking its time only within a tenant: at ~20 ms a tenant, a platform of ~12,000
    tenants reached the task's soft limit at the same tenant every run, and the later
    tenants' overdue rows were never deleted. A run now stops between tenants once its
    time is up, says how many it left, and the next starts with them (the tenants swept
    longest ago first): out of time at once, each run takes one tenant, a new one each
    time, until every tenant's rows are gone."""
    from memory_core.deletion import retention

    monkeypatch.setattr(retention, "SWEEP_SECONDS", 0)
    due = {}
    for _ in range(4):
        tenant = TenantFactory()
        policy_ensure(tenant=tenant)
        owner = SubjectFactory(tenant=tenant)
        due[tenant.id] = _memory(
            owner, MemoryType.TASK_STATE, MemoryClass.WORKING, timedelta(hours=25)
        )
    tenants = len(retention.Tenant.objects.all())
    visited = []
    for _ in range(tenants):
        report = retention_apply()
        assert report["tenants_left"] == tenants - 1
        gone = set(Tombstone.objects.values_list("memory_id", flat=True))
        visited.append({tenant for tenant, memory in due.items() if memory.id in gone})
    assert all(len(visited[run] - visited[run - 1]) <= 1 for run in range(1, tenants))
    assert visited[-1] == set(due)  # every tenant's turn came
    # A tenant with rows due again takes its turn after every other tenant's.
    last = retention.Tenant.objects.order_by("-retention_swept_at")[0]
    again = _memory(
        SubjectFactory(tenant=last), MemoryType.TASK_STATE, MemoryClass.WORKING, timedelta(hours=25)
    )
    assert len(retention.Tenant.objects.all()) == tenants
    for _ in range(tenants - 1):
        retention_apply()
    assert not Tombstone.objects.filter(memory_id=again.id).exists()
    retention_apply()
    assert Tombstone.objects.filter(memory_id=again.id).exists()
