"""A journal line the reader takes as an entry holds values the replay can use: one it could
not write or compare is skipped and named, as every other unreadable line, and the replay
goes on (stop 55's audit of backup)."""

import json
import uuid
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command

from memory_core.deletion.ledger import (
    agent_grant_entry,
    ledger_scan,
    memory_key_digest,
    memory_revocation_entry,
    memory_task_close_entry,
    queued_entry,
    task_digest,
)
from memory_core.models import ApiKey, Memory
from tests.deletion.conftest import journal_line
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db

SINCE = "2026-11-01T00:00:00+00:00"
MOMENT = datetime(2026, 12, 1, 9, tzinfo=UTC)


def _revoked_line(tenant, owner, memory, **values):
    line = journal_line(1, tenant_id=tenant.pk, target="memory_revoked", subject_id=owner.pk)
    line.update(
        {
            "revoked_memory_id": str(memory.pk),
            "action": "revoked",
            "reason_code": "revoked",
            "supersedes_ids": [],
            **values,
        }
    )
    return line


def _closed_line(tenant, owner, memory, **values):
    line = journal_line(1, tenant_id=tenant.pk, target="memory_task_closed", subject_id=owner.pk)
    line.update(
        {
            "expired_memory_id": str(memory.pk),
            "reason_code": "task_closed",
            "task_sha256": task_digest("task-1"),
            "supersedes_ids": [],
            **values,
        }
    )
    return line


def _deletion_line(tenant, owner, memory, **values):
    line = journal_line(
        1, tenant_id=tenant.pk, target="memory", subject_id=owner.pk, memory_ids=[memory.pk]
    )
    line.update(values)
    return line


# Lines the reader took as entries, on which the replay then raised.
STOPPED_THE_REPLAY = {
    # a deletion line whose target no operation may have (a flipped byte: "subjeat")
    "unknown_target": lambda t, o, m: _deletion_line(t, o, m, target="subjeat"),
    # a tombstone's hash longer than the ledger's column (64)
    "long_content_hash": lambda t, o, m: {
        **_deletion_line(t, o, m),
        "tombstones": [{"memory_id": str(m.pk), "content_hash": "f" * 65}],
    },
    # a reason code longer than the operation's column (64)
    "long_reason_code": lambda t, o, m: _deletion_line(t, o, m, reason_code="r" * 65),
    # a queued key line whose digest is not a string
    "key_digest_not_text": lambda t, o, m: _deletion_line(
        t, o, m, target="memory_key", queued=True, memory_key_sha256=["ab"], tombstones=[]
    ),
    # a revocation whose action, or reason code, is not text
    "revocation_action_not_text": lambda t, o, m: _revoked_line(t, o, m, action=["revoked"]),
    "revocation_reason_not_text": lambda t, o, m: _revoked_line(t, o, m, reason_code=["x"]),
    # a task close whose chain is not a list of ids
    "task_close_chain_not_a_list": lambda t, o, m: _closed_line(t, o, m, supersedes_ids="ab"),
}


@pytest.mark.parametrize("case", sorted(STOPPED_THE_REPLAY))
def test_a_line_the_replay_cannot_use_does_not_stop_the_replay_half_way(
    journal, tenant, owner, memories, case
):
    """Such a line ended ``replay_deletions`` in a traceback (TypeError, IntegrityError,
    DataError, ValidationError) after the governance lines were applied: no deletion line
    after it was replayed, and its memories stayed in service, content and all
    (stop 55's audit of backup). docs/operations.md ("The journal"): the reader skips every
    line that is not an entry, names it on stderr and counts it (``unreadable_lines``)."""
    bad = STOPPED_THE_REPLAY[case](tenant, owner, memories[0])
    bad["operation_id"] = str(uuid.uuid4())
    bad["requested_at"] = "2026-12-01T09:00:00+00:00"  # before the good line
    good = journal_line(
        2, tenant_id=tenant.pk, target="memory", subject_id=owner.pk, memory_ids=[memories[1].pk]
    )  # deleted since the backup, at 10:00
    journal.write_text(json.dumps(bad) + "\n" + json.dumps(good) + "\n")

    out, err = StringIO(), StringIO()
    call_command("replay_deletions", "--since", SINCE, stdout=out, stderr=err)

    deleted = Memory.objects.get(pk=memories[1].pk)
    assert (deleted.status, deleted.content) == ("deleted", "")
    result = json.loads(out.getvalue())
    assert result["unreadable_lines"] == 1, result  # named, as every other unreadable line
    assert "line 1" in err.getvalue()


