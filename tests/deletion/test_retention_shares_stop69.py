"""Every later step of the retention sweep takes a share of the run's time, not a count.

Until stop 69 only the traces had one (stop 68): the refused requests of a tenant were
deleted in one statement however many, the idempotency records batch after batch until none
was left, exports 1,000 a run and the files no export names all at once, each outside the
run's ``SWEEP_SECONDS``; after an outage a large backlog could run into the task's 240 s soft
limit before the memories' turn (stop 67's audit of retention, "Left open"). Each step now
takes its first round whatever the time, more while its share and the run's time allow, and
leaves the rest, named in ``steps_left``, to the next run.

The time is measured in rounds: the module's clock is one the batches move, a second each.
"""

import os
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone

from memory_core.deletion import retention
from memory_core.deletion.retention import retention_apply
from memory_core.exports import export_dir
from memory_core.models import AccessDenial, Export, IdempotencyRecord, RetrievalTrace
from tests.factories import AgentFactory, SubjectFactory

pytestmark = pytest.mark.django_db

MONTH_AND_A_DAY = timedelta(days=31)  # past the default trace_days


@pytest.fixture(autouse=True)
def _export_dir_of_its_own(settings, tmp_path):
    """The files other tests left under the shared export folder are not these tests'."""
    settings.MEMLEDGER_EXPORT_DIR = tmp_path / "exports"
    settings.MEMLEDGER_EXPORT_RETENTION_HOURS = 24


def _traces(tenant, count):
    made = timezone.now() - MONTH_AND_A_DAY
    RetrievalTrace.objects.bulk_create(
        [
            RetrievalTrace(tenant=tenant, mode="hybrid", stages={"counts": {}}, created_at=made)
            for _ in range(count)
        ]
    )
    return RetrievalTrace.objects.filter(tenant=tenant)


def _denials(tenant, count):
    made = timezone.now() - MONTH_AND_A_DAY
    AccessDenial.objects.bulk_create(
        [
            AccessDenial(
                tenant=tenant, code="subject_mismatch", endpoint="retrieve", created_at=made
            )
            for _ in range(count)
        ]
    )
    return AccessDenial.objects.filter(tenant=tenant)


def _idempotency_records(tenant, count):
    agent = AgentFactory(tenant=tenant)
    expired = timezone.now() - timedelta(seconds=1)
    IdempotencyRecord.objects.bulk_create(
        [
            IdempotencyRecord(
                tenant=tenant,
                agent=agent,
                key_digest=f"{n:064x}",
                endpoint="memories",
                fingerprint="0" * 64,
                status_code=201,
                expires_at=expired - timedelta(minutes=n),
            )
            for n in range(count)
        ]
    )
    return IdempotencyRecord.objects.filter(tenant=tenant)


def _exports(tenant, count):
    """``count`` exports of a day and an hour ago, each with its file."""
    subject = SubjectFactory(tenant=tenant)
    made = timezone.now() - timedelta(hours=25)
    exports = []
    for n in range(count):
        path = f"{tenant.id}/{subject.id}/export-{n}.json"
        (export_dir() / path).parent.mkdir(parents=True, exist_ok=True)
        (export_dir() / path).write_text('{"memories": [{"content": "a full copy"}]}')
        exports.append(
            Export(
                tenant=tenant, subject=subject, path=path, created_at=made + timedelta(seconds=n)
            )
        )
    Export.objects.bulk_create(exports)
    return Export.objects.filter(tenant=tenant)


class _OrphanFiles:
    """The files of a tenant's folder that no export row names, as ``filter`` answers rows."""

    def __init__(self, tenant, count):
        folder = export_dir() / str(tenant.id) / str(SubjectFactory(tenant=tenant).id)
        folder.mkdir(parents=True)
        old = (timezone.now() - timedelta(hours=25)).timestamp()
        for n in range(count):
            path = folder / f"orphan-{n}.json"
            path.write_text('{"memories": [{"content": "a full copy"}]}')
            os.utime(path, (old, old))
        self.folder = folder

    def count(self):
        return len(list(self.folder.iterdir()))


