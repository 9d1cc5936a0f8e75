"""A tenant's policy retention is journaled as a version is published, and a restore's replay
narrows the restored retention to it again (never widens it).

Before: a policy version published after a backup was simply lost by a restore, and a tenant
that had shortened a retention period got the longer one back (docs/operations.md, "What the
replay does not bring back"): rows the tenant said to delete were kept longer.
"""

import copy
import json
import logging
import uuid
from datetime import datetime, timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from memory_core.deletion.ledger import ledger_scan, ledger_write
from memory_core.deletion.replay import replay_deletions
from memory_core.models import PolicyVersion
from memory_core.policy_check import RETENTION_MAX
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.services.policy import _entry as _line_of
from memory_core.services.policy import policy_ensure, policy_publish
from tests.deletion.journal import journal_lines, replay_since
from tests.factories import TenantFactory

pytestmark = pytest.mark.django_db


def _document(**retention) -> dict:
    """The default policy with ``retention``'s keys set (a value ``...``: the key left out)."""
    document = copy.deepcopy(DEFAULT_POLICY)
    for key, value in retention.items():
        if value is ...:
            document["retention"].pop(key, None)
        else:
            document["retention"][key] = value
    return document


def _publish(tenant, **retention) -> PolicyVersion:
    return policy_publish(tenant=tenant, document=_document(**retention), note="test")


def _active(tenant) -> PolicyVersion:
    return PolicyVersion.objects.get(tenant=tenant, is_active=True)


def _restore_to(version: PolicyVersion) -> None:
    """Make the database hold what a backup taken while ``version`` was active holds: no
    later version, ``version`` active."""
    PolicyVersion.objects.filter(tenant_id=version.tenant_id, version__gt=version.version).delete()
    PolicyVersion.objects.filter(pk=version.pk).update(is_active=True)


def test_a_published_version_is_journaled_as_it_commits_ids_and_retention_only(
    tenant, journal, django_capture_on_commit_callbacks
):
    """Every retention key, as the sweep reads the document: a key it lacks at its default,
    null no limit (until stop 54 a missing key was no limit but for trace_days)."""
    document = _document(episodic_days=30, preference_days=None, inferred_days=..., trace_days=...)
    document["admission"]["sensitive_categories"] = ["sexual_orientation"]
    with django_capture_on_commit_callbacks(execute=True):
        version = policy_publish(tenant=tenant, document=document, note="a private note")

    version.refresh_from_db()
    assert version.journaled_at is not None
    [line] = journal_lines(journal)
    assert set(line) == {
        "operation_id", "tenant_id", "subject_id", "target", "requested_at", "reason_code",
        "policy_version_id", "version", "retention", "tombstones", "written_at",
    }  # fmt: skip
    assert (line["target"], line["reason_code"]) == ("policy_retention_set",) * 2
    assert (line["tenant_id"], line["policy_version_id"]) == (str(tenant.pk), str(version.pk))
    assert (line["version"], line["subject_id"], line["tombstones"]) == (2, None, [])
    assert line["requested_at"] == version.created_at.isoformat()  # when it was published
    assert line["retention"] == {
        "working_hours": 24,
        "episodic_days": 30,
        "preference_days": None,
        "inferred_days": 30,  # missing: the default, as admission reads it too
        "rejected_days": 30,
        "trace_days": 30,  # missing: the default
    }
    assert set(line["retention"]) == set(RETENTION_MAX)
    text = journal.read_text()
    assert "a private note" not in text and "sexual_orientation" not in text
    assert "confidence_floor" not in text and "admission" not in text


def test_version_1_of_the_defaults_is_journaled_too(journal, django_capture_on_commit_callbacks):
    tenant = TenantFactory()
    with django_capture_on_commit_callbacks(execute=True):
        version = policy_ensure(tenant=tenant)
    [line] = journal_lines(journal)
    assert (line["policy_version_id"], line["version"]) == (str(version.pk), 1)
    assert line["retention"] == DEFAULT_POLICY["retention"]
    assert PolicyVersion.objects.get(pk=version.pk).journaled_at is not None


def test_a_version_rolled_back_is_not_journaled(
    tenant, journal, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            _publish(tenant, episodic_days=7)
            raise RuntimeError("the caller's transaction fails")
    assert callbacks == []
    assert journal_lines(journal) == []
    assert _active(tenant).version == 1
    with django_capture_on_commit_callbacks(execute=True):  # the same, committed
        _publish(tenant, episodic_days=7)
    assert [line["version"] for line in journal_lines(journal)] == [2]


def test_a_failed_append_is_logged_and_made_by_the_sweep(
    tenant, journal, settings, django_capture_on_commit_callbacks, caplog
):
    """As a grant's: logged, never raised (the version is published), and appended by the
    deletion sweep once the journal can be written; a version published before the oldest
    backup kept gets no line (every backup holds it)."""
    from memory_core.tasks import deletion_sweep

    old = _publish(tenant, episodic_days=60)
    PolicyVersion.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=37))
    blocked = journal.parent / "not-a-folder"
    blocked.write_text("")
    settings.MEMLEDGER_DELETION_LEDGER = blocked / "deletion-ledger.jsonl"  # cannot be made
    with django_capture_on_commit_callbacks(execute=True):
        version = _publish(tenant, episodic_days=14)
    assert version.is_active
    assert PolicyVersion.objects.get(pk=version.pk).journaled_at is None
    assert f"policy version {version.pk}: the journal append of its retention failed" in caplog.text

    settings.MEMLEDGER_DELETION_LEDGER = journal  # the volume is back
    with caplog.at_level(logging.INFO):
        deletion_sweep(stale_seconds=0)
        deletion_sweep(stale_seconds=0)  # once only

    [line] = journal_lines(journal)
    assert (line["policy_version_id"], line["retention"]["episodic_days"]) == (str(version.pk), 14)
    assert PolicyVersion.objects.get(pk=version.pk).journaled_at is not None
    assert PolicyVersion.objects.get(pk=old.pk).journaled_at is None  # before the cutoff
    assert "deletion sweep: 1 policy version(s) journaled" in caplog.text


