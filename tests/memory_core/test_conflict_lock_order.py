"""Conflict items touched by a write, a retrieval and a deletion run at once.

Found by a race audit of stop 29, each forced with threads on real connections:

- a batch write moved one key's conflict on to its new head (``conflicts_follow_successor``)
  in the batch's order, before opening another key's: a retrieval adding rows to both items
  in key order held the other, and PostgreSQL broke the deadlock by failing the write;
- a retrieval that read a key's rows before a write superseded one of them opened the
  conflict after the write committed, citing the superseded row: a reviewer choosing the
  other revoked nothing while the new version stayed in use;
- a whole subject's deletion run stripped the key from conflicts opened after its request.
"""

import threading
import time

import pytest
from django.db import connection, transaction

from memory_core.deletion.retention import retention_apply
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.exceptions import Conflict
from memory_core.models import Memory, MemoryEvent, ReviewItem, Subject
from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.retrieval import pipeline
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.types import ConflictPlace, RetrievalRequest
from memory_core.rls import tenant_scope
from memory_core.services import conflicts as conflict_service
from memory_core.services import writes
from memory_core.services.conflicts import conflict_resolve
from memory_core.services.memories import memory_store_many
from memory_core.services.writes import memory_write
from tests.deletion.conftest import private_queue  # noqa: F401 (a fixture)
from tests.factories import AgentFactory, SubjectFactory, write_body
from tests.memory_core.retrieval.conftest import draft
from tests.threads import errors_of, in_thread, someone_waits_for_a_lock

pytestmark = pytest.mark.django_db(transaction=True)

INFERRED = {"authority": "model_inference", "source_type": "model_inference"}
TOOL = {
    "authority": "tool_observation",
    "source_type": "verified_tool_output",
    "source_tool": "ci",
    "confidence": 0.5,
}
QUERY = "which region do deploys go to? and the database engine"
SOURCE_INFERRED = {"type": "model_inference", "conversation_id": "c", "message_id": "m"}


def inferred_episode(key: str, content: str) -> dict:
    """A write body: what a model inferred about ``dana``, on ``key``."""
    return {
        "subject": "dana",
        "memory_type": "episode",
        "memory_key": key,
        "scope": "global",
        "content": content,
        "source": SOURCE_INFERRED,
    }


def conflict_items() -> list[dict]:
    return list(
        ReviewItem.objects.filter(kind="conflict").values(
            "id", "state", "memory_key", "scope_kind", "candidate_ids"
        )
    )


def _rivals(subject, *, agent=None, deploy, database, database_source=INFERRED):
    if database_source is TOOL:
        return [
            draft(
                subject,
                f"Deploys go to {r} region.",
                "episode",
                memory_key="deploy.region",
                agent_id=agent,
                **INFERRED,
            )
            for r in deploy
        ] + [
            draft(
                subject,
                f"The database engine is {e}.",
                "episode",
                memory_key="database.engine",
                agent_id=agent,
                **TOOL,
            )
            for e in database
        ]
    return [
        draft(subject, f"Deploys go to {r} region.", "episode", memory_key="deploy.region",
              agent_id=agent, **INFERRED) for r in deploy
    ] + [
        draft(subject, f"The database engine is {e}.", "episode", memory_key="database.engine",
              agent_id=agent, **INFERRED) for e in database
    ]  # fmt: skip


def _blocked(pid):
    with connection.cursor() as cursor:
        cursor.execute("SELECT cardinality(pg_blocking_pids(%s)) > 0", [pid])
        return cursor.fetchone()[0]


