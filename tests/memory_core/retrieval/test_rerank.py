"""Stage 7: logged components, policy weights, per-type half-life, the relevance gate."""

from datetime import timedelta

import pytest

from memory_core.principals import SystemPrincipal
from memory_core.retrieval.assembly import render_prompt
from memory_core.retrieval.budget import select_within_budget
from memory_core.retrieval.conflicts import resolve_conflicts
from memory_core.retrieval.rerank import entity_patterns, freshness, rerank
from memory_core.retrieval.types import Budget, RetrievalMode
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.factories import SubjectFactory

from .helpers import NOW, cand, ctx, plan, policy

COMPONENTS = {
    "semantic",
    "cosine",
    "fused",
    "task_fit",
    "scope",
    "authority",
    "freshness",
    "confidence",
    "conflict_penalty",
    "redundancy_penalty",
}


def test_components_are_logged_and_weighted_by_the_policy():
    c = cand("c", semantic=0.6)
    ranked, _ = rerank([c], ctx=ctx(), plan=plan(), policy=policy(), now=NOW)
    assert set(ranked[0].components) == COMPONENTS
    w = policy().weights
    comp = ranked[0].components
    expected = sum(
        w[name] * comp[name]
        for name in ("semantic", "task_fit", "scope", "authority", "freshness", "confidence")
    )
    assert ranked[0].score == pytest.approx(expected, abs=1e-5)
    assert ranked[0].reason


def test_freshness_follows_the_half_life_of_the_type():
    half_lives = policy().half_life_days
    old = NOW - timedelta(days=2)
    task = cand("t", memory_type="task_state", updated_at=old)
    pref = cand("p", updated_at=old)
    assert freshness(task, now=NOW, half_life_days=half_lives) == pytest.approx(0.5, abs=0.01)
    assert freshness(pref, now=NOW, half_life_days=half_lives) > 0.99


def test_narrow_scope_and_authority_outrank_a_broad_inference_of_equal_similarity():
    repo = cand("repo", memory_type="repository_rule", scope_kind="repo", scope_ref="atlas-api")
    glob = cand("glob", authority="model_inference", confidence=0.7)
    ranked, _ = rerank([glob, repo], ctx=ctx(), plan=plan(), policy=policy(), now=NOW)
    assert [c.id for c in ranked] == ["repo", "glob"]


def test_relevance_gate_drops_off_topic_rows_but_keeps_bound_and_keyword_ones():
    rows = [
        cand("on_topic", semantic=0.55),
        cand("off_topic", semantic=0.05),
        cand("far_below_best", semantic=0.22),
        cand("keyword", semantic=0.15, sources={"fulltext"}),
        cand(
            "repo_rule",
            semantic=0.0,
            memory_type="repository_rule",
            scope_kind="repo",
            scope_ref="atlas-api",
        ),
        cand("task", semantic=0.0, memory_type="task_state", task_id="t-1"),
    ]
    ranked, rejected = rerank(rows, ctx=ctx(task_id="t-1"), plan=plan(), policy=policy(), now=NOW)
    assert {c.id for c in ranked} == {"on_topic", "keyword", "repo_rule", "task"}
    assert {r.memory_id: r.reason for r in rejected} == {
        "off_topic": "below_relevance_floor",
        "far_below_best": "below_relevance_floor",
    }


def test_rivals_on_one_key_pass_the_gate_together():
    a = cand("a", memory_key="deploy.region", semantic=0.7, content_hash="x")
    b = cand("b", memory_key="deploy.region", semantic=0.1, content_hash="y")
    ranked, rejected = rerank([a, b], ctx=ctx(), plan=plan(), policy=policy(), now=NOW)
    assert {c.id for c in ranked} == {"a", "b"} and not rejected
    assert all(c.components["conflict_penalty"] > 0 for c in ranked)


def test_degraded_mode_keeps_structured_rows_without_a_query_vector():
    rows = [cand("s", semantic=None), cand("v", semantic=None, sources={"vector"})]
    ranked, _ = rerank(rows, ctx=ctx(), plan=plan(), policy=policy(), now=NOW, degraded=True)
    assert [c.id for c in ranked] == ["s"]


def test_redundancy_penalty_lowers_a_near_copy_of_a_better_item():
    a = cand("a", semantic=0.8, embedding=(1.0, 0.0))
    b = cand("b", semantic=0.79, embedding=(0.99, 0.1))
    ranked, _ = rerank([a, b], ctx=ctx(), plan=plan(), policy=policy(), now=NOW)
    assert ranked[1].components["redundancy_penalty"] > 0


