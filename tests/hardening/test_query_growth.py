"""Pages and endpoints whose query count grew with the rows they show (stop 50's audit).

Each test measures one request with few rows and with many, and asserts the count does not
grow (or grows by at most a small constant); docs/performance.md, "Queries that grow with a
batch", has the figures."""

import re
import uuid
from collections import Counter

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory_core import models
from memory_core.principals import SystemPrincipal
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.types import RetrievalRequest
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory, write_body
from tests.portal.conftest import make_login

pytestmark = pytest.mark.django_db


def counted(fn):
    with CaptureQueriesContext(connection) as captured:
        response = fn()
    return captured, response


def repeated(captured, top: int = 2) -> str:
    """The most repeated statements of ``captured``, for the failure message."""
    shapes = Counter(re.sub(r"'[^']*'|\d+", "?", q["sql"])[:140] for q in captured.captured_queries)
    return "; ".join(f"{n}x {sql}" for sql, n in shapes.most_common(top))


# --- The admin's changelists ----------------------------------------------------------------


def _admin_rows(kind: str, tenant, count: int) -> None:
    for _ in range(count):
        agent = AgentFactory(tenant=tenant)
        subject = SubjectFactory(tenant=tenant)
        if kind == "admissiondecision":
            models.AdmissionDecision.objects.create(
                tenant=tenant, agent=agent, subject=subject, outcome="rejected", rule_codes=["x"]
            )
        elif kind == "retrievaltrace":
            models.RetrievalTrace.objects.create(
                tenant=tenant, agent=agent, subject=subject, mode="full"
            )
        elif kind == "tombstone":
            operation = models.DeletionOperation.objects.create(
                tenant=tenant, subject=subject, target="memory", status="completed",
                completed_at=timezone.now(),
            )  # fmt: skip
            models.Tombstone.objects.create(
                tenant_id=tenant.pk, subject_id=subject.pk, memory_id=uuid.uuid4(),
                operation=operation,
            )  # fmt: skip
        elif kind == "portalmembership":
            make_login(f"u-{uuid.uuid4().hex[:10]}", tenant=tenant, role="end_user",
                       subject=subject)  # fmt: skip


@pytest.mark.parametrize(
    "kind", ["admissiondecision", "retrievaltrace", "tombstone", "portalmembership"]
)
def test_an_admin_changelist_makes_as_many_queries_for_20_rows_as_for_1(admin_client, tenant, kind):
    """Each list shows a nullable foreign key (a decision's or a trace's agent, a tombstone's
    operation, a membership's subject). Django's changelist, without ``list_select_related``,
    joins only the non-null ones (``select_related()``): each row's nullable one is a query
    of its own, 100 for a full page."""
    url = f"/admin/memory_core/{kind}/"
    _admin_rows(kind, tenant, 1)
    few, response = counted(lambda: admin_client.get(url))
    assert response.status_code == 200
    _admin_rows(kind, tenant, 20)
    many, response = counted(lambda: admin_client.get(url))
    assert response.status_code == 200
    assert len(many) == len(few), (
        f"{kind}: {len(few)} queries for 1 row, {len(many)} for 21; {repeated(many)}"
    )


# --- GET /api/v1/deletions and /api/v1/deletions/{id} with queued deletions -----------------


def _queued_subjects(tenant, queuer, count: int) -> None:
    """``count`` subjects, each with a memory and a whole-subject deletion queued by
    ``queuer`` (as ``deletion_request_or_queue`` marks one too large for a request)."""
    for _ in range(count):
        subject = SubjectFactory(tenant=tenant)
        MemoryFactory(subject=subject)
        models.Subject.objects.filter(pk=subject.pk).update(
            deletion_queued_at=timezone.now(), deletion_queued_by_agent=queuer
        )


@pytest.fixture
def reader(tenant):
    """An agent of the tenant that may act for every subject, and its client (warmed)."""
    client = client_for(AgentFactory(tenant=tenant, any_subject=True))
    client.get("/api/v1/whoami")
    return client


def test_the_deletions_list_makes_as_many_queries_for_20_queued_deletions_as_for_1(reader, tenant):
    """Each queued deletion costs the list two queries: ``_queued_within_grant``'s EXISTS
    for the subject (an agent that did not queue it), and the serializer's ``steps.all`` on
    the unsaved operation (which has no steps, by construction). And every queued subject of
    the tenant is checked, not only the 100 the list shows."""
    queuer = AgentFactory(tenant=tenant, any_subject=True)
    _queued_subjects(tenant, queuer, 1)
    few, response = counted(lambda: reader.get("/api/v1/deletions"))
    assert response.status_code == 200 and len(response.json()["results"]) == 1
    _queued_subjects(tenant, queuer, 20)
    many, response = counted(lambda: reader.get("/api/v1/deletions"))
    assert response.status_code == 200 and len(response.json()["results"]) == 21
    assert len(many) == len(few), (
        f"{len(few)} queries for 1 queued deletion, {len(many)} for 21; {repeated(many)}"
    )


