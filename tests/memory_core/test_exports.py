"""A subject's export is written a row at a time: the file is the same JSON, the memory held
while it is written does not grow with the subject."""

import errno
import hashlib
import json
import os
import stat
import tracemalloc
import uuid

import pytest
from django.db import connection

from memory_core import files
from memory_core.exceptions import ExportUnavailable
from memory_core.exports import export_create, export_path
from memory_core.models import Export, Memory
from memory_core.principals import SubjectPrincipal, SystemPrincipal
from tests.factories import MemoryFactory, SubjectFactory, insert_memories

pytestmark = pytest.mark.django_db


def export_of(subject):
    return export_create(
        principal=SystemPrincipal(tenant_id=subject.tenant_id), subject_id=subject.id
    )


def test_the_streamed_file_is_the_document_json_dumps_would_write(subject):
    MemoryFactory(
        subject=subject, content='Quotes " and \\ and\nnewlines', value={"a": [1, {"b": None}]}
    )
    insert_memories(subject, 3)
    export = export_of(subject)
    data = export_path(export).read_bytes()
    document = json.loads(data)
    assert data == json.dumps(document, indent=2, sort_keys=True).encode()
    assert export.sha256 == hashlib.sha256(data).hexdigest()
    assert len(document["memories"]) == 4 == len(export.memory_ids)
    assert document["memories"][-1]["value"] == {"a": [1, {"b": None}]}
    assert {m["id"] for m in document["memories"]} == {str(i) for i in export.memory_ids}


def test_an_empty_export_is_the_same_json_too(subject):
    data = export_path(export_of(subject)).read_bytes()
    document = json.loads(data)
    assert document["memories"] == []
    assert data == json.dumps(document, indent=2, sort_keys=True).encode()


def test_an_export_holds_a_chunk_of_rows_at_a_time_not_the_subject(subject):
    # 4,000 memories with vectors: built whole, the export held ~80 MB here (every row with
    # its vector, the document, its text); written a chunk at a time, ~4 MB.
    insert_memories(subject, 4000, content="A remembered sentence about the user's habits, {n}.")
    vector = "[" + ",".join(["0.05"] * 384) + "]"
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_core_memory SET embedding = %s::vector, embedding_model = 'test' "
            "WHERE subject_id = %s",
            [vector, subject.id],
        )
    tracemalloc.start()
    try:
        export = export_of(subject)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(export.memory_ids) == 4000
    assert peak < 20_000_000


def test_an_export_reads_its_rows_in_chunks_never_one_query_a_memory(
    subject, django_assert_max_num_queries
):
    """Every column a record shows is read with the rows: ``created_at`` was deferred, and
    loaded by one query per memory (an export of 66,000 memories took minutes)."""
    insert_memories(subject, 300)
    with django_assert_max_num_queries(15):
        export = export_of(subject)
    document = json.loads(export_path(export).read_bytes())
    assert len(document["memories"]) == 300
    assert all(m["created_at"] for m in document["memories"])


def test_a_record_says_which_environment_the_memory_holds_in(subject):
    tied = MemoryFactory(subject=subject, environment="staging")
    untied = MemoryFactory(subject=subject)
    document = json.loads(export_path(export_of(subject)).read_bytes())
    environments = {m["id"]: m["environment"] for m in document["memories"]}
    assert environments == {str(tied.id): "staging", str(untied.id): ""}