# By its name in ``steps_left``: its count in the report, a backlog of it, its batch's and its
# share's names.
STEPS = {
    "exports": ("exports_deleted", _exports, "EXPORTS_BATCH", "EXPORTS_SECONDS"),
    "export_files": (
        "export_files_orphaned_deleted",
        _OrphanFiles,
        "EXPORT_FILES_BATCH",
        "EXPORT_FILES_SECONDS",
    ),
    "traces": ("traces_deleted", _traces, "TRACES_BATCH", "TRACES_SECONDS"),
    "idempotency_records": (
        "idempotency_records_deleted",
        _idempotency_records,
        "IDEMPOTENCY_BATCH",
        "IDEMPOTENCY_SECONDS",
    ),
    "access_denials": (
        "access_denials_deleted",
        _denials,
        "ACCESS_DENIALS_BATCH",
        "ACCESS_DENIALS_SECONDS",
    ),
}


@pytest.mark.parametrize("step", list(STEPS))
def test_a_backlog_past_the_steps_share_is_left_to_the_next_runs(step, tenant, monkeypatch):
    """A share of no time: the step takes its first round, says it left the rest, and the next
    runs take it, a round each, until nothing is left. Before, every step but the traces took
    the whole backlog of 7 (exports 1,000) in one run, whatever the time."""
    key, backlog, batch, share = STEPS[step]
    monkeypatch.setattr(retention, batch, 3, raising=False)
    monkeypatch.setattr(retention, share, 0, raising=False)
    rows = backlog(tenant, 7)

    runs = [retention_apply() for _ in range(3)]

    assert [run[key] for run in runs] == [3, 3, 1]
    assert [step in run["steps_left"] for run in runs] == [True, True, False]
    assert rows.count() == 0
    assert not any(run["tenant_failures"] for run in runs)


# Each step's batch, by the step's name in ``steps_left``.
BATCHES = {
    "exports": "_exports_expire_batch",
    "export_files": "_export_files_remove_batch",
    "traces": "_traces_expire_batch",
    "idempotency_records": "_idempotency_records_expire_batch",
    "access_denials": "_access_denials_expire_batch",
}


def _clock_moved_by_batches(monkeypatch, *steps: str) -> list:
    """Replace the module's clock with one that only the batches of ``steps`` move, a second
    a batch; return the list of ``(step, moment)`` each batch started at."""
    clock, started = {"now": 0.0}, []

    def one_second(step, batch):
        def one_second_batch(*args, **kwargs):
            started.append((step, clock["now"]))
            clock["now"] += 1.0
            return batch(*args, **kwargs)

        return one_second_batch

    # The module's own clock only: Django's and the driver's keep the real one.
    monkeypatch.setattr(retention, "time", SimpleNamespace(monotonic=lambda: clock["now"]))
    for step in steps:
        name = BATCHES[step]
        monkeypatch.setattr(retention, name, one_second(step, getattr(retention, name)))
    return started


def test_no_batch_of_refused_requests_past_the_first_round_starts_after_the_share(
    monkeypatch, tenant, other_tenant
):
    """As traces (stop 68's review): each tenant's first batch, then one of each busy
    tenant's while the share allows, the time read before each."""
    started = _clock_moved_by_batches(monkeypatch, "access_denials")
    for each in (tenant, other_tenant):
        _denials(each, 7)
    left = []

    deleted = retention.access_denials_expire(limit=3, seconds=2.5, left=left)

    # The first round's two, then one in time.
    assert [moment for _, moment in started] == [0.0, 1.0, 2.0]
    assert deleted == 3 * 3
    assert left == ["access_denials"]
    assert AccessDenial.objects.count() == 14 - 9