@pytest.mark.parametrize("order", ["key_order", "reverse", "conflict_then_supersede"])
def test_a_batch_and_a_retrieval_lock_the_conflict_items_in_one_order(
    monkeypatch, tenant, agent, order
):
    """The batch supersedes one key's head and (``conflict_then_supersede``: its first item
    is weaker) opens or joins the other key's conflict, while a retrieval holds the first
    key's item and waits to add a row to the second's. Before: the write failed with
    "deadlock detected" in every order but one."""
    source = TOOL if order == "conflict_then_supersede" else INFERRED
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    system = SystemPrincipal(tenant_id=tenant.id)
    memory_store_many(
        drafts=_rivals(
            subject,
            deploy=("eu-west-1", "us-east-1"),
            database=("PostgreSQL", "MySQL"),
            database_source=source,
        ),
        principal=system,
    )
    with tenant_scope(tenant.id):
        r0 = retrieve(
            principal=AgentPrincipal.from_agent(agent),
            request=RetrievalRequest(query=QUERY, user_id="dana"),
        )
        assert {c.memory_key for c in r0.clarifications} == {"deploy.region", "database.engine"}
        items = {i.memory_key: i for i in ReviewItem.objects.filter(kind="conflict", state="open")}
        assert set(items) == {"deploy.region", "database.engine"}
    own = AgentFactory(tenant=tenant)
    memory_store_many(
        drafts=_rivals(
            subject,
            agent=own.id,
            deploy=("ap-south-1",),
            database=("SQLite",),
            database_source=source,
        ),
        principal=system,
    )
    reader_principal = AgentPrincipal.from_agent(own)

    first_open, go = threading.Event(), threading.Event()
    real_open = conflict_service.conflict_open
    state = {"n": 0}
    pids = {}

    def paused_open(**kwargs):
        item = real_open(**kwargs)
        state["n"] += 1
        if state["n"] == 1:
            first_open.set()
            assert go.wait(30)
        return item

    monkeypatch.setattr(conflict_service, "conflict_open", paused_open)

    def reader():
        with tenant_scope(tenant.id), transaction.atomic():
            with connection.cursor() as c:
                c.execute("SELECT pg_backend_pid()")
                pids["reader"] = c.fetchone()[0]
            return retrieve(
                principal=reader_principal,
                request=RetrievalRequest(query=QUERY, user_id="dana"),
            )

    def writer():
        with tenant_scope(tenant.id), transaction.atomic():
            with connection.cursor() as c:
                c.execute("SELECT pg_backend_pid()")
                pids["writer"] = c.fetchone()[0]
            items_ = [
                inferred_episode("deploy.region", "Deploys go to eu-central-1 region."),
                inferred_episode("database.engine", "The database engine is MariaDB."),
            ]
            if order in ("key_order", "conflict_then_supersede"):
                items_.reverse()
            return writes.memory_write_batch(principal=system, items=items_)

    r = in_thread(reader, name="reader", released=[first_open])
    assert first_open.wait(60)
    assert r.error is None, r.error
    w = in_thread(writer, name="writer")
    deadline = time.monotonic() + 30
    while not ("writer" in pids and _blocked(pids["writer"])):
        if not w.is_alive():
            break
        assert time.monotonic() < deadline, "writer never waited"
        time.sleep(0.02)
    go.set()
    assert errors_of(r, w) == []
    assert {result.decision for result in w.result} == {"accepted"}


def _region_rivals(tenant):
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    system = SystemPrincipal(tenant_id=tenant.id)
    drafts = _rivals(subject, deploy=["eu-west-1", "us-east-1"], database=[])
    rivals = memory_store_many(drafts=drafts, principal=system)
    return system, rivals


def _opening_reader(monkeypatch, tenant, agent, *, opened=None, commit=None):
    """A retrieval that pauses once it has read the region's rows (``fetched``, until ``go``)
    and, if ``opened`` is given, once it has opened their conflict, before its commit (until
    ``commit``)."""
    fetched, go = threading.Event(), threading.Event()
    real = pipeline.filters.apply_hard_filters

    def paused(found, **kwargs):
        fetched.set()
        assert go.wait(30)
        return real(found, **kwargs)

    monkeypatch.setattr(pipeline.filters, "apply_hard_filters", paused)

    def reader():
        with tenant_scope(tenant.id), transaction.atomic():
            retrieve(
                principal=AgentPrincipal.from_agent(agent),
                request=RetrievalRequest(query="which region do deploys go to?", user_id="dana"),
            )
            if opened is not None:
                opened.set()
                assert commit.wait(30)

    return (
        fetched,
        go,
        in_thread(reader, name="reader", released=[fetched] + ([opened] if opened else [])),
    )


