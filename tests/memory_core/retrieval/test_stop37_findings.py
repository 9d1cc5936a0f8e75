"""Stop 37's review of the read path: each test failed before its fix.

- High impact read a key's first segment at . _ and - only, though a key is free text.
- Dedup folded a row tied to the request's environment into an untied copy of its text, and
  the environment's own fact lost its key's conflict.
- Dedup folded rows of different types with the same words: a project constraint lost its
  key's clarification, a repository rule its place in the package.
- The budget dropped one of two rows a reviewer kept (``keep_both_scoped``) as a near copy of
  the other, though the next retrieval "returns both".
- The structured store took its 40 rows by distance alone, so a rule of the request's
  repository was no candidate at all beside 40 closer rows of the project.
"""

from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from memory_core.embeddings import get_embedder
from memory_core.principals import SystemPrincipal
from memory_core.retrieval.assembly import render_prompt
from memory_core.retrieval.budget import select_within_budget
from memory_core.retrieval.dedup import deduplicate
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.plan import build_plan
from memory_core.retrieval.policy import is_high_impact
from memory_core.retrieval.types import Budget, RetrievalMode, RetrievalRequest
from memory_core.services.conflicts import conflict_resolve
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.factories import SubjectFactory

from .helpers import cand, ctx, policy

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


def cache_sizes(subject):
    """Staging's own fact (the oldest), an untied copy of its text, and a newer untied one."""
    now = timezone.now()
    key = {"memory_key": "lunest.cache_size"}
    return [
        lunest(subject, "Lunest cache size is 512 MB.", environment="staging",
               created_at=now - timedelta(days=10), **key),
        lunest(subject, "Lunest cache size is 512 MB.", created_at=now - timedelta(days=5), **key),
        lunest(subject, "Lunest cache size is 2 GB.", created_at=now - timedelta(days=1), **key),
    ]  # fmt: skip


def test_equal_content_tied_to_another_environment_is_another_fact():
    staging = cand("staging", content_hash="same", environment="staging", confidence=0.8)
    everywhere = cand("everywhere", content_hash="same", confidence=1.0)
    kept, merges = deduplicate([staging, everywhere], policy=policy())
    assert sorted(c.id for c in kept) == ["everywhere", "staging"] and merges == []
    # By similarity too: a near copy tied to staging stays beside the untied row.
    staging = cand("staging", embedding=(0.99, 0.05), environment="staging", confidence=0.8)
    everywhere = cand("everywhere", embedding=(1.0, 0.0), confidence=1.0)
    kept, merges = deduplicate([staging, everywhere], policy=policy())
    assert sorted(c.id for c in kept) == ["everywhere", "staging"] and merges == []


@pytest.mark.django_db
def test_staging_s_own_fact_wins_beside_an_untied_copy_of_its_text(tenant, agent_principal):
    dana = SubjectFactory(tenant=tenant, external_id="dana")
    staging, copy, newer = store(tenant, cache_sizes(dana))
    result = retrieve(principal=agent_principal, request=replace(REQUEST, environment="staging"))
    assert [c.id for c in result.items if c.memory_key == "lunest.cache_size"] == [str(staging.id)]
    [outcome] = result.trace["conflicts"]
    assert (outcome["winner_id"], outcome["rule"]) == (str(staging.id), "environment_specific")
    # Without an environment the staging row is not eligible, and the copy and the newer
    # row are decided as before: the newer wins.
    result = retrieve(principal=agent_principal, request=REQUEST)
    assert [c.id for c in result.items if c.memory_key == "lunest.cache_size"] == [str(newer.id)]