@pytest.mark.parametrize(
    ("step", "call"),
    [
        (
            "idempotency_records",
            lambda **kw: retention.idempotency_records_expire(batch=2, **kw),
        ),
        ("exports", lambda **kw: retention.exports_expire(limit=2, **kw)),
        ("export_files", lambda **kw: retention.export_files_orphaned_remove(batch=2, **kw)),
    ],
)
def test_no_batch_of_a_step_without_tenants_starts_after_its_share(step, call, monkeypatch, tenant):
    """A step of one stream of rows (or of files): its first batch whatever the time, then
    one more while the share allows, the time read before each; a share of 2.5 s takes three
    batches of a second each, the rest is the next run's."""
    backlog = STEPS[step][1](tenant, 9)  # five batches of 2
    started = _clock_moved_by_batches(monkeypatch, step)
    left = []

    removed = call(seconds=2.5, left=left)

    assert [moment for _, moment in started] == [0.0, 1.0, 2.0]
    assert removed == 3 * 2
    assert left == [step]
    assert backlog.count() == 9 - 6


def test_the_whole_sweep_ends_within_its_time_whatever_the_backlog(tenant, monkeypatch):
    """A backlog of every kind, four batches each, every batch a second, a share of 3 s each
    and a run of 12 s: each step in turn, the most private first, takes three batches in its
    share; the last one finds the run's time spent and takes its first alone. The run ends a
    batch past its time, every step says it left some, and the memories' turn still comes.
    Before, the refused requests, idempotency records and the files of no export took their
    backlog whole, whatever the time."""
    for _key, backlog, batch, share in STEPS.values():
        backlog(tenant, 8)
        monkeypatch.setattr(retention, batch, 2, raising=False)
        monkeypatch.setattr(retention, share, 3, raising=False)
    monkeypatch.setattr(retention, "SWEEP_SECONDS", 12)
    started = _clock_moved_by_batches(monkeypatch, *STEPS)
    turns = []
    tenant_retention_delete = retention._tenant_retention_delete

    def memories_turn(tenant_id, *args, **kwargs):
        turns.append(retention.time.monotonic())
        return tenant_retention_delete(tenant_id, *args, **kwargs)

    monkeypatch.setattr(retention, "_tenant_retention_delete", memories_turn)

    result = retention_apply()

    assert started == [
        ("exports", 0.0),
        ("exports", 1.0),
        ("exports", 2.0),
        ("export_files", 3.0),
        ("export_files", 4.0),
        ("export_files", 5.0),
        ("traces", 6.0),
        ("traces", 7.0),
        ("traces", 8.0),
        ("idempotency_records", 9.0),
        ("idempotency_records", 10.0),
        ("idempotency_records", 11.0),
        ("access_denials", 12.0),  # the run's time spent: its first round alone
    ]
    assert retention.time.monotonic() == 13.0  # a batch past the run's time
    assert result["steps_left"] == list(STEPS)
    assert [result[key] for key, *_ in STEPS.values()] == [6, 6, 6, 6, 2]
    assert turns and turns[0] == 13.0  # the tenants' memories still had their turn


def test_an_export_whose_file_cannot_be_removed_is_tried_once_a_run(tenant, monkeypatch):
    """Its row stays (the file first, stop 57), and a batch after batch would take it again,
    the oldest, and nothing else for the whole share: each batch takes the exports after the
    last the run took."""
    monkeypatch.setattr(retention, "EXPORTS_BATCH", 1)
    exports = _exports(tenant, 3)
    stuck = export_dir() / exports.order_by("created_at").first().path
    stuck.unlink()
    stuck.mkdir()  # a folder at its path: unlink fails, as a file the worker may not remove
    (stuck / "kept").write_text("x")

    result = retention_apply()

    assert result["exports_deleted"] == 2
    assert result["tenant_failures"] == [
        {"step": "exports", "tenant_id": str(tenant.id), "count": 1}
    ]
    assert list(exports.values_list("path", flat=True)) == [str(stuck.relative_to(export_dir()))]
    assert result["steps_left"] == []
