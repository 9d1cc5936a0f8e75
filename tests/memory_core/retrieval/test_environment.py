"""Environment-tied memories: only the active environment's, and the untied ones, are read.

The condition is in the candidate statement's WHERE (a tied row of another environment never
takes a store's slot) and again in the hard filters (defence in depth).
"""

import pytest
from django.utils import timezone

from memory_core.embeddings import get_embedder
from memory_core.principals import SystemPrincipal
from memory_core.retrieval import candidates
from memory_core.retrieval.candidates import fetch_candidates
from memory_core.retrieval.pipeline import build_context, lookup_subject_and_policy, retrieve
from memory_core.retrieval.types import RetrievalMode, RetrievalPlan, RetrievalRequest
from memory_core.services.memories import memory_store_many
from tests.factories import SubjectFactory

from .conftest import draft

pytestmark = pytest.mark.django_db

QUERY = "Why does the atlas-api deploy fail?"


def incident(subject, content, environment=""):
    return draft(
        subject,
        content,
        "incident",
        scope_kind="project",
        scope_ref="atlas",
        authority="tool_observation",
        source_type="verified_tool_output",
        source_tool="ci",
        environment=environment,
    )


@pytest.fixture
def deploys(tenant, agent_principal):
    dana = SubjectFactory(tenant=tenant, external_id="dana")
    specs = {
        "staging": incident(
            dana, "The atlas-api deploy fails on staging: restart the queue first.", "staging"
        ),
        "production": incident(
            dana,
            "The atlas-api deploy fails in production: drain the load balancer.",
            "production",
        ),  # fmt: skip
        "everywhere": incident(dana, "The atlas-api deploy fails when a migration is pending."),
    }
    rows = memory_store_many(
        drafts=list(specs.values()), principal=SystemPrincipal(tenant_id=tenant.id)
    )
    return {name: str(row.id) for name, row in zip(specs, rows, strict=True)}


def ask(principal, **context):
    return retrieve(
        principal=principal,
        request=RetrievalRequest(
            query=QUERY, user_id="dana", intent="find_previous_fix", project_id="atlas", **context
        ),
    )


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ("staging", {"staging", "everywhere"}),
        ("production", {"production", "everywhere"}),
        ("", {"everywhere"}),  # the caller did not say: no tied memory at all
        ("qa", {"everywhere"}),
    ],
)
def test_only_the_active_environment_s_memories_and_untied_ones_are_read(
    deploys, agent_principal, environment, expected
):
    result = ask(agent_principal, environment=environment)
    assert {c.id for c in result.items} == {deploys[name] for name in expected}
    # The others never left the database: they are not even candidates in the trace.
    found = {c["id"] for c in result.trace["candidates"]}
    assert found == {deploys[name] for name in expected}
    assert result.trace["context"]["environment"] == environment


def test_the_python_filter_catches_a_tied_row_the_sql_let_through(
    deploys, agent_principal, monkeypatch
):
    """Defence in depth: with the SQL condition gone, stage 5 still refuses the row."""
    monkeypatch.setattr(candidates, "environment_filter", lambda ctx: ("true", {}))
    result = ask(agent_principal, environment="staging")
    assert deploys["production"] in {c["id"] for c in result.trace["candidates"]}
    assert deploys["production"] not in {c.id for c in result.items}
    assert {"id": deploys["production"], "stage": "hard_filters",
            "reason": "environment_mismatch"} in result.trace["rejections"]  # fmt: skip


def test_a_tied_row_of_another_environment_never_takes_a_slot(tenant, agent_principal):
    """The rows nearest the query are production's; a staging read still fills k slots."""
    dana = SubjectFactory(tenant=tenant, external_id="dana")
    near = [incident(dana, QUERY, "production"), incident(dana, QUERY + " Again?", "production")]
    far = [
        incident(dana, "The billing export timed out at midnight."),
        incident(dana, "A certificate expired on the docs site."),
        incident(dana, "The search index was rebuilt overnight."),
    ]
    memory_store_many(drafts=near + far, principal=SystemPrincipal(tenant_id=tenant.id))
    subject_id, _, policy, _, _ = lookup_subject_and_policy(tenant_id=tenant.id, user_id="dana")
    request = RetrievalRequest(query=QUERY, user_id="dana", project_id="atlas",
                               environment="staging")  # fmt: skip
    ctx = build_context(principal=agent_principal, request=request, subject_id=subject_id)
    k = 2
    plan = RetrievalPlan(
        mode=RetrievalMode.EPISODIC_ONLY,
        intent="",
        semantic_types=("incident",),
        max_candidates=k,
        semantic_limit=k,
    )
    found, _ = fetch_candidates(
        ctx=ctx,
        plan=plan,
        query=QUERY,
        query_vector=get_embedder().embed([QUERY])[0],
        now=timezone.now(),
        policy=policy,
        use_fulltext=False,
    )
    assert len(found) == k
    assert {c.environment for c in found} == {""}