def _choose(principal, item, winner, *, seen):
    conflict_resolve(
        principal=principal,
        item_id=item.id,
        outcome="choose_winner",
        winner_id=winner,
        reason="user chose",
        seen_candidate_ids=seen,
    )


def _region_conflict(tenant, new_version):
    """The open region conflict's candidates and their statuses."""
    with tenant_scope(tenant.id):
        item = ReviewItem.objects.get(kind="conflict", state="open", memory_key="deploy.region")
        status = dict(Memory.objects.values_list("pk", "status"))
    assert new_version.id in item.candidate_ids, "the conflict cites the retired row instead"
    assert all(status[c] == "active" for c in item.candidate_ids)
    return item


def test_a_conflict_opened_from_rows_read_before_a_supersession_cites_the_new_version(
    monkeypatch, tenant, agent
):
    system, (older, newer) = _region_rivals(tenant)
    fetched, go, reader = _opening_reader(monkeypatch, tenant, agent)
    assert fetched.wait(30)
    with tenant_scope(tenant.id):
        w = memory_write(
            principal=system,
            data=inferred_episode("deploy.region", "Deploys go to eu-central-1 region."),
        )
    go.set()
    reader.outcome(30)
    with tenant_scope(tenant.id):
        item = ReviewItem.objects.get(kind="conflict", state="open")
        status = dict(Memory.objects.values_list("pk", "status"))
        assert all(status[c] == "active" for c in item.candidate_ids)
        survivor = ({older.id, newer.id} - {w.memory.supersedes_id}).pop()
        _choose(system, item, survivor, seen=item.candidate_ids)
        active = list(
            Memory.objects.filter(memory_key="deploy.region", status="active").values_list(
                "pk", flat=True
            )
        )
    assert w.memory.id in item.candidate_ids
    assert active == [survivor]  # the choice revoked the new version, not a retired row


def test_a_conflict_opened_while_a_batch_waits_follows_the_batchs_new_head(tenant, agent):
    """A batch reads which of its superseded heads an open conflict cites once, and again
    after each wait for a conflict's lock: while it waited for the engine's item, a retrieval
    opened the region's conflict from rows read before the batch committed, and the item was
    left citing the superseded row (stop 51's review of the batch's one read)."""
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    system = SystemPrincipal(tenant_id=tenant.id)
    engine_a, engine_b, region_a, region_b = memory_store_many(
        drafts=[
            *_rivals(subject, deploy=[], database=["PostgreSQL", "MySQL"]),
            *_rivals(subject, deploy=["eu-west-1", "us-east-1"], database=[]),
        ],
        principal=system,
    )
    with tenant_scope(tenant.id):  # the engine's conflict is open already, the region's not
        engine_item = conflict_service.conflict_open(
            tenant_id=tenant.id,
            subject_id=subject.id,
            memory_key="database.engine",
            place=ConflictPlace.of(engine_a),
            candidate_ids=[engine_a.id, engine_b.id],
        )
    locked, release = threading.Event(), threading.Event()
    pids = {}

    def holder():  # a reviewer's page, or another retrieval, holding the engine's item
        with tenant_scope(tenant.id), transaction.atomic():
            ReviewItem.objects.select_for_update().get(pk=engine_item.pk)
            locked.set()
            assert release.wait(60)

    def writer():
        with tenant_scope(tenant.id), transaction.atomic():
            with connection.cursor() as c:
                c.execute("SELECT pg_backend_pid()")
                pids["writer"] = c.fetchone()[0]
            return writes.memory_write_batch(
                principal=system,
                items=[
                    inferred_episode("database.engine", "The database engine is MariaDB."),
                    inferred_episode("deploy.region", "Deploys go to eu-central-1 region."),
                ],
            )

    def reader():
        with tenant_scope(tenant.id), transaction.atomic():
            return retrieve(
                principal=AgentPrincipal.from_agent(agent),
                request=RetrievalRequest(query="which region do deploys go to?", user_id="dana"),
            )

    h = in_thread(holder, name="holder", released=[locked])
    assert locked.wait(30) and h.error is None, h.error
    w = in_thread(writer, name="writer")
    deadline = time.monotonic() + 60
    while not ("writer" in pids and _blocked(pids["writer"])):
        assert w.is_alive(), w.error
        assert time.monotonic() < deadline, "the batch never waited for the engine's item"
        time.sleep(0.02)
    # While the batch waits (the region's head superseded, not committed), a retrieval sees
    # the region's two chains and opens their conflict; it commits first.
    in_thread(reader, name="reader").outcome(60)
    release.set()
    assert errors_of(h, w) == []
    assert all("supersession.supersedes" in r.rule_codes for r in w.result)
    new_region = w.result[1].memory
    with tenant_scope(tenant.id):
        region_item = ReviewItem.objects.get(
            kind="conflict", state="open", memory_key="deploy.region"
        )
        status = dict(Memory.objects.values_list("pk", "status"))
    kept = ({region_a.id, region_b.id} - {new_region.supersedes_id}).pop()
    assert {c: status[c] for c in region_item.candidate_ids} == {
        kept: "active",
        new_region.id: "active",
    }


