"""Stop 69's review of the retention sweep's shares (test_retention_shares_stop69.py).

The first round of the steps of every tenant (traces, refused requests) was taken whole
whatever the time: ~0.7 ms a tenant with nothing due, up to 0.3 s one with a full batch, so
after an outage the first round of a thousand busy tenants' traces outlasted the task's 240 s
soft limit, and the memories' rules after it never ran. The first batch alone is now taken
whatever the time, the tenants in a random order so that none is left at every run.
"""

import os
from datetime import timedelta

import pytest
from django.utils import timezone

from memory_core.deletion import retention
from memory_core.exports import export_dir
from memory_core.models import AccessDenial, Export, RetrievalTrace
from tests.conftest import _tenant_with_policy
from tests.deletion.test_retention_shares_stop69 import _clock_moved_by_batches, _denials, _traces
from tests.factories import SubjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _export_dir_of_its_own(settings, tmp_path):
    """The files other tests left under the shared export folder are not these tests'."""
    settings.MEMLEDGER_EXPORT_DIR = tmp_path / "exports"


# By its name in ``steps_left``: a backlog of one tenant's, and the step's own call.
TENANT_STEPS = {
    "traces": (_traces, retention.traces_expire),
    "access_denials": (_denials, retention.access_denials_expire),
}


@pytest.mark.parametrize("step", list(TENANT_STEPS))
def test_a_step_of_every_tenant_takes_no_tenants_batch_past_its_share_but_the_first(
    step, monkeypatch
):
    """Four busy tenants, a batch a second, a share of 0.5 s: one batch, the rest left. Before,
    the first round took a batch of every tenant's whatever the time (four seconds here; with
    thousands of tenants, past the soft limit)."""
    backlog, expire = TENANT_STEPS[step]
    rows = [backlog(_tenant_with_policy(), 5) for _ in range(4)]
    started = _clock_moved_by_batches(monkeypatch, step)
    left = []

    deleted = expire(limit=2, seconds=0.5, left=left)

    assert [moment for _, moment in started] == [0.0]
    assert deleted == 2
    assert left == [step]
    assert sorted(each.count() for each in rows) == [3, 5, 5, 5]


@pytest.mark.parametrize("step", list(TENANT_STEPS))
def test_a_share_of_no_time_reaches_every_tenant_in_a_few_runs(step, monkeypatch):
    """A batch a run, one due row a tenant: in a fixed order the first tenant's (then empty)
    would be the batch of every run and the others' rows kept for good; in a random one each
    tenant's turn comes (100 runs leave one of five tenants unreached with odds below 1e-9)."""
    backlog, expire = TENANT_STEPS[step]
    for _ in range(5):
        backlog(_tenant_with_policy(), 1)
    _clock_moved_by_batches(monkeypatch, step)
    model = RetrievalTrace if step == "traces" else AccessDenial

    for _ in range(100):
        expire(seconds=0)

    assert model.objects.count() == 0


def test_a_share_ending_inside_a_folder_reaches_its_files_of_no_export_in_a_few_runs(
    settings, tenant
):
    """Exports kept until a deletion (``0``): every file past a day is looked up at every run.
    A lookup a run (a share of no time, a batch of one), four kept exports and a file of none
    in one folder: in the disk's order the same first file was looked up at every run, and the
    file of none, a subject's full copy, was kept for good; in a random one it goes (100 runs
    leave it with odds below 1e-9)."""
    settings.MEMLEDGER_EXPORT_RETENTION_HOURS = 0
    subject = SubjectFactory(tenant=tenant)
    folder = export_dir() / str(tenant.id) / str(subject.id)
    folder.mkdir(parents=True)
    old = (timezone.now() - timedelta(hours=25)).timestamp()
    names = [f"export-{n}.json" for n in range(4)] + ["orphan.json"]
    for name in names:
        (folder / name).write_text('{"memories": [{"content": "a full copy"}]}')
        os.utime(folder / name, (old, old))
    Export.objects.bulk_create(
        [
            Export(tenant=tenant, subject=subject, path=f"{tenant.id}/{subject.id}/{name}")
            for name in names[:-1]
        ]
    )

    removed = sum(retention.export_files_orphaned_remove(batch=1, seconds=0) for _ in range(100))

    assert removed == 1
    assert sorted(path.name for path in folder.iterdir()) == names[:-1]
