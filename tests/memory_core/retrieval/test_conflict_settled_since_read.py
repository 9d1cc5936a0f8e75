"""A retrieval that read a key's rivals before a reviewer chose a winner, and finds another
item open at the place by the time it asks for one: ``conflict_open`` joined the rows still
in use to that item and returned it, and the answer asked about the revoked loser beside an
item citing another rival (stop 58's review of its own fix of ``conflict_open``, which had
covered only the place with no item open)."""

import threading

import pytest
from django.db import transaction

from memory_core.models import Memory, ReviewItem, Status
from memory_core.principals import AgentPrincipal, ReviewerPrincipal, SystemPrincipal
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.types import RetrievalRequest
from memory_core.rls import tenant_scope
from memory_core.services import conflicts as conflict_service
from memory_core.services.memories import memory_store_many
from tests.factories import SubjectFactory
from tests.memory_core.retrieval.conftest import draft
from tests.threads import in_thread

pytestmark = pytest.mark.django_db(transaction=True)

INFERRED = {"authority": "model_inference", "source_type": "model_inference"}
QUERY = "which region do deploys go to?"
WAIT = 10


def _rows(subject, *regions):
    return memory_store_many(
        drafts=[
            draft(subject, f"Deploys go to {region} region.", "episode",
                  memory_key="deploy.region", **INFERRED)
            for region in regions
        ],
        principal=SystemPrincipal(tenant_id=subject.tenant_id),
    )  # fmt: skip


def _ask(principal):
    return retrieve(principal=principal, request=RetrievalRequest(query=QUERY, user_id="dana"))


def test_a_racing_retrieval_never_asks_about_the_loser_revoked_since(
    monkeypatch, tenant, agent, django_user_model
):
    """A retrieval whose rows a reviewer settled since it read them asks nothing about them,
    though another item is open at the place by then; its trace says why."""
    user = django_user_model.objects.create_user("reviewer-of-the-race")
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=user.id)
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    winner, loser = _rows(subject, "eu-west-1", "us-east-1")
    principal = AgentPrincipal.from_agent(agent)
    with tenant_scope(tenant.id):
        assert [c.memory_key for c in _ask(principal).clarifications] == ["deploy.region"]
        first = ReviewItem.objects.get(kind="conflict", state="open")

    # The retrieval under test is held after reading its candidates (a pause, the real
    # lookup is called after it).
    reached, go = threading.Event(), threading.Event()
    real_lookup = conflict_service.conflict_lookup

    def lookup_after_the_others(**kwargs):
        if threading.current_thread().name == "held":
            reached.set()
            assert go.wait(WAIT)
        return real_lookup(**kwargs)

    monkeypatch.setattr(conflict_service, "conflict_lookup", lookup_after_the_others)

    def held():
        with tenant_scope(tenant.id), transaction.atomic():
            return _ask(principal)

    reader = in_thread(held, name="held", released=[reached])
    assert reached.wait(WAIT), reader.error
    with tenant_scope(tenant.id):
        conflict_service.conflict_resolve(
            principal=reviewer, item_id=first.id, outcome="choose_winner",
            winner_id=winner.id, reason="the user said eu-west-1",
        )  # fmt: skip
    # Meanwhile a new rival of the winner is written, and another retrieval opens its item.
    (newer,) = _rows(subject, "ap-south-1")
    with tenant_scope(tenant.id):
        assert _ask(principal).clarifications
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