@pytest.mark.django_db
def test_the_api_gives_staging_its_own_fact(api_client, tenant):
    dana = SubjectFactory(tenant=tenant, external_id="dana")
    staging, _, _ = store(tenant, cache_sizes(dana))
    body = {
        "query": "What cache size does Lunest use?",
        "intent": "apply_project_rules",
        "context": {"user_id": "dana", "project_id": "lunest", "environment": "staging"},
    }
    response = api_client.post("/api/v1/retrieve", body, format="json")
    assert response.status_code == 200
    items = [i for i in response.json()["items"] if i["memory_key"] == "lunest.cache_size"]
    assert [(i["id"], i["content"]) for i in items] == [
        (str(staging.id), "Lunest cache size is 512 MB.")
    ]


def test_equal_content_of_another_type_is_another_fact():
    rule = cand("rule", memory_type="project_constraint", content_hash="same", confidence=0.6)
    decision = cand("decision", memory_type="previous_decision", content_hash="same")
    kept, merges = deduplicate([rule, decision], policy=policy())
    assert sorted(c.id for c in kept) == ["decision", "rule"] and merges == []


@pytest.mark.django_db
def test_a_constraint_with_a_decision_s_words_keeps_its_key_s_clarification(
    tenant, agent_principal
):
    dana = SubjectFactory(tenant=tenant, external_id="dana")
    now = timezone.now()
    key = {"memory_key": "lunest.cache", **INFERRED}
    store(
        tenant,
        [
            lunest(dana, "Use Redis for the Lunest cache.", "project_constraint",
                   created_at=now - timedelta(days=3), **key),
            lunest(dana, "Use Redis for the Lunest cache.", created_at=now - timedelta(days=1),
                   **key),
            lunest(dana, "Use Memcached for the Lunest cache.", created_at=now - timedelta(days=2),
                   **key),
        ],
    )  # fmt: skip
    result = retrieve(principal=agent_principal, request=REQUEST)
    # A project constraint is in the group (high impact) and no rule decides among
    # inferences: the user is asked, no row is handed out as settled.
    assert result.trace["dedup_merges"] == []
    assert [c.memory_key for c in result.clarifications] == ["lunest.cache"]
    assert [c for c in result.items if c.memory_key == "lunest.cache"] == []


@pytest.mark.django_db
def test_a_repository_rule_with_a_preference_s_words_is_still_the_repository_s_rule(
    tenant, agent_principal
):
    dana = SubjectFactory(tenant=tenant, external_id="dana")
    now = timezone.now()
    text = "Every atlas-api change needs a changelog entry."
    repo = {"scope_kind": "repo", "scope_ref": "atlas-api"}
    rule, _, _ = store(
        tenant,
        [
            lunest(dana, text, "repository_rule", created_at=now - timedelta(days=10), **repo),
            lunest(dana, "Adding the health check endpoint to atlas-api returned HTTP 500 errors.",
                   "incident", authority="tool_observation", source_type="verified_tool_output",
                   source_tool="ci", created_at=now - timedelta(days=2), **repo),
            lunest(dana, text, "user_preference", created_at=now - timedelta(days=1), **repo),
        ],
    )  # fmt: skip
    request = RetrievalRequest(
        query="Add a health check endpoint.", user_id="dana", project_id="atlas",
        repository_id="atlas-api",
    )  # fmt: skip
    result = retrieve(principal=agent_principal, request=request)
    # The rule binds every action in its repository, whatever the wording (stage 7).
    [selected] = [c for c in result.items if c.id == str(rule.id)]
    assert (selected.memory_type, selected.components["task_fit"]) == ("repository_rule", 1.0)


def test_rows_of_one_key_are_not_each_other_s_copies_in_the_budget():
    rows = [
        cand("a", memory_key="deploy.region", score=0.9, embedding=(1.0, 0.0)),
        cand("b", memory_key="deploy.region", score=0.8, embedding=(0.999, 0.01)),
        cand("copy", score=0.7, embedding=(0.999, 0.02)),  # unkeyed: still a copy of a
        cand("other", memory_key="deploy.zone", score=0.6, embedding=(0.998, 0.03)),
    ]
    selected, rejected, _ = select_within_budget(
        rows,
        budget=Budget(max_items=5, max_tokens=5000, max_items_per_type=5),
        policy=policy(),
        count_tokens=get_embedder().count_tokens,
        render=lambda items: render_prompt(items, []),
    )
    assert [c.id for c in selected] == ["a", "b"]
    assert {(r.memory_id, r.reason) for r in rejected} == {
        ("copy", "redundant_with_selected"),
        ("other", "redundant_with_selected"),
    }


