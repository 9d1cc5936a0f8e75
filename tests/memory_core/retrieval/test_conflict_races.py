"""Two retrievals of one subject at once, each with clarifications on two conflicting keys.

The clarifications come in score order, which depends on the query: QUERY_A and QUERY_B
rank the two keys the other way round. Each retrieval reaches its first ``conflict_open``,
then waits until the other one has reached its own or is waiting for a lock, so both hold
what they took first. ``conflict_open`` used to lock the open item (``FOR UPDATE``, held until
commit) in that score order, even with nothing to add: the two locked the items in opposite
orders and PostgreSQL broke the cycle with "deadlock detected" (an OperationalError, the API's
503 ``memory_unavailable``).

And a retrieval that read a key's rivals before a reviewer's resolution of their conflict
committed, and asks for the conflict's item after.
"""

import threading
import time

import pytest
from django.db import connection, transaction

from memory_core.models import Memory, ReviewItem, Status
from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.types import RetrievalRequest
from memory_core.rls import tenant_scope
from memory_core.services import conflicts as conflict_service
from memory_core.services.memories import memory_store_many
from tests.factories import AgentFactory, SubjectFactory
from tests.threads import errors_of, in_thread

from .conftest import draft

pytestmark = pytest.mark.django_db(transaction=True)

INFERRED = {"authority": "model_inference", "source_type": "model_inference"}
QUERY_A = "which region do deploys go to? and the database engine"
QUERY_B = "which database engine do we use? and the deploy region"
KEYS = ("database.engine", "deploy.region")
# How long a request waits for the other to reach its first conflict_open; only a broken
# test (not a deadlock, which PostgreSQL reports within deadlock_timeout) gets this far.
WAIT = 10


def _rivals(subject, *, agent=None, deploy, database):
    return [
        draft(subject, f"Deploys go to {region} region.", "episode",
              memory_key="deploy.region", agent_id=agent, **INFERRED)
        for region in deploy
    ] + [
        draft(subject, f"The database engine is {engine}.", "episode",
              memory_key="database.engine", agent_id=agent, **INFERRED)
        for engine in database
    ]  # fmt: skip


def _ask(principal, query):
    return retrieve(principal=principal, request=RetrievalRequest(query=query, user_id="dana"))


DEPLOY_QUERY = "which region do deploys go to?"


def _deploy_rivals(subject, *regions) -> list:
    """Store inferred rivals on ``deploy.region``, one a region."""
    return memory_store_many(
        drafts=_rivals(subject, deploy=regions, database=()),
        principal=SystemPrincipal(tenant_id=subject.tenant_id),
    )


def _held_at_the_lookup(monkeypatch, tenant_id, principal):
    """Start a retrieval of ``DEPLOY_QUERY`` on a thread that waits, its candidates read,
    just before it looks its conflicts up; return (the thread, the event that lets it go)
    once it waits. Other retrievals go straight through."""
    reached, go = threading.Event(), threading.Event()
    real_lookup = conflict_service.conflict_lookup

    def lookup_once_let_go(**kwargs):
        if threading.current_thread().name == "held":
            reached.set()
            assert go.wait(WAIT)
        return real_lookup(**kwargs)

    monkeypatch.setattr(conflict_service, "conflict_lookup", lookup_once_let_go)

    def held():
        with tenant_scope(tenant_id), transaction.atomic():
            return _ask(principal, DEPLOY_QUERY)

    reader = in_thread(held, name="held", released=[reached])
    assert reached.wait(WAIT), reader.error
    return reader, go


def _blocked(pid) -> bool:
    # pg_blocking_pids reads the lock manager itself, not the transaction's snapshot of
    # pg_stat_activity, so polling it inside a transaction sees a wait begin.
    with connection.cursor() as cursor:
        cursor.execute("SELECT cardinality(pg_blocking_pids(%s)) > 0", [pid])
        return cursor.fetchone()[0]


