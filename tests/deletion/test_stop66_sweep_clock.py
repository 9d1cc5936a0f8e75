"""Stop 66's fix: the retention sweep's cut-offs on the database's clock (left open at stop 65).

Each cut-off the sweep compares with a row's moment (a trace's, a refused request's or an
export's ``created_at``, a memory's ``created_at`` or ``valid_until``, an idempotency record's
expiry) was the sweep host's ``timezone.now()``: a worker a day fast deleted them a day before
they were due, and one a day behind kept them a day past it. So were the tenants' turns and the
journal catch-ups' bounds (the oldest backup's cut-off, and ``older_than``, the time an action's
own append is given). The orphaned export files' cut-off stays this host's clock: it is
compared with their modification times on this host's disk.
"""

import os
import uuid
from contextlib import contextmanager
from datetime import timedelta
from unittest import mock

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from memory_core.clock import database_now
from memory_core.deletion.retention import retention_apply, retention_delete
from memory_core.deletion.services import queued_deletions_journal, subject_deletion_queue
from memory_core.exports import export_create, export_path
from memory_core.models import (
    AccessDenial,
    Agent,
    ApiKey,
    Export,
    IdempotencyRecord,
    LoginAccessLine,
    Memory,
    MemoryClass,
    MemoryType,
    PolicyVersion,
    RetrievalTrace,
    ReviewItem,
    Subject,
    Tenant,
)
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.principals import SystemPrincipal
from memory_core.services.api_keys import api_key_create
from memory_core.services.logins import login_deactivate
from memory_core.tasks import deletion_sweep
from tests.deletion.journal import journal_lines
from tests.factories import AgentFactory, MemoryFactory

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)
# How far from due each row is: well beyond the seconds a test takes, well within a day.
HOUR = timedelta(hours=1)
RETENTION = DEFAULT_POLICY["retention"]


@contextmanager
def host_clock(offset: timedelta):
    """Run the block on a host whose clock is ``offset`` off the database's (``timezone.now``
    as the code calls it; a model's default keeps the true one)."""
    true_now = timezone.now
    with mock.patch.object(timezone, "now", lambda: true_now() + offset):
        yield


def _rows_due_in(owner, due_in: timedelta) -> dict:
    """Make one row of each kind the sweep bounds in time, each due ``due_in`` from now by the
    database's clock (negative: overdue); return them by the report's count of their kind."""
    now = database_now()
    tenant = owner.tenant
    trace = RetrievalTrace.objects.create(tenant=tenant, mode="hybrid", stages={"counts": {}})
    made = now - timedelta(days=RETENTION["trace_days"]) + due_in
    RetrievalTrace.objects.filter(pk=trace.pk).update(created_at=made)
    denial = AccessDenial.objects.create(tenant=tenant, code="forbidden", created_at=made)
    export = export_create(principal=SystemPrincipal(tenant_id=tenant.id), subject_id=owner.id)
    exported = now - timedelta(hours=settings.MEMLEDGER_EXPORT_RETENTION_HOURS) + due_in
    Export.objects.filter(pk=export.pk).update(created_at=exported)
    written = now - timedelta(hours=RETENTION["working_hours"]) + due_in
    working = MemoryFactory(subject=owner, memory_type=MemoryType.TASK_STATE,
                            memory_class=MemoryClass.WORKING, created_at=written,
                            valid_from=written)  # fmt: skip
    ending = MemoryFactory(subject=owner, valid_from=now - DAY, valid_until=now + due_in)
    record = IdempotencyRecord.objects.create(
        tenant=tenant, agent=AgentFactory(tenant=tenant), key_digest="k" * 64,
        endpoint="memories.write", fingerprint="f" * 64, expires_at=now + due_in,
    )  # fmt: skip
    return {
        "traces_deleted": trace,
        "access_denials_deleted": denial,
        "exports_deleted": export,
        "deletion_operations": working,
        "expired": ending,
        "idempotency_records_deleted": record,
    }


def _counts(report: dict, rows: dict) -> dict:
    return {kind: report[kind] for kind in rows}


