"""An export read while a batch superseding the subject's heads commits (stop 51's audit of
races): each row's events are the ones its snapshot saw, read with it."""

import json
import threading

import pytest
from django.db import transaction

from memory_core import exports
from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.rls import tenant_scope
from memory_core.services.writes import memory_revoke, memory_write, memory_write_batch
from tests.factories import write_body
from tests.threads import in_thread

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_export_never_shows_a_memory_active_with_the_event_that_superseded_it(
    monkeypatch, tenant, agent
):
    """The export read its rows through a cursor opened just after its moment and each
    chunk's events afterwards, up to that moment: a batch that built its events before the
    export's moment and committed after the cursor opened was read half, its head "active"
    with its "superseded" event. The row's events are read with it now (``event_ids``)."""
    principal = AgentPrincipal.from_agent(agent)
    with tenant_scope(tenant.id):
        first = memory_write(
            principal=principal,
            data=write_body(memory_key="style.answers", content="User prefers concise answers."),
        ).memory
    written, rows_read, release = threading.Event(), threading.Event(), threading.Event()

    def batch():  # a correction batch, its request's transaction still open
        with tenant_scope(tenant.id), transaction.atomic():
            results = memory_write_batch(
                principal=principal,
                items=[
                    write_body(memory_key="style.answers", content="User prefers long answers.")
                ],
            )
            written.set()
            assert release.wait(60)
            return results

    real_events = exports._events_by_memory

    def events_once_the_batch_committed(*args, **kwargs):
        # The rows of the first chunk are read (the cursor is open); the batch commits now.
        rows_read.set()
        w.join(60)
        return real_events(*args, **kwargs)

    w = in_thread(batch, name="batch", released=[written])
    assert written.wait(60) and w.error is None, w.error
    monkeypatch.setattr(exports, "_events_by_memory", events_once_the_batch_committed)
    releaser = in_thread(lambda: rows_read.wait(60) and release.set(), name="releaser")
    try:
        with tenant_scope(tenant.id), transaction.atomic():
            export = exports.export_create(
                principal=SystemPrincipal(tenant_id=tenant.id), subject_id=first.subject_id
            )
    finally:
        release.set()
    releaser.outcome(60)
    [result] = w.outcome(60)
    assert result.memory.supersedes_id == first.id
    document = json.loads(exports.export_path(export).read_text())
    records = {record["id"]: record for record in document["memories"]}
    old = records[str(first.id)]
    described = (old["status"], [event["action"] for event in old["events"]])
    # Either the export is from before the batch (active, no "superseded" event) or from
    # after it (superseded, with its successor beside it): never both at once.
    assert described[0] != "active" or "superseded" not in described[1], (
        described,
        sorted(r["status"] for r in records.values()),
    )


def _exported_as_a_revoke_commits(monkeypatch, step: str, memory) -> dict:
    """Export ``memory``'s subject while a revoke of ``memory`` commits in another thread
    when ``export_create`` calls ``exports.<step>``; return the file's records by id."""
    system = SystemPrincipal(tenant_id=memory.tenant_id)

    def revoke():
        with tenant_scope(memory.tenant_id), transaction.atomic():
            memory_revoke(principal=system, memory_id=memory.id, reason="no longer true")

    real = getattr(exports, step)

    def once_a_revoke_committed(*args, **kwargs):
        t = in_thread(revoke, name="revoke")
        t.join(60)
        assert t.error is None, t.error
        return real(*args, **kwargs)

    monkeypatch.setattr(exports, step, once_a_revoke_committed)
    with tenant_scope(memory.tenant_id), transaction.atomic():
        export = exports.export_create(principal=system, subject_id=memory.subject_id)
    with tenant_scope(memory.tenant_id):
        document = json.loads(exports.export_path(export).read_bytes())
    return {record["id"]: record for record in document["memories"]}


def test_a_revoke_committed_as_the_export_starts_shows_with_its_event(monkeypatch, tenant, agent):
    """``export_create`` takes its moment (``started``) and only then opens the cursor whose
    snapshot gives each row; the row's events are filtered ``created_at <= started``. A write
    committed in between (here during ``active_retention``'s query, which runs in that gap)
    is in the row but not in its history: the record says "revoked" with no revocation
    event and without the person's reason (the converse of stop 51's "active beside the
    event that superseded it": stop 52's audit of exports). The events are read in the
    rows' snapshot alone now."""
    principal = AgentPrincipal.from_agent(agent)
    with tenant_scope(tenant.id):
        memory = memory_write(
            principal=principal,
            data=write_body(memory_key="style.answers", content="User prefers concise answers."),
        ).memory
    # After the export's moment, before its cursor opens: a revoke commits.
    records = _exported_as_a_revoke_commits(monkeypatch, "active_retention", memory)
    [record] = records.values()
    actions = [e["action"] for e in record["events"]]
    # The row is read as revoked: its history must say so.
    assert record["status"] != "revoked" or "revoked" in actions


def test_a_revoke_committed_as_the_rows_are_read_ends_the_older_versions_too(
    monkeypatch, tenant, agent
):
    """The sweep deletes a revoked preference with its older versions at its next run, and
    the export says when (``expires_at``). It read the revoked chains in a statement before
    the one that read the rows: a revoke committed between the two was exported as revoked,
    due now, while its older version said it had no end (left open since stop 53's audit of
    exports). The chains are read in the rows' own statement now (``_CHAIN_ENDED_SQL``)."""
    principal = AgentPrincipal.from_agent(agent)
    with tenant_scope(tenant.id):
        first = memory_write(
            principal=principal,
            data=write_body(memory_key="style.answers", content="User prefers concise answers."),
        ).memory
        head = memory_write(
            principal=principal,
            data=write_body(memory_key="style.answers", content="User prefers long answers."),
        ).memory
    assert head.supersedes_id == first.id
    # Before the rows' cursor opens (it is the file's items): a revoke commits.
    records = _exported_as_a_revoke_commits(monkeypatch, "write_json_atomic", head)
    assert records[str(head.id)]["status"] == "revoked"
    ends = {records[str(m.id)]["expires_at"] for m in (first, head)}
    assert len(ends) == 1 and None not in ends, records