def test_the_sweep_journals_many_versions_in_one_write(journal, monkeypatch):
    from memory_core.deletion import ledger
    from memory_core.services.policy import policies_journal

    tenants = [TenantFactory() for _ in range(5)]
    for tenant in tenants:
        policy_ensure(tenant=tenant)  # not committed: not journaled
        _publish(tenant, working_hours=12)
    writes = []
    real = ledger.ledger_write_many
    monkeypatch.setattr(ledger, "ledger_write_many", lambda e: writes.append(e) or real(e))

    assert policies_journal(limit=500) == 10
    assert [len(batch) for batch in writes] == [10]
    assert {line["tenant_id"] for line in journal_lines(journal)} == {str(t.pk) for t in tenants}
    assert policies_journal() == 0


def test_a_version_is_stamped_after_the_previous_one_whatever_the_clock(tenant, journal):
    """The replay applies each tenant's newest line: a host whose clock runs behind the one
    that published last must still publish the later version."""
    ahead = timezone.now() + timedelta(hours=1)
    PolicyVersion.objects.filter(tenant=tenant).update(created_at=ahead)
    version = _publish(tenant, episodic_days=10)
    assert version.created_at == ahead + timedelta(microseconds=1)


def test_the_replay_narrows_a_retention_shortened_after_the_backup(
    tenant, other_tenant, journal, django_capture_on_commit_callbacks
):
    """The backup held episodic_days 365; the tenant shortened it to 30 after: the restored
    database kept its rows for a year. Replayed: a new active version with 30, the rest of the
    document as restored. Another tenant's policy is not touched."""
    backup_version = _publish(tenant, episodic_days=365)
    others = _publish(other_tenant, episodic_days=365)
    backup_time = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        shortened = _publish(tenant, episodic_days=30)
    _restore_to(backup_version)

    result, _ = replay_since(backup_time)

    assert (result["policies_restored"], result["policies_skipped"]) == (1, 0)
    assert result["policies_not_widened"] == {}
    active = _active(tenant)
    assert active.version == shortened.version  # the restored database's next number
    assert active.pk != backup_version.pk
    assert active.document == _document(episodic_days=30)  # every other key as restored
    assert "replay_deletions" in active.note and f"version {shortened.version}" in active.note
    assert _active(other_tenant).pk == others.pk  # another tenant: untouched
    assert _active(other_tenant).document["retention"]["episodic_days"] == 365

    again, _ = replay_since(backup_time)
    assert (again["policies_restored"], again["policies_skipped"]) == (0, 1)
    assert _active(tenant).pk == active.pk


def test_the_replay_writes_nothing_where_the_restored_retention_is_as_short(tenant, journal):
    backup_version = _publish(tenant, episodic_days=30, trace_days=...)
    backup_time = timezone.now()
    ledger_write(_line_of(_publish(tenant, episodic_days=30, trace_days=30)))  # the same
    _restore_to(backup_version)

    result, err = replay_since(backup_time)

    assert (result["policies_restored"], result["policies_skipped"]) == (0, 1)
    assert _active(tenant).pk == backup_version.pk
    assert "retention" not in err


def test_the_replay_never_widens_and_names_what_it_left(tenant, other_tenant, journal):
    """A line is read from a file: a retention lengthened, or its limit removed, since the
    backup is not given back from it. Shorter on one key and longer on others: only the
    shorter key is applied."""
    backup_version = _publish(tenant, episodic_days=90, inferred_days=30, trace_days=30)
    other_backup = _publish(other_tenant, preference_days=400)
    backup_time = timezone.now()
    ledger_write(_line_of(_publish(tenant, episodic_days=365, inferred_days=7, trace_days=None)))
    ledger_write(_line_of(_publish(other_tenant, preference_days=None)))
    _restore_to(backup_version)
    _restore_to(other_backup)

    result, err = replay_since(backup_time)

    assert (result["policies_restored"], result["policies_skipped"]) == (1, 1)
    assert result["policies_not_widened"] == {
        str(tenant.pk): ["episodic_days", "trace_days"],
        str(other_tenant.pk): ["preference_days"],
    }
    assert (
        _active(tenant).document["retention"]
        == _document(episodic_days=90, inferred_days=7, trace_days=30)["retention"]
    )
    assert _active(other_tenant).pk == other_backup.pk
    assert "warning: 2 tenant(s) whose retention was lengthened" in err
    assert f"{tenant.pk} (episodic_days, trace_days)" in err