@pytest.mark.parametrize("start", [1.0, 0.999999, 0.95, -1.0])
def test_the_redundancy_penalty_of_an_exact_copy_is_at_most_its_weight(start):
    """A policy's redundancy_cosine may be 1 (policy_check allows -1 to 1); float32 made the
    cosine of two rows of the same text 1.0000001, and rerank divided by zero (a 500 on every
    retrieval reaching both) or gave a penalty far above its weight just below 1."""
    vector = (0.303, 0.577, -0.812)  # normalised in float32, its cosine to itself is > 1
    a = cand("a", semantic=0.8, embedding=vector)
    b = cand("b", semantic=0.79, embedding=vector)
    ranked, _ = rerank(
        [a, b], ctx=ctx(), plan=plan(), policy=policy(redundancy_cosine=start), now=NOW
    )
    weight = policy().weights["redundancy_penalty"]
    penalty = ranked[1].components["redundancy_penalty"]
    assert 0 <= penalty <= weight
    assert penalty == (0 if start == 1.0 else pytest.approx(weight))


def test_a_conflict_winner_carries_no_redundancy_penalty_for_the_rival_it_beat():
    """Stop 60's audit of retrieval found that a key's winner kept a redundancy penalty for
    the rival it beat: the user's "Deploy region is eu-west-1" and a tool's "eu-west-2" on
    ``deploy.region`` are near copies (cosine 0.99); the tool's row ranked first, so the
    user's was penalized (~0.12) for being close to it, stage 8 then dropped the tool's row
    (``authority_class``), and with one slot left an unrelated item scored 0.05 below the
    winner's own score was given instead of the key's fact. Rows of one memory_key are rivals,
    not copies (the budget stage already said so), and are no longer penalized as such."""
    user = cand(
        "user", memory_key="deploy.region", semantic=0.55, embedding=(1.0, 0.0),
        updated_at=NOW - timedelta(days=200),
    )  # fmt: skip
    tool = cand(
        "tool", memory_key="deploy.region", semantic=0.6, embedding=(0.99, 0.141),
        authority="tool_observation", scope_kind="project", scope_ref="atlas",
    )  # fmt: skip
    ranked, _ = rerank([user, tool], ctx=ctx(), plan=plan(), policy=policy(), now=NOW)
    assert [c.id for c in ranked] == ["tool", "user"]
    kept, outcomes, _, _ = resolve_conflicts(ranked, policy=policy())
    assert outcomes[0].winner_id == "user" and kept == [user]
    assert user.components["redundancy_penalty"] == 0.0
    unpenalized = user.score + user.components["redundancy_penalty"]
    other = cand("other", memory_type="incident", score=round(unpenalized - 0.05, 6))
    selected, _, _ = select_within_budget(
        [user, other],
        budget=Budget(max_items=1, max_tokens=10_000, max_items_per_type=1),
        policy=policy(),
        count_tokens=len,
        render=render_prompt,
    )
    assert selected == [user]


def test_an_inference_ages_faster_than_its_type_until_confirmed():
    # The seed: model inference "should decay quickly unless confirmed". A preference keeps a
    # year's half-life when the user said it; inferred, 14 days (inferred_half_life_days).
    old = NOW - timedelta(days=14)
    said = cand("said", updated_at=old)
    inferred = cand("inferred", authority="model_inference", confidence=0.7, updated_at=old)
    ranked, _ = rerank([said, inferred], ctx=ctx(), plan=plan(), policy=policy(), now=NOW)
    fresh = {c.id: c.components["freshness"] for c in ranked}
    assert fresh["said"] > 0.97 and fresh["inferred"] == pytest.approx(0.5, abs=0.01)
    slower = policy(inferred_half_life_days=28)
    ranked, _ = rerank([inferred], ctx=ctx(), plan=plan(), policy=slower, now=NOW)
    assert ranked[0].components["freshness"] == pytest.approx(0.71, abs=0.01)


def test_a_memory_naming_an_entity_of_the_request_fits_the_task_better():
    incident = {"memory_type": "incident", "semantic": 0.5}
    named = cand("named", content="The network state cache broke the iOS build.", **incident)
    other = cand("other", content="The Android build broke after an upgrade.", **incident)
    about = plan(entities=("ios", "network-state"))
    ranked, _ = rerank([other, named], ctx=ctx(), plan=about, policy=policy(), now=NOW)
    assert [c.id for c in ranked] == ["named", "other"]
    assert ranked[0].components["task_fit"] == 0.8 and ranked[1].components["task_fit"] == 0.5
    assert ranked[0].reason.startswith("names what the request is about")
    ranked, _ = rerank([other, named], ctx=ctx(), plan=plan(), policy=policy(), now=NOW)
    assert {c.components["task_fit"] for c in ranked} == {0.5}  # no entities, no preference


def test_an_entity_made_of_separators_only_names_nothing():
    """A quoted "--" or ". ." left an empty alternative in the pattern, which matched any text:
    every memory got the entity fit and the reason "names what the request is about"."""
    assert entity_patterns(plan(entities=("--", ". .", " / "))) is None
    pattern = entity_patterns(plan(entities=("--", "network-state")))
    assert pattern.search("Dana prefers TypeScript.") is None
    assert pattern.search("The network state cache broke.")
    other = cand("other", content="The Android build broke.", memory_type="incident")
    ranked, _ = rerank([other], ctx=ctx(), plan=plan(entities=("--",)), policy=policy(), now=NOW)
    assert ranked[0].components["task_fit"] == 0.5
    assert "names what the request is about" not in ranked[0].reason