def _grant_line(tenant, agent_id):
    grant = dict.fromkeys(("write_types", "read_types"), [])
    grant.update(max_sensitivity="public", any_subject=False, issues_subject_tokens=False)
    line = agent_grant_entry(
        agent_id=uuid.uuid4(), tenant_id=tenant.pk, changed_at=MOMENT, grant=grant
    )
    return {**line, "grant_agent_id": agent_id}


# Lines the reader took as entries, which the replay then misread.
MISREAD = {
    # "no" is true: a whole subject's line naming one memory took every one it has
    "queued_not_a_bool": lambda t, o, m: _deletion_line(t, o, m, target="subject", queued="no"),
    # a digest hexdigest never writes: the key's deletion matched nothing, silently
    "key_digest_in_capitals": lambda t, o, m: _deletion_line(
        t,
        o,
        m,
        target="memory_key",
        queued=True,
        tombstones=[],
        memory_key_sha256=memory_key_digest("health.notes").upper(),
    ),
    "reason_code_not_text": lambda t, o, m: _deletion_line(t, o, m, reason_code=["requested"]),
    "task_digest_not_text": lambda t, o, m: _closed_line(t, o, m, task_sha256=["ab"]),
    # ids that are no UUID's string, though str() of them is one (a grant's raised in the replay)
    "task_close_chain_of_numbers": lambda t, o, m: _closed_line(
        t, o, m, supersedes_ids=[7 * 10**31]
    ),
    "grant_agent_id_a_number": lambda t, o, m: _grant_line(t, 7 * 10**31),
}


@pytest.mark.parametrize("case", sorted(MISREAD))
def test_a_line_the_replay_would_misread_is_not_an_entry(journal, tenant, owner, memories, case):
    """Such a line was read as an entry and replayed as something it did not say (a whole
    subject's deletion instead of the memories it named, a key's deletion of nothing) or
    raised where its value was used (stop 55's audit of backup)."""
    bad = MISREAD[case](tenant, owner, memories[0])
    bad["operation_id"] = str(uuid.uuid4())
    good = _deletion_line(tenant, owner, memories[1])
    journal.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    scan = ledger_scan(since=datetime.fromisoformat(SINCE))
    assert scan.unreadable == [2]
    assert len(scan.entries) == 1


def test_every_line_the_service_writes_is_still_an_entry(journal, tenant, owner, memories):
    """The reader's checks refuse no line the service writes: a queued key's, a revocation's
    (a conflict's loser too), a task close's with its chain, a grant's."""
    memory, earlier = memories[0].pk, memories[1].pk
    lines = [
        queued_entry(tenant_id=tenant.pk, subject_id=owner.pk, queued_at=MOMENT),
        queued_entry(
            tenant_id=tenant.pk,
            subject_id=owner.pk,
            queued_at=MOMENT.replace(minute=1),  # another operation
            memory_key="health.notes",
        ),
        memory_revocation_entry(
            memory_id=memory,
            tenant_id=tenant.pk,
            subject_id=owner.pk,
            revoked_at=MOMENT,
            action="revoked",
            reason_code="conflict_lost",
            supersedes_ids=[earlier],
        ),
        memory_task_close_entry(
            memory_id=memory,
            tenant_id=tenant.pk,
            subject_id=owner.pk,
            closed_at=MOMENT,
            task_sha256=task_digest("task-1"),
            supersedes_ids=[earlier],
        ),
        _grant_line(tenant, str(uuid.uuid4())),
        _deletion_line(tenant, owner, memories[2], reason_code="r" * 64),
    ]
    journal.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
    scan = ledger_scan(since=datetime.fromisoformat(SINCE))
    assert scan.unreadable == []
    assert len(scan.entries) == len(lines)