def test_a_subject_deletion_run_leaves_the_conflicts_made_after_its_request_their_key(
    tenant,
    private_queue,  # noqa: F811
):
    system = SystemPrincipal(tenant_id=tenant.id)
    common = {
        "subject": "user-1",
        "memory_type": "project_constraint",
        "scope": "project:atlas",
        "memory_key": "backend.language",
    }
    with tenant_scope(tenant.id):
        memory_write(principal=system, data=write_body(**common, content="Backend is Java."))
        subject = Subject.objects.get(external_id="user-1")
        operation = deletion_request(principal=system, subject_id=subject.id)
        # the user keeps talking: new memories after the request, before the run
        memory_write(principal=system, data=write_body(**common, content="Backend is Python."))
        memory_write(
            principal=system,
            data=write_body(**common, content="Backend is Ruby.", source=SOURCE_INFERRED),
        )
        before = conflict_items()
    with tenant_scope(tenant.id):
        status = deletion_run(operation_id=operation.id)
        after = conflict_items()
        # another lower write on the key: does it join the item?
        memory_write(
            principal=system,
            data=write_body(**common, content="Backend is Go.", source=SOURCE_INFERRED),
        )
        later = conflict_items()
    assert status == "completed"
    assert [i["memory_key"] for i in before] == ["backend.language"]
    assert all(i["memory_key"] == "backend.language" for i in after if i["state"] == "open")
    # ... so the next weaker write on the key joins it rather than opening a second one.
    assert len([i for i in later if i["state"] == "open"]) == 1


def test_a_conflict_joined_after_a_subject_deletion_request_keeps_its_key(
    tenant,
    private_queue,  # noqa: F811
):
    """The run stripped the key and place of every item of the subject made before its
    request, and an open conflict of then, which the user's new memories joined before the
    run (their rows replaced the deleted ones), stayed open citing live rows without its key:
    the next conflict on the key opened a second item (stop 54's audit of the reviewer's
    side). It keeps its key, and the run still verifies."""
    system = SystemPrincipal(tenant_id=tenant.id)
    common = {
        "subject": "user-1",
        "memory_type": "project_constraint",
        "scope": "project:atlas",
        "memory_key": "backend.language",
    }
    inferred = {"source": SOURCE_INFERRED}
    with tenant_scope(tenant.id):
        memory_write(principal=system, data=write_body(**common, content="Backend is Java."))
        memory_write(
            principal=system, data=write_body(**common, content="Backend is Kotlin.", **inferred)
        )
        subject = Subject.objects.get(external_id="user-1")
        operation = deletion_request(principal=system, subject_id=subject.id)
        memory_write(principal=system, data=write_body(**common, content="Backend is Python."))
        memory_write(
            principal=system, data=write_body(**common, content="Backend is Ruby.", **inferred)
        )
        assert [i["memory_key"] for i in conflict_items()] == ["backend.language"]
    with tenant_scope(tenant.id):
        assert deletion_run(operation_id=operation.id) == "completed"
        after = conflict_items()
        memory_write(
            principal=system, data=write_body(**common, content="Backend is Go.", **inferred)
        )
        later = conflict_items()
    assert [i["memory_key"] for i in after if i["state"] == "open"] == ["backend.language"]
    assert len([i for i in later if i["state"] == "open"]) == 1