def test_a_deletions_detail_makes_as_many_queries_with_20_queued_deletions_as_with_1(
    reader, tenant
):
    """An id that is no stored operation (an unknown one, or a queued one) is looked for
    among the queued deletions (``_queued_get``), which checks the grant of every queued
    subject of the tenant, a query each, before answering 404."""
    queuer = AgentFactory(tenant=tenant, any_subject=True)
    url = f"/api/v1/deletions/{uuid.uuid4()}"
    _queued_subjects(tenant, queuer, 1)
    few, response = counted(lambda: reader.get(url))
    assert response.status_code == 404
    _queued_subjects(tenant, queuer, 20)
    many, response = counted(lambda: reader.get(url))
    assert response.status_code == 404
    assert len(many) == len(few), (
        f"{len(few)} queries with 1 queued deletion, {len(many)} with 21; {repeated(many)}"
    )


# --- POST /api/v1/retrieve with open conflicts ----------------------------------------------

REQUEST = RetrievalRequest(
    query="Deploy the Lunest API services to production.",
    user_id="dana",
    intent="apply_project_rules",
    project_id="lunest",
)
SERVICES = ["billing", "search", "auth", "mailer", "reports", "uploads", "payments", "gateway"]


def _rivals(tenant, subject, names) -> None:
    """Two inferred decisions on each ``deploy.<name>.region`` key: an unresolved conflict."""
    drafts = [
        MemoryDraft(subject=subject, memory_type="previous_decision",
                    memory_key=f"deploy.{name}.region",
                    content=f"Deploy the Lunest {name} API to {region}.",
                    authority="model_inference", source_type="model_inference", confidence=0.7,
                    scope_kind="project", scope_ref="lunest")
        for name in names
        for region in ("eu-west-1", "us-east-1")
    ]  # fmt: skip
    memory_store_many(drafts=drafts, principal=SystemPrincipal(tenant_id=tenant.id))


def test_a_retrieval_seeing_8_open_conflicts_makes_as_many_queries_as_one_seeing_1(
    agent_principal, tenant
):
    """Every retrieval after the first to see a conflict reads the key's open item again,
    one ``conflict_open`` (SAVEPOINT, SELECT, RELEASE) per clarification, though
    ``conflict_state`` has just read it (``conflict_lookup``, one query for all keys).
    test_pipeline's budget says four queries "small and constant"."""
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    _rivals(tenant, subject, SERVICES[:1])
    retrieve(principal=agent_principal, request=REQUEST)  # opens the item
    few, result = counted(lambda: retrieve(principal=agent_principal, request=REQUEST))
    assert len(result.clarifications) == 1
    _rivals(tenant, subject, SERVICES[1:])
    retrieve(principal=agent_principal, request=REQUEST)  # opens the other seven
    many, result = counted(lambda: retrieve(principal=agent_principal, request=REQUEST))
    assert len(result.clarifications) == 8
    assert models.ReviewItem.objects.filter(kind="conflict").count() == 8  # reused, none new
    assert len(many) == len(few), (
        f"{len(few)} queries for 1 open conflict, {len(many)} for 8; {repeated(many)}"
    )


# --- POST /api/v1/memories/batch of corrections ----------------------------------------------


def test_a_batch_of_20_superseding_writes_costs_at_most_a_constant_more_than_one(tenant):
    """New chains of a batch are inserted together (16 queries for 1 item or 20), and so are
    the writes that supersede their keys' heads (``memory_supersede_many``): one statement
    each for the heads' locks, their UPDATE, the successors' INSERT and the events, and one
    read of the open conflicts citing the heads. One at a time (until stop 51) they took
    about 8 queries an item: 23 for one, 175 for twenty."""
    client = client_for(AgentFactory(tenant=tenant, any_subject=True))

    def batch(count: int, word: str):
        items = [
            write_body(subject="u-b", memory_key=f"k.{i}",
                       content=f"User prefers {word} option {i} for tabs.")
            for i in range(count)
        ]  # fmt: skip
        return lambda: client.post("/api/v1/memories/batch", {"items": items}, format="json")

    assert batch(20, "first")().status_code == 200  # the heads (and a warm model)
    few, response = counted(batch(1, "second"))
    assert response.json()["results"][0]["rule_codes"] == ["supersession.supersedes"]
    many, response = counted(batch(20, "third"))
    assert response.status_code == 200
    assert all(r["rule_codes"] == ["supersession.supersedes"] for r in response.json()["results"])
    assert len(many) - len(few) <= 10, (
        f"{len(few)} queries for 1 superseding write, {len(many)} for 20; {repeated(many, 3)}"
    )