# 10000-01-01 13:59:59 in UTC: Python reads it, PostgreSQL stores it (timestamptz reaches
# year 294276), psycopg cannot load it back ("timestamp too large (after year 10K)").
PAST_YEAR_9999_IN_UTC = "9999-12-31T23:59:59-14:00"


@pytest.mark.parametrize("field", ["requested_at", "expires_at"])
def test_a_line_whose_time_is_past_year_9999_in_utc_is_skipped_not_written(
    journal, tenant, owner, memories, api_key, field
):
    """Stop 60's audit of backups found that the reader checked only that a line's
    ``requested_at`` (and an expiry line's ``expires_at``) has a time zone, not that it falls
    within the years a row's timestamp can be read back in: a key revocation's line at
    ``9999-12-31T23:59:59-14:00`` (year 10000 in UTC) was an entry, the replay wrote it into
    ``ApiKey.revoked_at`` (an expiry line's into ``expires_at``), and from then on every read
    of the key's row failed with DataError: its authentication on every request, the admin's
    key list, the deletion sweep's catch-up. Such a line should be unreadable (skipped and
    named in ``unreadable_lines``, docs/operations.md, "The journal"), the lines after it
    replayed, and the key's row readable."""
    key = ApiKey.objects.get()
    bad = journal_line(1, tenant_id=tenant.pk, target="api_key_revoked")
    bad["reason_code"] = "key_revoked"
    if field == "requested_at":
        bad.update(requested_at=PAST_YEAR_9999_IN_UTC, revoked_key_id=str(key.pk))
    else:
        bad.update(
            target="api_key_expiry_set",
            reason_code="key_expiry_set",
            expiry_key_id=str(key.pk),
            expires_at=PAST_YEAR_9999_IN_UTC,
        )
    good = journal_line(
        2, tenant_id=tenant.pk, target="memory", subject_id=owner.pk, memory_ids=[memories[1].pk]
    )
    journal.write_text(json.dumps(bad) + "\n" + json.dumps(good) + "\n")

    out = StringIO()
    call_command("replay_deletions", "--since", SINCE, stdout=out, stderr=StringIO())

    assert json.loads(out.getvalue())["unreadable_lines"] == 1
    assert Memory.objects.get(pk=memories[1].pk).status == "deleted"
    ApiKey.objects.get(pk=key.pk)  # still readable


def test_replay_reports_its_progress_while_it_replays(journal, tenant, monkeypatch):
    """Stop 68's audit of the commands: ``replay_deletions`` said nothing until its last line
    was replayed. It runs each deletion's steps in-process, measured at 83 ms a line of one
    memory (100 lines, 8.3 s), so 35 days of a service's deletions take minutes to an hour
    during a restore, with web, worker and beat stopped: an operator could not tell a replay
    that runs from one that hangs, nor, when one stopped, how far it got. It reports the
    governance lines applied, then the deletions replayed, every 5 %, on stderr."""
    from memory_core.deletion import replay

    lines = []
    for number in range(1, 40):  # 39: one line every 2, not every 1 (20 lines at most)
        owner = SubjectFactory(tenant=tenant)
        memory = MemoryFactory(subject=owner)
        lines.append(
            journal_line(
                number, tenant_id=tenant.pk, target="memory", subject_id=owner.pk,
                memory_ids=[memory.pk],
            )
        )  # fmt: skip
    journal.write_text("".join(json.dumps(line) + "\n" for line in lines))
    err = StringIO()
    seen_before_last: list[str] = []
    real = replay.deletion_run
    runs = []

    def watched(**kwargs):
        runs.append(1)
        if len(runs) == len(lines):  # the last deletion: what has the operator seen so far?
            seen_before_last.append(err.getvalue())
        return real(**kwargs)

    monkeypatch.setattr(replay, "deletion_run", watched)
    call_command("replay_deletions", "--since", SINCE, stdout=StringIO(), stderr=err)
    assert len(runs) == len(lines)
    assert "0 governance line(s) applied" in seen_before_last[0]
    assert "replay: 38/39 deletion line(s) done, 0 not completed so far" in seen_before_last[0]
    assert "replay: 39/39 deletion line(s) done" in err.getvalue()
    assert err.getvalue().count("deletion line(s) done") == 20  # every 5 %, the last too