def test_a_conflict_committed_after_a_supersession_it_could_not_see_is_mended(
    monkeypatch, tenant, agent
):
    """Stop 51's left-open race, the retrieval committing last: it read the rows' statuses
    (both heads active) before the write committed, the write's own read of the conflicts
    citing its head could not see the item the retrieval had not committed, and the item cited
    the retired head. The retrieval looks again once it has committed."""
    system, _ = _region_rivals(tenant)
    opened, commit = threading.Event(), threading.Event()
    fetched, go, reader = _opening_reader(monkeypatch, tenant, agent, opened=opened, commit=commit)
    assert fetched.wait(30)
    go.set()
    assert opened.wait(30) and reader.error is None, reader.error
    with tenant_scope(tenant.id):  # commits while the retrieval's item is not committed yet
        w = memory_write(
            principal=system,
            data=inferred_episode("deploy.region", "Deploys go to eu-central-1 region."),
        )
    assert w.memory.supersedes_id is not None
    commit.set()
    reader.outcome(30)
    _region_conflict(tenant, w.memory)


def test_a_conflict_committed_before_a_supersession_that_could_not_see_it_is_mended(
    monkeypatch, tenant, agent
):
    """The same race, the write committing last: its read of the conflicts citing its head
    came before the retrieval's item was committed, and the retrieval had read the head
    active. The write looks again once it has committed."""
    system, _ = _region_rivals(tenant)
    fetched, go, reader = _opening_reader(monkeypatch, tenant, agent)
    assert fetched.wait(30)
    written, commit = threading.Event(), threading.Event()

    def writer():
        with tenant_scope(tenant.id), transaction.atomic():
            result = memory_write(
                principal=system,
                data=inferred_episode("deploy.region", "Deploys go to eu-central-1 region."),
            )
            written.set()
            assert commit.wait(30)
        return result

    w = in_thread(writer, name="writer", released=[written])
    assert written.wait(30) and w.error is None, w.error
    go.set()
    reader.outcome(30)  # the retrieval opens the conflict and commits first
    commit.set()
    new_version = w.outcome(30).memory
    _region_conflict(tenant, new_version)


def _stale_region_conflict(tenant):
    """The region's conflict, then a write superseding one of its heads, and the item put back
    citing the retired head, as the race left it before (or a mend that failed)."""
    system, (west, east) = _region_rivals(tenant)
    with tenant_scope(tenant.id):
        item = conflict_service.conflict_open(
            tenant_id=tenant.id,
            subject_id=west.subject_id,
            memory_key="deploy.region",
            place=ConflictPlace.of(west),
            candidate_ids=[west.id, east.id],
        )
        w = memory_write(
            principal=system,
            data=inferred_episode("deploy.region", "Deploys go to eu-central-1 region."),
        )
        ReviewItem.objects.filter(pk=item.pk).update(candidate_ids=[west.id, east.id])
    return system, (west, east), item, w


def test_a_resolution_refuses_a_conflict_still_citing_a_retired_row_until_the_sweep_mends_it(
    tenant,
):
    """A conflict left citing a superseded row (a mend after a commit that failed, or an item
    stored before there was one) is not resolved as it stands: choosing the other chain would
    revoke nothing of the new version. The retention sweep mends it."""
    system, (west, east), item, w = _stale_region_conflict(tenant)
    survivor = ({west.id, east.id} - {w.memory.supersedes_id}).pop()
    with tenant_scope(tenant.id):
        with pytest.raises(Conflict) as refused:
            _choose(system, item, survivor, seen=[west.id, east.id])
        assert refused.value.code == "conflict_changed"
        assert Memory.objects.get(pk=w.memory.id).status == "active"
    report = retention_apply()
    assert report["conflicts_healed"] == 1
    with tenant_scope(tenant.id):
        item.refresh_from_db()
        assert sorted(item.candidate_ids, key=str) == sorted([survivor, w.memory.id], key=str)
        _choose(system, item, survivor, seen=item.candidate_ids)
        assert Memory.objects.get(pk=w.memory.id).status == "revoked"
    assert retention_apply()["conflicts_healed"] == 0


