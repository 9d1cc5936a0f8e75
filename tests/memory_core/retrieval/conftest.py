"""Fixtures for the read path: a tenant's memories stored with the real model, in one batch."""

import pytest

from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.factories import AgentFactory, SubjectFactory


def draft(subject, content, memory_type="user_preference", **kw):
    kw.setdefault("authority", "explicit_user")
    kw.setdefault("source_type", "user_input")
    return MemoryDraft(subject=subject, memory_type=memory_type, content=content, **kw)


def atlas_rule(subject, content, **kw):
    """A project constraint of ``project:atlas``, in the user's own words."""
    return draft(
        subject, content, "project_constraint", scope_kind="project", scope_ref="atlas", **kw
    )


@pytest.fixture
def world(tenant, other_tenant, agent):
    """Two tenants, subjects with the same external id, scoped and agent-bound memories."""
    me = SubjectFactory(tenant=tenant, external_id="dana")
    colleague = SubjectFactory(tenant=tenant, external_id="eli")
    twin = SubjectFactory(tenant=other_tenant, external_id="dana")
    other_agent = AgentFactory(tenant=tenant, name="support")
    specs = {
        "mine_repo": draft(
            me,
            "In atlas-api every endpoint needs an OpenAPI entry.",
            "repository_rule",
            scope_kind="repo",
            scope_ref="atlas-api",
        ),
        "mine_incident": draft(
            me,
            "The atlas-api staging deploy failed: DATABASE_URL secret missing.",
            "incident",
            scope_kind="project",
            scope_ref="atlas",
            authority="tool_observation",
            source_type="verified_tool_output",
            source_tool="ci",
        ),
        "mine_pref": draft(me, "Dana prefers TypeScript for frontend code."),
        "other_repo": draft(
            me,
            "In atlas-web every endpoint needs an OpenAPI entry.",
            "repository_rule",
            scope_kind="repo",
            scope_ref="atlas-web",
        ),
        "other_agent": draft(
            me,
            "The atlas-api staging deploy failed: DATABASE_URL secret missing!",
            "incident",
            scope_kind="project",
            scope_ref="atlas",
            agent_id=other_agent.id,
            authority="tool_observation",
            source_type="verified_tool_output",
            source_tool="ci",
        ),
        "colleague": draft(
            colleague,
            "The atlas-api staging deploy failed: DATABASE_URL missing.",
            "incident",
            scope_kind="project",
            scope_ref="atlas",
            authority="tool_observation",
            source_type="verified_tool_output",
            source_tool="ci",
        ),
        "twin": draft(
            twin,
            "The atlas-api staging deploy failed: the DATABASE_URL secret is gone.",
            "incident",
            scope_kind="project",
            scope_ref="atlas",
            authority="tool_observation",
            source_type="verified_tool_output",
            source_tool="ci",
        ),
    }
    rows = memory_store_many(
        drafts=list(specs.values()), principal=SystemPrincipal(tenant_id=tenant.id)
    )
    memories = dict(zip(specs, rows, strict=True))
    return {
        "subject": me,
        "twin": twin,
        "memories": memories,
        "principal": AgentPrincipal.from_agent(agent),
        "other_agent": other_agent,
    }