def test_an_entity_is_not_named_across_the_seam_of_content_and_key():
    """Stop 61's audit of retrieval: content ending "before a release" and a key starting
    "notes." name no "release-notes", though the fields were searched joined by a line break,
    which an entity's parts may be apart by; each field names it on its own still."""
    about = plan(entities=("release-notes",))
    seam = cand("seam", content="Run the tests before a release", memory_key="notes.style")
    in_key = cand("key", content="Keep them short", memory_key="release_notes.style")
    ranked, _ = rerank([seam, in_key], ctx=ctx(), plan=about, policy=policy(), now=NOW)
    fits = {c.id: c.components["task_fit"] for c in ranked}
    assert fits == {"seam": 0.7, "key": 0.8}  # a preference: the structured fit
    assert "names what the request is about" not in ranked[1].reason


def test_a_structured_lookup_is_held_to_the_margin_below_its_best_row_only():
    """The rows a structured-only plan asked for by type passed the gate only above the
    absolute floor, though its query names what to load, not what they say (stop 56's audit
    of retrieval). They are still held to the margin below the best row, so a lookup whose
    query does say what it is about keeps to that; a hybrid plan keeps the whole gate."""
    rows = [
        cand("best", semantic=0.3),
        cand("worded_apart", semantic=0.06),
        cand("far_below_best", semantic=0.04),
        cand("incident", semantic=0.06, memory_type="incident"),
    ]
    lookup = plan(
        mode=RetrievalMode.STRUCTURED_ONLY,
        intent="load_preferences",
        structured_types=("user_preference",),
        semantic_types=(),
    )
    ranked, rejected = rerank(rows, ctx=ctx(), plan=lookup, policy=policy(), now=NOW)
    assert {c.id for c in ranked} == {"best", "worded_apart"}
    assert {r.memory_id for r in rejected} == {"far_below_best", "incident"}
    ranked, _ = rerank(rows, ctx=ctx(), plan=plan(), policy=policy(), now=NOW)
    assert [c.id for c in ranked] == ["best"]


def store(tenant, subject, contents, memory_type, **kw):
    drafts = [
        MemoryDraft(
            subject=subject,
            memory_type=memory_type,
            content=content,
            authority="explicit_user",
            source_type="user_input",
            **kw,
        )
        for content in contents
    ]
    return memory_store_many(drafts=drafts, principal=SystemPrincipal(tenant_id=tenant.id))


def retrieve_ids(api_client, body) -> set[str]:
    response = api_client.post("/api/v1/retrieve", body, format="json")
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["mode"] == "structured_only"
    return {item["id"] for item in data["items"]}


def test_apply_project_rules_returns_the_projects_rules(api_client, tenant):
    """``apply_project_rules`` in project atlas, asked as "Apply the project rules", was given
    none of atlas's four explicit project constraints: the structured store found them all,
    and stage 7 dropped each as ``below_relevance_floor``, since the query is worded like
    none of them and a project scope is not bound by structure (stop 56's audit of
    retrieval). It gets them up to the budget's per-type quota (3 by default)."""
    me = SubjectFactory(tenant=tenant, external_id="dana")
    rules = [
        "All atlas code must be reviewed by two people before merge.",
        "The atlas backend is written in Kotlin.",
        "Never deploy atlas on Fridays.",
        "Atlas uses Postgres 16 only.",
    ]
    stored = store(tenant, me, rules, "project_constraint", scope_kind="project", scope_ref="atlas")
    given = retrieve_ids(
        api_client,
        {
            "query": "Apply the project rules",
            "intent": "apply_project_rules",
            "context": {"user_id": "dana", "project_id": "atlas"},
        },
    )
    assert len(given) == 3 and given <= {str(rule.id) for rule in stored}


def test_load_profile_returns_the_users_preferences(api_client, tenant):
    """``load_profile`` asked as "Load the user profile" was given none of the user's six
    explicit preferences: stage 7 dropped each as ``below_relevance_floor``, since the query
    is worded like no one preference, and a structured lookup by type answered nothing (stop
    56's audit of retrieval). It gets them up to the budget's per-type quota (3 by default)."""
    me = SubjectFactory(tenant=tenant, external_id="dana")
    preferences = [
        "Dana prefers dark mode in every editor.",
        "Reply in British English.",
        "Keep answers under 100 words.",
        "Dana is vegetarian.",
        "Use metric units.",
        "Dana's preferred name is Dee.",
    ]
    stored = store(tenant, me, preferences, "user_preference")
    given = retrieve_ids(
        api_client,
        {
            "query": "Load the user profile",
            "intent": "load_profile",
            "context": {"user_id": "dana"},
        },
    )
    assert len(given) == 3 and given <= {str(p.id) for p in stored}