def test_a_record_names_the_version_it_supersedes_only_while_that_one_is_kept(subject):
    """An export made after an older version's deletion named its id (``supersedes``),
    where an export made before it is rewritten without: the deletion's exports step then
    found the id and failed its check."""
    from memory_core.deletion.runner import deletion_run, operation_context
    from memory_core.deletion.services import deletion_request
    from memory_core.deletion.stores import verify_all

    old = MemoryFactory(subject=subject, memory_key="k", status="superseded")
    head = MemoryFactory(subject=subject, memory_key="k", supersedes=old, version=2)
    kept = json.loads(export_path(export_of(subject)).read_bytes())["memories"]
    assert {m["id"]: m["supersedes"] for m in kept}[str(head.id)] == str(old.id)

    system = SystemPrincipal(tenant_id=subject.tenant_id)
    operation = deletion_request(principal=system, memory_id=old.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    after = export_path(export_of(subject)).read_text()

    assert str(old.id) not in after
    assert json.loads(after)["memories"][0]["supersedes"] is None
    assert verify_all(operation_context(operation))["exports"][0]


def test_a_record_past_its_end_says_so_before_the_sweep_reaches_it(subject):
    """The portal lists such a memory as expired, or past retention; the export says the same
    of it, not the ``active`` the row holds until the retention sweep marks it."""
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    since = now - timedelta(days=2)
    lapsed = MemoryFactory(
        subject=subject, valid_from=since, valid_until=now - timedelta(minutes=1)
    )
    current = MemoryFactory(subject=subject, valid_until=now + timedelta(days=1))
    # Past the default policy's 90 episodic days: the portal says "Past retention", and no
    # agent is given it; the export said "active" (stop 51's audit of time).
    old = MemoryFactory(subject=subject, incident=True)
    Memory.objects.filter(pk=old.pk).update(created_at=now - timedelta(days=100))
    revoked = MemoryFactory(
        subject=subject, status="revoked", valid_from=since, valid_until=now - timedelta(days=1)
    )
    waiting = MemoryFactory(
        subject=subject,
        status="pending_approval",
        valid_from=since,
        valid_until=now - timedelta(days=1),
    )
    document = json.loads(export_path(export_of(subject)).read_bytes())
    statuses = {m["id"]: m["status"] for m in document["memories"]}
    assert statuses == {
        str(lapsed.id): "expired",
        str(current.id): "active",
        str(old.id): "past_retention",
        str(revoked.id): "revoked",
        str(waiting.id): "expired",  # the sweep expires a write waiting past its end too
    }


def test_a_record_says_when_the_memory_expires_and_which_agent_wrote_it(subject):
    """The portal says when each memory stops being used (the earlier of its valid_until and
    the day the retention policy deletes it) and which agent it came from; the export gave
    valid_until alone (null for an episode the retention sweep deletes after 90 days) and no
    writer."""
    from datetime import timedelta

    from django.utils import timezone

    from memory_core.models import AdmissionDecision
    from tests.factories import AgentFactory

    now = timezone.now()
    episode = MemoryFactory(subject=subject, incident=True, created_at=now)
    soon = MemoryFactory(subject=subject, valid_until=now + timedelta(days=2))
    stated = MemoryFactory(subject=subject)
    agent = AgentFactory(tenant=subject.tenant, name="support-bot")
    AdmissionDecision.objects.create(
        tenant=subject.tenant, agent=agent, subject=subject, memory=episode, outcome="accepted"
    )

    records = {
        m["id"]: m for m in json.loads(export_path(export_of(subject)).read_bytes())["memories"]
    }

    by_retention = records[str(episode.id)]
    assert by_retention["expires_at"] == (now + timedelta(days=90)).isoformat()
    assert by_retention["expires_by_retention"] is True
    assert by_retention["written_by_agent"] == "support-bot"
    own_end = records[str(soon.id)]
    assert own_end["expires_at"] == soon.valid_until.isoformat()
    assert own_end["expires_by_retention"] is False
    assert own_end["written_by_agent"] is None
    assert records[str(stated.id)]["expires_at"] is None  # a preference: no end date
    assert records[str(stated.id)]["expires_by_retention"] is False


def test_a_write_a_reviewer_refused_says_when_the_sweep_deletes_it(subject):
    """The sweep deletes a refused write ``rejected_days`` (30) after the decision, or by its
    class's period if sooner; the export said such a write (a refused health statement) was
    kept with no end (stop 49's export audit)."""
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    refused = MemoryFactory(subject=subject, status="rejected")
    old_episode = MemoryFactory(
        subject=subject, status="rejected", incident=True, created_at=now - timedelta(days=80)
    )
    records = {
        m["id"]: m for m in json.loads(export_path(export_of(subject)).read_bytes())["memories"]
    }
    refused.refresh_from_db()
    assert (
        records[str(refused.id)]["expires_at"]
        == (refused.updated_at + timedelta(days=30)).isoformat()
    )
    assert records[str(refused.id)]["expires_by_retention"] is True
    # Episodes are kept 90 days after they were written: ten days left, before the 30.
    old_episode.refresh_from_db()
    assert (
        records[str(old_episode.id)]["expires_at"]
        == (old_episode.created_at + timedelta(days=90)).isoformat()
    )


@pytest.mark.parametrize("failing", ["the tombstone check", "the row's insert"])
def test_an_export_that_fails_after_its_file_is_written_leaves_no_file(
    subject, monkeypatch, failing
):
    """Only the row's insert was covered: a failure of the tombstone check after it (a
    server gone, a lock wait run out) rolled the row back and left the file, a full copy of
    the subject's memories that no row named (stop 47's audit)."""
    from django.db import OperationalError

    import memory_core.exports as exports
    from memory_core.models import Export

    MemoryFactory(subject=subject, content="User lives at 12 Quay Street.")

    def fail(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    if failing == "the tombstone check":
        monkeypatch.setattr(exports.Tombstone.objects, "filter", fail)
    else:
        monkeypatch.setattr(exports.Export.objects, "create", fail)
    folder = exports.export_dir() / str(subject.tenant_id) / str(subject.id)
    before = set(folder.glob("*.json")) if folder.is_dir() else set()
    with pytest.raises(OperationalError):
        export_create(principal=SystemPrincipal(tenant_id=subject.tenant_id), subject_id=subject.id)
    after = set(folder.glob("*.json")) if folder.is_dir() else set()
    assert after == before
    assert not Export.objects.filter(subject=subject).exists()


def test_a_revoked_preference_is_exported_with_the_end_the_sweep_gives_it(subject):
    """docs/portal.md: ``expires_at`` is "the day the retention sweep deletes it by the
    tenant's active policy" and ``expires_by_retention`` "whether the policy is what ends it".
    The sweep deletes a revoked preference with the versions it supersedes at its next run
    (docs/operations.md, retention step 2); the export said neither had any end (stop 52's
    audits of the portal and of exports)."""
    from memory_core.deletion.retention import retention_apply

    old = MemoryFactory(subject=subject, memory_key="style.tone", status="superseded")
    revoked = MemoryFactory(
        subject=subject, memory_key="style.tone", status="revoked", supersedes=old, version=2
    )
    kept = MemoryFactory(subject=subject, memory_key="style.length")
    records = {
        m["id"]: m for m in json.loads(export_path(export_of(subject)).read_bytes())["memories"]
    }
    for memory in (revoked, old):
        record = records[str(memory.id)]
        assert record["expires_by_retention"] is True, record
        assert record["expires_at"] == revoked.updated_at.isoformat(), record
    assert records[str(kept.id)]["expires_at"] is None  # a preference in use: kept until revoked
    retention_apply()
    statuses = Memory.objects.filter(pk__in=[old.pk, revoked.pk]).values_list("status", flat=True)
    assert set(statuses) == {"deleted"}  # what the sweep did with them, at once


CHAIN_VERSIONS = 300


def _chain(subject, versions: int, *, head_status: str, **fields) -> list[Memory]:
    """One memory corrected ``versions - 1`` times, every version kept (oldest first), its
    head ``head_status``; return the versions."""
    from django.utils import timezone

    from memory_core.text import content_hash

    ids = [uuid.uuid4() for _ in range(versions)]
    now = timezone.now()
    texts = [f"Step {i} of the migration is done." for i in range(versions)]
    return Memory.objects.bulk_create(
        [
            Memory(
                id=pk,
                tenant_id=subject.tenant_id,
                subject=subject,
                content=texts[i],
                content_hash=content_hash(texts[i]),
                source_type="user_input",
                authority="explicit_user",
                status=head_status if i == versions - 1 else "superseded",
                version=i + 1,
                supersedes_id=ids[i - 1] if i else None,
                created_at=now,
                valid_from=now,
                updated_at=now,
                **fields,
            )
            for i, pk in enumerate(ids)
        ],
        batch_size=500,
    )


def _recursive_walks(plan: dict) -> list[dict]:
    """The recursive walks (``Recursive Union``) of an EXPLAIN (ANALYZE, FORMAT JSON) plan."""
    found = [plan] if plan["Node Type"] == "Recursive Union" else []
    for child in plan.get("Plans", []):
        found += _recursive_walks(child)
    return found


def _rows_statement_walks(subject) -> tuple[dict, list[dict]]:
    """Export ``subject``; return its records by id, and the recursive walks of the statement
    that read its rows as PostgreSQL ran them (EXPLAIN ANALYZE of the same statement)."""
    statements = []

    def record(execute, sql, params, many, context):
        if '"chain_ended_at"' in sql:
            statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        export = export_of(subject)
    [(sql, params)] = statements
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        [explained] = cursor.fetchone()[0]
    document = json.loads(export_path(export).read_bytes())
    return {m["id"]: m for m in document["memories"]}, _recursive_walks(explained["Plan"])


@pytest.mark.parametrize(
    ("fields", "head_status"),
    [
        # An agent's task state saved every half minute for a day (the working class's
        # retention), every version kept: ~3,000 versions.
        (
            {"memory_type": "task_state", "memory_class": "working", "memory_key": "task.progress"},
            "active",
        ),
        (
            {"memory_type": "user_preference", "memory_class": "preference", "memory_key": "ui"},
            "revoked",
        ),
    ],
    ids=["task_state", "revoked_preference"],
)
def test_an_export_walks_the_chains_once_not_once_a_version(subject, fields, head_status):
    """Stop 62's audit of policies found an export's ``expires_at`` costing time quadratic in
    a chain's length: each row walked up its chain through every newer version
    (``_CHAIN_ENDED_SQL``, a correlated subquery run once a row), 24 s for a task state of
    2,000 versions, 73 s for 4,000, in a portal request. The chains are walked once for the
    statement now, down from the heads the sweep's revoked rule takes, and each row looks its
    end up: the statement's one recursive walk runs once and visits each version of a revoked
    chain once, and the ends are the same (every version of a revoked chain ends at its
    revocation, a task state by its class's retention)."""
    from datetime import timedelta

    versions = _chain(subject, CHAIN_VERSIONS, head_status=head_status, **fields)

    records, walks = _rows_statement_walks(subject)

    assert [(walk["Actual Loops"], walk["Actual Rows"] < CHAIN_VERSIONS) for walk in walks] == [
        (1, True)
    ], walks
    head = versions[-1]
    if head_status == "revoked":
        ends = {head.updated_at.isoformat()}
    else:  # the default policy's working_hours
        ends = {(head.created_at + timedelta(hours=24)).isoformat()}
    assert {records[str(m.id)]["expires_at"] for m in versions} == ends


def test_an_export_refused_as_unavailable_leaves_no_file_when_the_folder_sync_fails(
    tenant, settings, tmp_path, monkeypatch
):
    """Stop 63's review found that an export refused as unavailable could leave its whole
    file: ``files.replacing`` renames the new file into place before it fsyncs the folder,
    and an error there (a full or failing disk) reached the same ``except OSError``, a full
    copy of the person's memories that no row names, while the person was told nothing was
    exported. The file is removed there too."""
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    subject = SubjectFactory(tenant=tenant)
    MemoryFactory(subject=subject, content="User's blood type is O-.")
    real_fsync = os.fsync

    def fsync_failing_on_folders(fd):
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", fsync_failing_on_folders)
    person = SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=None)

    with pytest.raises(ExportUnavailable):
        export_create(principal=person)

    assert not Export.objects.filter(subject=subject).exists()
    left = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert left == [], f"a refused export left {left} holding the person's memories"