def _race(monkeypatch, tenant_id, requests: dict) -> tuple[dict, list]:
    """Run the retrievals of ``requests`` (name: (principal, query)) at once, each in its own
    transaction; return the keys of each one's clarifications, in order, and the names of
    those that waited for a lock the other held."""
    opened = {name: threading.Event() for name in requests}
    pids, waited = {}, []
    local = threading.local()
    real_open = conflict_service.conflict_open

    def first_then_wait(**kwargs):
        item = real_open(**kwargs)
        if not getattr(local, "paused", False):
            local.paused = True
            opened[local.name].set()
            (other,) = set(requests) - {local.name}
            deadline = time.monotonic() + WAIT
            while not opened[other].wait(0.01):
                if _blocked(pids[other]):
                    waited.append(other)
                    break
                assert time.monotonic() < deadline, f"{other} never reached conflict_open"
        return item

    monkeypatch.setattr(conflict_service, "conflict_open", first_then_wait)
    ready = threading.Barrier(len(requests), timeout=WAIT)  # every pid known before anyone asks

    def run(name, principal, query):
        local.name = name
        with tenant_scope(tenant_id), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                pids[name] = cursor.fetchone()[0]
            ready.wait(WAIT)
            result = _ask(principal, query)
        return [c.memory_key for c in result.clarifications]

    threads = [
        # An error lets the other request stop waiting for this one.
        in_thread(lambda r=r, name=name: run(name, *r), name=name, released=[opened[name]])
        for name, r in requests.items()
    ]
    assert errors_of(*threads) == []
    return {thread.name: thread.result for thread in threads}, waited


def _open_items():
    return {i.memory_key: i for i in ReviewItem.objects.filter(kind="conflict", state="open")}


def test_retrievals_that_add_nothing_to_the_open_items_lock_none(monkeypatch, tenant, agent):
    """Both items already hold every row: the retrievals read them and take no lock."""
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    rows = memory_store_many(
        drafts=_rivals(subject, deploy=("eu-west-1", "us-east-1"),
                       database=("PostgreSQL", "MySQL")),
        principal=SystemPrincipal(tenant_id=tenant.id),
    )  # fmt: skip
    principal = AgentPrincipal.from_agent(agent)
    with tenant_scope(tenant.id):
        _ask(principal, QUERY_A)  # opens both items
        before = _open_items()

    asked, waited = _race(
        monkeypatch, tenant.id, {"a": (principal, QUERY_A), "b": (principal, QUERY_B)}
    )

    assert asked["a"] == list(reversed(asked["b"])) and set(asked["a"]) == set(KEYS)
    assert waited == []
    with tenant_scope(tenant.id):
        after = _open_items()
    assert {k: i.id for k, i in after.items()} == {k: i.id for k, i in before.items()}
    assert {i for item in after.values() for i in item.candidate_ids} == {r.id for r in rows}


def test_retrievals_that_add_rows_to_the_open_items_lock_them_in_one_order(
    monkeypatch, tenant, agent
):
    """Each agent sees a private rival on each key, so each request adds a row to both items
    and locks them: in key order, whatever order its clarifications come in."""
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    system = SystemPrincipal(tenant_id=tenant.id)
    shared = memory_store_many(
        drafts=_rivals(subject, deploy=("eu-west-1", "us-east-1"),
                       database=("PostgreSQL", "MySQL")),
        principal=system,
    )  # fmt: skip
    with tenant_scope(tenant.id):
        _ask(AgentPrincipal.from_agent(agent), QUERY_A)  # opens both items, shared rows only
    requests, private = {}, []
    for (name, query), deploy, database in (
        (("a", QUERY_A), "ap-south-1", "SQLite"),
        (("b", QUERY_B), "sa-east-1", "Oracle"),
    ):
        own = AgentFactory(tenant=tenant)
        private += memory_store_many(
            drafts=_rivals(subject, agent=own.id, deploy=(deploy,), database=(database,)),
            principal=system,
        )
        requests[name] = (AgentPrincipal.from_agent(own), query)

    asked, _ = _race(monkeypatch, tenant.id, requests)

    assert asked["a"] == list(reversed(asked["b"])) and set(asked["a"]) == set(KEYS)
    with tenant_scope(tenant.id):
        items = _open_items()
    assert set(items) == set(KEYS)
    # Every row either request saw, on its key's item.
    assert {i for item in items.values() for i in item.candidate_ids} == {
        r.id for r in [*shared, *private]
    }
    keys = {r.id: r.memory_key for r in [*shared, *private]}
    assert all({keys[i] for i in item.candidate_ids} == {key} for key, item in items.items())