def test_a_second_retrieval_holding_the_item_mends_it_after_its_own_commit(
    monkeypatch, tenant, agent
):
    """Two retrievals read the region's two heads before a write supersedes one. The first
    opens the conflict and commits after the write; the second, whose insert waited for the
    first's, then locks the item and finds it holding every row it read. The first one's mend
    (``conflicts_heal``, SKIP LOCKED) runs while the second holds the item, and skips it: the
    second registered no mend, and the item was left citing the retired head (stop 52's
    review of its own change). Every call that locks the item looks again after its commit."""
    system, (west, east) = _region_rivals(tenant)
    fetched = {"R1": threading.Event(), "R2": threading.Event()}
    go = {"R1": threading.Event(), "R2": threading.Event()}
    opened, commit1 = threading.Event(), threading.Event()
    r2_done, commit2 = threading.Event(), threading.Event()
    real_filters = pipeline.filters.apply_hard_filters
    real_heal = conflict_service.conflicts_heal

    def paused_filters(found, **kwargs):
        name = threading.current_thread().name
        if name in fetched:
            fetched[name].set()
            assert go[name].wait(30)
        return real_filters(found, **kwargs)

    def heal_when_r2_holds(**kwargs):
        # Only orders R1's mend after R2 has locked the item (as it would, by timing).
        if threading.current_thread().name == "R1":
            assert r2_done.wait(30)
        return real_heal(**kwargs)

    monkeypatch.setattr(pipeline.filters, "apply_hard_filters", paused_filters)
    monkeypatch.setattr(conflict_service, "conflicts_heal", heal_when_r2_holds)

    def reader(done, commit):
        def work():
            with tenant_scope(tenant.id), transaction.atomic():
                retrieve(
                    principal=AgentPrincipal.from_agent(agent),
                    request=RetrievalRequest(
                        query="which region do deploys go to?", user_id="dana"
                    ),
                )
                done.set()
                assert commit.wait(30)

        return work

    r1 = in_thread(reader(opened, commit1), name="R1", released=[fetched["R1"], opened])
    r2 = in_thread(reader(r2_done, commit2), name="R2", released=[fetched["R2"], r2_done])
    assert fetched["R1"].wait(30) and fetched["R2"].wait(30)
    go["R1"].set()
    assert opened.wait(30) and r1.error is None, r1.error
    go["R2"].set()
    deadline = time.monotonic() + 30
    while not someone_waits_for_a_lock():  # R2's insert waits for R1's item
        assert r2.is_alive() and time.monotonic() < deadline, r2.error
        time.sleep(0.02)
    with tenant_scope(tenant.id):
        w = memory_write(
            principal=system,
            data=inferred_episode("deploy.region", "Deploys go to eu-central-1 region."),
        )
    assert w.memory.supersedes_id is not None
    commit1.set()
    r1.wait(60)
    commit2.set()
    assert errors_of(r1, r2) == []
    with tenant_scope(tenant.id):
        item = ReviewItem.objects.get(kind="conflict", state="open", memory_key="deploy.region")
        status = dict(Memory.objects.values_list("pk", "status"))
    assert {status[c] for c in item.candidate_ids} == {"active"}, {
        str(c): status[c] for c in item.candidate_ids
    }
    assert w.memory.id in item.candidate_ids


def test_the_sweeps_mend_records_its_conflict_event_as_the_mend(tenant):
    """DESIGN.md: every change is an event with its actor and policy version. The retention
    sweep's mend recorded the new version's ``conflict`` event as ``system:retrieval``, with
    no policy version (stop 52's review)."""
    _, _, _, w = _stale_region_conflict(tenant)
    report = retention_apply()
    with tenant_scope(tenant.id):
        events = list(
            MemoryEvent.objects.filter(memory_id=w.memory.id, action="conflict").values(
                "actor_type", "actor_id", "policy_version", "reason_code"
            )
        )
    assert report["conflicts_healed"] == 1
    assert [(e["actor_id"], e["policy_version"]) for e in events] == [
        ("conflict_mend", w.memory.policy_version)
    ]