def test_a_sweep_on_a_host_a_day_ahead_takes_nothing_not_yet_due(owner):
    """A trace, a refused request, an export, a working memory and an idempotency record an
    hour short of their retention, and a memory an hour before its ``valid_until``, by the
    database's clock: a sweep on a host a day fast deleted or expired every one of them."""
    rows = _rows_due_in(owner, HOUR)

    with host_clock(DAY):
        report = retention_apply()

    assert _counts(report, rows) == dict.fromkeys(rows, 0)
    assert RetrievalTrace.objects.filter(pk=rows["traces_deleted"].pk).exists()
    assert export_path(rows["exports_deleted"]).exists()
    rows["expired"].refresh_from_db()
    assert rows["expired"].status == "active"


def test_a_sweep_on_a_host_a_day_behind_takes_what_is_due(owner):
    """The same rows an hour past due by the database's clock: a sweep on a host a day behind
    kept every one of them for another day."""
    rows = _rows_due_in(owner, -HOUR)

    with host_clock(-DAY):
        report = retention_apply()

    assert _counts(report, rows) == dict.fromkeys(rows, 1)
    assert not RetrievalTrace.objects.filter(pk=rows["traces_deleted"].pk).exists()
    assert not export_path(rows["exports_deleted"]).exists()


def test_an_orphaned_export_file_is_judged_by_the_hosts_clock_as_its_mtime(
    owner, settings, tmp_path
):
    """The orphaned files' cut-off is compared with modification times this host's disk wrote,
    on this host's clock: there the database's clock would be the skewed one. On a host a day
    fast, a file its disk stamped 25 hours ago (by that clock) is past the 24 hours."""
    settings.MEMLEDGER_EXPORT_DIR = tmp_path / "exports"
    folder = settings.MEMLEDGER_EXPORT_DIR / str(owner.tenant_id) / str(owner.id)
    folder.mkdir(parents=True)
    orphan = folder / f"{uuid.uuid4()}.json"
    orphan.write_text('{"memories": []}')
    with host_clock(DAY):
        stamped = (timezone.now() - timedelta(hours=25)).timestamp()
        os.utime(orphan, (stamped, stamped))

        assert retention_apply()["export_files_orphaned_deleted"] == 1
    assert not orphan.exists()


def test_a_conflict_the_sweep_settles_is_resolved_at_the_databases_time(owner):
    """The sweep stamped a settled conflict with its own host's time: a day fast, the item read
    as resolved tomorrow in the reviewers' history (ordered by ``resolved_at``)."""
    rivals = [MemoryFactory(subject=owner, memory_key="k", status=status)
              for status in ("active", "revoked")]  # fmt: skip
    item = ReviewItem.objects.create(
        tenant_id=owner.tenant_id, subject=owner, kind="conflict", memory_key="k",
        candidate_ids=[m.id for m in rivals],
    )  # fmt: skip

    with host_clock(DAY):
        assert retention_apply()["conflicts_settled"] == 1

    item.refresh_from_db()
    assert abs(item.resolved_at - database_now()) < HOUR


def _first_tenant_swept() -> object:
    """Run the sweep's deletions out of time at once (one tenant); return the tenant it took."""
    left: list = []
    retention_delete(deadline=0.0, left=left)
    (taken,) = set(Tenant.objects.values_list("pk", flat=True)) - set(left)
    return taken


def test_a_tenant_swept_on_a_host_ahead_takes_its_turn_after_the_others_not_a_day_later(
    tenant, other_tenant
):
    """A run out of time takes the tenants swept longest ago first (``retention_swept_at``):
    marked on a host a day fast, a tenant read as swept a day after the others, and for that
    day every other tenant's turn came before its own, run after run."""
    tenants = Tenant.objects.count()
    with host_clock(DAY):
        first = _first_tenant_swept()
    others = [_first_tenant_swept() for _ in range(tenants - 1)]
    assert first not in others

    assert _first_tenant_swept() == first, "its turn came a day late"


def test_the_journal_catch_up_on_a_host_ahead_journals_a_mark_after_the_oldest_backup(
    owner, owner_principal, journal
):
    """A queued deletion marked after the oldest backup kept needs its journal line (a restore
    of that backup would undo it). The catch-up's cut-off (``ledger.backups_cutoff``, a day's
    margin before the oldest backup) was the sweep host's clock: two days fast, it left the
    mark out, and a restore of the oldest backup brought the subject's memories back."""
    subject_deletion_queue(principal=owner_principal, subject_id=owner.id)  # its append not run
    queued_at = database_now() - timedelta(days=settings.MEMLEDGER_BACKUP_RETENTION_DAYS) + HOUR
    Subject.objects.filter(pk=owner.pk).update(deletion_queued_at=queued_at)

    with host_clock(2 * DAY):
        assert queued_deletions_journal() == 1, "the mark was left unjournaled"