def test_the_newest_line_of_a_tenant_wins(tenant, journal):
    """By when its version was published, then by its number: the tenant shortened a period,
    then lengthened it again (less than the backup's), and that is what it asked last."""
    backup_version = _publish(tenant, episodic_days=365)
    backup_time = timezone.now()
    first = _line_of(_publish(tenant, episodic_days=30))
    last = _line_of(_publish(tenant, episodic_days=200))
    same_moment = {**_line_of(_publish(tenant, episodic_days=100)), "version": 2}
    same_moment["requested_at"] = last["requested_at"]  # a lower number at the same moment
    for line in (last, first, same_moment):  # in no order
        ledger_write(line)
    _restore_to(backup_version)

    result, _ = replay_since(backup_time)

    assert result["policies_restored"] == 1
    assert _active(tenant).document["retention"]["episodic_days"] == 200


def test_the_damaged_databases_shorter_retention_is_applied_after_the_journals_replay(
    tenant, journal
):
    """Stop 63's audit of backups found that the second replay, from the damaged database,
    skipped a retention the journal lacked: after the backup the tenant shortened
    episodic_days to 60 (journaled), then to 7 (its append failed), and the documented
    remedy, the journal's replay then the damaged database's, ended with 60. The first
    replay's version was stamped with the replay's time, and the 7-day line, older than
    that, was skipped. Now the replay's version is stamped with its line's time, and the
    second replay applies the shorter retention."""
    backup_version = _publish(tenant, episodic_days=365)
    backup_time = timezone.now()
    journaled = _line_of(_publish(tenant, episodic_days=60))
    ledger_write(journaled)
    # What ``ledger_from_database`` reads of the damaged database: its active version.
    missed = _line_of(_publish(tenant, episodic_days=7))
    _restore_to(backup_version)

    first, _ = replay_since(backup_time)  # the journal
    assert first["policies_restored"] == 1
    restored = _active(tenant)
    assert restored.document["retention"]["episodic_days"] == 60

    second = replay_deletions(entries=[missed])  # the damaged database

    assert (second["policies_restored"], second["policies_skipped"]) == (1, 0)
    assert _active(tenant).document["retention"]["episodic_days"] == 7
    # Each version the replays published is stamped with the time of its line.
    assert restored.created_at == datetime.fromisoformat(journaled["requested_at"])
    assert _active(tenant).created_at == datetime.fromisoformat(missed["requested_at"])


def test_a_line_of_a_tenant_the_restored_database_lacks_is_skipped(tenant, journal):
    backup_time = timezone.now()
    line = _line_of(_publish(tenant, episodic_days=3))
    ledger_write({**line, "tenant_id": str(uuid.uuid4()), "policy_version_id": str(uuid.uuid4())})
    count = PolicyVersion.objects.count()

    result, _ = replay_since(backup_time)

    assert (result["policies_restored"], result["policies_skipped"]) == (0, 1)
    assert PolicyVersion.objects.count() == count


def test_a_line_older_than_the_restored_active_version_is_not_applied(tenant, journal):
    """A --since before the backup's time reads a line the backup's own later version
    replaced (the tenant lengthened the period again before the backup)."""
    line = _line_of(_publish(tenant, episodic_days=3))
    since = timezone.now() - timedelta(minutes=5)
    ledger_write(line)
    backup_version = _publish(tenant, episodic_days=90)

    result, _ = replay_since(since)

    assert (result["policies_restored"], result["policies_skipped"]) == (0, 1)
    assert _active(tenant).pk == backup_version.pk


def test_the_reader_skips_a_policy_line_it_could_not_apply(tenant, journal):
    good = _line_of(_publish(tenant, episodic_days=30))
    retention = good["retention"]
    bad = [
        {**good, "policy_version_id": "x"},
        {**good, "tenant_id": "t"},
        {**good, "version": 0},
        {**good, "version": "3"},
        {**good, "version": True},
        {**good, "retention": [30]},
        {**good, "retention": {k: v for k, v in retention.items() if k != "trace_days"}},
        {**good, "retention": {**retention, "episodic_days": -1}},
        {**good, "retention": {**retention, "episodic_days": RETENTION_MAX["episodic_days"] + 1}},
        {**good, "retention": {**retention, "episodic_days": "30"}},
        {**good, "retention": {**retention, "episodic_days": 30.5}},
        {**good, "retention": {**retention, "episodic_days": True}},
    ]
    journal.write_text("".join(json.dumps(line) + "\n" for line in [*bad, good]))

    scan = ledger_scan(since=timezone.now() - timedelta(days=1))

    assert scan.unreadable == list(range(1, len(bad) + 1))
    assert [line["retention"] for line in scan.entries] == [retention]
    _, err = replay_since(timezone.now() - timedelta(days=1))
    assert f"{len(bad)} line(s) of {journal} are not journal entries" in err