def _resolved_under_a_held_retrieval(monkeypatch, tenant, agent, reviewer):
    """Two rivals on ``deploy.region`` whose conflict a first retrieval opened; a second
    retrieval held at its lookup (``_held_at_the_lookup``) while a reviewer chooses the first
    rival. Return (winner, loser, the agent's principal, the subject, the held reader, the
    event that lets it go on)."""
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    winner, loser = _deploy_rivals(subject, "eu-west-1", "us-east-1")
    principal = AgentPrincipal.from_agent(agent)
    with tenant_scope(tenant.id):
        assert [c.memory_key for c in _ask(principal, DEPLOY_QUERY).clarifications] == [
            "deploy.region"
        ]
        item = ReviewItem.objects.get(kind="conflict", state="open")

    reader, go = _held_at_the_lookup(monkeypatch, tenant.id, principal)
    with tenant_scope(tenant.id):
        conflict_service.conflict_resolve(
            principal=reviewer, item_id=item.id, outcome="choose_winner",
            winner_id=winner.id, reason="the user said eu-west-1",
        )  # fmt: skip
    return winner, loser, principal, subject, reader, go


def test_a_retrieval_racing_a_choose_winner_opens_no_conflict_citing_the_revoked_loser(
    monkeypatch, tenant, agent, reviewer
):
    """A retrieval that read both rivals before a reviewer chose a winner found the item
    resolved and opened a new one citing the winner and the loser just revoked: the
    conflict was back in the reviewers' queue with nothing to choose, and its answer asked
    the user about the loser (stop 58's audit of races). It opens nothing now and gives
    neither row: the next retrieval gives the winner."""
    winner, loser, principal, subject, reader, go = _resolved_under_a_held_retrieval(
        monkeypatch, tenant, agent, reviewer
    )
    go.set()
    raced = reader.outcome(WAIT)

    with tenant_scope(tenant.id):
        assert Memory.objects.get(pk=loser.pk).status == Status.REVOKED
        assert not ReviewItem.objects.filter(kind="conflict", state="open").exists()
    assert raced.clarifications == [] and raced.items == []
    assert [o["rule"] for o in raced.trace["conflicts"]] == ["settled_since_read"]
    monkeypatch.undo()
    with tenant_scope(tenant.id):
        assert [c.id for c in _ask(principal, DEPLOY_QUERY).items] == [str(winner.id)]


def test_a_racing_retrieval_never_asks_about_the_loser_revoked_since(
    monkeypatch, tenant, agent, reviewer
):
    """The same race with another item open at the place by the time the retrieval asks for
    one (a new rival's): ``conflict_open`` joined the rows still in use to it and returned
    it, and the answer asked about the revoked loser beside an item citing another rival
    (stop 58's review of its own fix above, which had covered only the place with no item
    open). It asks nothing about them now; its trace says why."""
    winner, loser, principal, subject, reader, go = _resolved_under_a_held_retrieval(
        monkeypatch, tenant, agent, reviewer
    )
    # Meanwhile a new rival of the winner is written, and another retrieval opens its item.
    (newer,) = _deploy_rivals(subject, "ap-south-1")
    with tenant_scope(tenant.id):
        assert _ask(principal, DEPLOY_QUERY).clarifications
        second = ReviewItem.objects.get(kind="conflict", state="open")
    assert {str(i) for i in second.candidate_ids} == {str(winner.id), str(newer.id)}
    go.set()
    raced = reader.outcome(WAIT)

    with tenant_scope(tenant.id):
        assert Memory.objects.get(pk=loser.pk).status == Status.REVOKED
    asked = [sorted(c.id for c in cl.candidates) for cl in raced.clarifications]
    assert all(str(loser.id) not in ids for ids in asked), (
        f"the answer asks about the revoked loser {loser.id}: {asked}, "
        f"pointing at item {[cl.review_item_id for cl in raced.clarifications]}"
    )
    assert [o["rule"] for o in raced.trace["conflicts"]] == ["settled_since_read"]