# What the deletion sweep gives an action's own after-commit append before it appends the line
# itself (``older_than``: ``MEMLEDGER_DELETION_STALE_SECONDS``'s default).
STALE_SECONDS = 60
# The lines of the actions ``_governed_unjournaled`` takes, by their targets: each catch-up
# but the queued deletions' (``test_database_clock.py``) has one to append.
OWED = [
    "agent_deactivated", "agent_grant_set", "api_key_expiry_set", "api_key_revoked",
    "login_deactivated", "memory_rejected", "memory_revoked", "memory_task_closed",
    "policy_retention_set",
]  # fmt: skip


def _governed_unjournaled(owner, at) -> None:
    """Take at ``at`` one governance action of each kind ``OWED`` names, its line not
    recorded (the test's transaction never commits: its after-commit append never runs)."""
    tenant = owner.tenant
    revoked, rejected = (MemoryFactory(subject=owner, status=s) for s in ("revoked", "rejected"))
    Memory.objects.filter(pk__in=[revoked.pk, rejected.pk]).update(updated_at=at)
    # A version replaced by a newer one, named by its task's close.
    MemoryFactory(
        subject=owner, status="superseded", task_closed_at=at, task_closed_sha256="a" * 64
    )
    agent = AgentFactory(tenant=tenant)
    key = api_key_create(agent=agent)[0]
    ApiKey.objects.filter(pk=key.pk).update(
        revoked_at=at, expires_at=at + DAY, expiry_changed_at=at
    )
    Agent.objects.filter(pk=agent.pk).update(
        is_active=False, deactivated_at=at, grant_changed_at=at
    )
    PolicyVersion.objects.filter(tenant=tenant).update(created_at=at, journaled_at=None)
    login_deactivate(user=get_user_model().objects.create_user("departed"))
    LoginAccessLine.objects.update(created_at=at)


def _swept_on(host_offset: timedelta, journal) -> list[str]:
    """Run the deletion sweep's catch-ups on a host ``host_offset`` off the database's clock;
    return the targets of the lines they appended, sorted."""
    with host_clock(host_offset):
        deletion_sweep(stale_seconds=STALE_SECONDS)
    return sorted(line["target"] for line in journal_lines(journal))


def test_the_journal_catch_ups_on_a_host_ahead_leave_an_action_of_just_now_to_its_append(
    owner, journal
):
    """An action's own after-commit append is given ``older_than`` (a minute) before the
    sweep appends its line: on a sweep host an hour fast, that bound (this host's
    ``timezone.now()``) put every action of the last hour past it, and each line was
    appended again while its own append was still to run."""
    _governed_unjournaled(owner, database_now())

    assert _swept_on(HOUR, journal) == [], "appended before its own append had its minute"


def test_the_journal_catch_ups_on_a_host_behind_append_a_line_owed_past_its_minute(owner, journal):
    """An action two minutes old by the database's clock whose own append failed: on a sweep
    host an hour slow it read as made in 58 minutes, its line was appended an hour late, and
    a database lost meanwhile was restored without it (the action undone for good)."""
    _governed_unjournaled(owner, database_now() - 2 * timedelta(seconds=STALE_SECONDS))

    assert _swept_on(-HOUR, journal) == OWED


def test_the_journal_catch_ups_on_a_host_ahead_append_an_action_after_the_oldest_backup(
    owner, journal
):
    """The oldest backup's cut-off (``ledger.backups_cutoff``, a day's margin before it) of
    every kind, in the ORM's filters and the memories' SQL alike: on a host two days fast,
    an action an hour after the oldest backup kept read as older, its line was never
    appended, and a restore of that backup undid it."""
    days = settings.MEMLEDGER_BACKUP_RETENTION_DAYS
    _governed_unjournaled(owner, database_now() - timedelta(days=days) + HOUR)

    assert _swept_on(2 * DAY, journal) == OWED