@pytest.mark.django_db
def test_keep_both_scoped_returns_both_near_copies(tenant, agent_principal, reviewer):
    dana = SubjectFactory(tenant=tenant, external_id="dana")
    texts = [f"Deploy the Lunest API to {region} first." for region in ("eu-west-1", "eu-west-2")]
    first_vector, second_vector = (np.asarray(v) for v in get_embedder().embed(texts))
    assert float(first_vector @ second_vector) >= policy()["diversity_cosine"]  # near copies
    rows = store(
        tenant, [lunest(dana, text, memory_key="deploy.region", **INFERRED) for text in texts]
    )
    request = replace(REQUEST, query="Which region do we deploy the Lunest API to first?")
    [clarification] = retrieve(principal=agent_principal, request=request).clarifications
    conflict_resolve(
        principal=reviewer,
        item_id=clarification.review_item_id,
        outcome="keep_both_scoped",
        reason="Both regions are deployed to.",
    )
    after = retrieve(principal=agent_principal, request=request)
    assert after.clarifications == []
    assert sorted(c.id for c in after.items) == sorted(str(m.id) for m in rows)
    assert [r for r in after.trace["rejections"] if r["stage"] == "budget"] == []


def test_the_plan_names_the_rows_bound_to_the_request_s_repo_and_task():
    for mode in (RetrievalMode.STRUCTURED_ONLY, RetrievalMode.HYBRID):
        plan = build_plan(mode=mode, intent="", ctx=ctx(task_id="t-1"), policy=policy(), query="q")
        assert plan.bound_types == ("project_constraint", "repository_rule")
        assert plan.bound_kinds == ("task", "repo")
    # No repo or task in the request, or no such type planned: nothing is bound.
    plan = build_plan(
        mode=RetrievalMode.HYBRID, intent="", ctx=ctx(repository_id=""), policy=policy(), query="q"
    )
    assert (plan.bound_types, plan.bound_kinds) == ((), ())
    plan = build_plan(
        mode=RetrievalMode.STRUCTURED_ONLY, intent="load_preferences", ctx=ctx(), policy=policy(),
        query="q",
    )  # fmt: skip
    assert (plan.bound_types, plan.bound_kinds) == ((), ())


ATLAS_API = RetrievalRequest(
    query="Add a health check endpoint.", user_id="dana", project_id="atlas",
    repository_id="atlas-api",
)  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("intent", "filler_type"),
    [("apply_repository_rules", "previous_decision"), ("", "project_constraint")],
    ids=["structured only", "hybrid"],
)
def test_a_repository_rule_is_a_candidate_beside_many_closer_project_rows(
    tenant, agent_principal, intent, filler_type
):
    dana = SubjectFactory(tenant=tenant, external_id="dana")
    repo = {"scope_kind": "repo", "scope_ref": "atlas-api"}
    atlas = {"scope_kind": "project", "scope_ref": "atlas"}
    rule, *_ = store(
        tenant,
        [
            lunest(dana, "Every atlas-api change needs a changelog entry.", "repository_rule",
                   **repo),
            *[
                lunest(dana, f"Adding health check endpoint number {n} to atlas failed.",
                       filler_type, **atlas)
                for n in range(45)  # more than max_candidates (40), all closer to the query
            ],
        ],
    )  # fmt: skip
    result = retrieve(principal=agent_principal, request=replace(ATLAS_API, intent=intent))
    [candidate] = [c for c in result.trace["candidates"] if c["id"] == str(rule.id)]
    assert "structured" in candidate["sources"]
    [selected] = [c for c in result.items if c.id == str(rule.id)]
    assert selected.components["task_fit"] == 1.0
