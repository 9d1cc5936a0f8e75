"""Stop 37's review of the read path: each test failed before its fix.

High impact read a key's first segment at . _ and - only, though a key is free text.
"""

from dataclasses import replace

import pytest

from memory_core.principals import SystemPrincipal
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.policy import is_high_impact
from memory_core.retrieval.types import RetrievalRequest
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.factories import SubjectFactory

from .helpers import policy

REQUEST = RetrievalRequest(
    query="What cache size does Lunest use?",
    user_id="dana",
    intent="apply_project_rules",
    project_id="lunest",
)
INFERRED = {"authority": "model_inference", "source_type": "model_inference", "confidence": 0.7}


def lunest(subject, content, memory_type="previous_decision", **kw):
    """A draft of ``project:lunest`` in the user's own words, unless ``kw`` says otherwise."""
    kw.setdefault("authority", "explicit_user")
    kw.setdefault("source_type", "user_input")
    kw.setdefault("scope_kind", "project")
    kw.setdefault("scope_ref", "lunest")
    return MemoryDraft(subject=subject, memory_type=memory_type, content=content, **kw)


def store(tenant, drafts):
    return memory_store_many(drafts=drafts, principal=SystemPrincipal(tenant_id=tenant.id))


@pytest.mark.parametrize(
    "key",
    ["deploy.region", "deploy/region", "deploy:region", "deploy region", "/deploy/region",
     "Billing/plan", "prod:db", "security@team", "release+2.4"],
)  # fmt: skip
def test_a_key_s_first_segment_ends_at_any_character_not_a_letter_or_digit(key):
    assert is_high_impact(policy(), memory_key=key, memory_types={"previous_decision"})


@pytest.mark.parametrize("key", ["deployment_notes", "redeploy/region", "deployed.at", "", "/"])
def test_a_segment_is_a_whole_word_not_a_prefix(key):
    only_deploy = policy(high_impact_key_prefixes=["deploy"])
    assert not is_high_impact(only_deploy, memory_key=key, memory_types={"previous_decision"})


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["deploy.region", "deploy/region", "deploy region"])
def test_a_conflict_on_a_free_text_deploy_key_is_a_clarification(tenant, agent_principal, key):
    dana = SubjectFactory(tenant=tenant, external_id="dana")
    store(
        tenant,
        [
            lunest(dana, f"Deploy the Lunest API to {region}.", memory_key=key, **INFERRED)
            for region in ("eu-west-1", "us-east-1")
        ],
    )
    result = retrieve(
        principal=agent_principal,
        request=replace(REQUEST, query="Where do we deploy the Lunest API?"),
    )
    assert [c.memory_key for c in result.clarifications] == [key]
    assert [c for c in result.items if c.memory_key == key] == []
