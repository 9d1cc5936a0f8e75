"""Stages 2 and 3: the intent gate and the plan."""

import pytest

from memory_core.retrieval.intent import choose_mode
from memory_core.retrieval.plan import build_plan
from memory_core.retrieval.types import RetrievalMode

from .helpers import ctx, policy


@pytest.mark.parametrize(
    ("intent", "complete", "mode"),
    [
        ("transform", True, RetrievalMode.NONE),
        ("summarize", True, RetrievalMode.NONE),
        ("calculate", True, RetrievalMode.NONE),
        ("", True, RetrievalMode.NONE),  # the request carries all its context
        ("transform", False, RetrievalMode.HYBRID),  # not self-contained: may need memory
        ("load_preferences", False, RetrievalMode.STRUCTURED_ONLY),
        ("resume_task", True, RetrievalMode.STRUCTURED_ONLY),
        ("apply_project_rules", False, RetrievalMode.STRUCTURED_ONLY),
        ("find_previous_fix", False, RetrievalMode.EPISODIC_ONLY),
        ("reuse_experience", False, RetrievalMode.EPISODIC_ONLY),
        ("Find-Previous-Fix", False, RetrievalMode.EPISODIC_ONLY),
        ("something_else", False, RetrievalMode.HYBRID),
        (None, False, RetrievalMode.HYBRID),
    ],
)
def test_intent_gate(intent, complete, mode):
    assert choose_mode(intent, complete)[0] == mode


def test_plans_name_their_stores_and_types():
    c = ctx(session_id="s-1", task_id="t-1")
    none = build_plan(
        mode=RetrievalMode.NONE, intent="transform", ctx=c, policy=policy(), query="x"
    )
    assert none.stores == []
    prefs = build_plan(
        mode=RetrievalMode.STRUCTURED_ONLY,
        intent="load_preferences",
        ctx=c,
        policy=policy(),
        query="q",
    )
    assert prefs.stores == ["structured"] and prefs.structured_types == ("user_preference",)
    resume = build_plan(
        mode=RetrievalMode.STRUCTURED_ONLY, intent="resume_task", ctx=c, policy=policy(), query="q"
    )
    assert resume.stores == ["structured", "task_state"]
    episodic = build_plan(
        mode=RetrievalMode.EPISODIC_ONLY,
        intent="find_previous_fix",
        ctx=c,
        policy=policy(),
        query="q",
    )
    assert (
        episodic.stores == ["vector", "fulltext"] and "user_preference" in episodic.excluded_types
    )
    hybrid = build_plan(mode=RetrievalMode.HYBRID, intent="", ctx=c, policy=policy(), query="q")
    assert hybrid.stores == ["structured", "task_state", "vector", "fulltext"]
    assert hybrid.preferred_scopes[:3] == ("task:t-1", "repo:atlas-api", "project:atlas")


def test_agent_read_grant_narrows_the_plan():
    c = ctx(read_types=("user_preference",))
    hybrid = build_plan(mode=RetrievalMode.HYBRID, intent="", ctx=c, policy=policy(), query="q")
    assert hybrid.structured_types == ("user_preference",)
    assert hybrid.semantic_types == ("user_preference",)


@pytest.mark.parametrize(
    ("query", "entities"),
    [
        # The seed's own example: "entities": ["iOS", "network state"].
        (
            "Continue the iOS network-state implementation and keep the project conventions.",
            ("ios", "network-state"),
        ),
        (
            "Deploy the API to eu-west-1 from atlas-api, see deploy.region",
            ("api", "eu-west-1", "atlas-api", "deploy.region"),
        ),
        ('Set "dark mode" for the `settings page`', ("dark mode", "settings page")),
        # A quoted run of separators names nothing (its pattern matched every memory).
        ('Why did the "--" step fail? See ". ." and " / "', ()),
        ('Drop the "--verbose" flag', ("--verbose",)),
        # People's names are not entities: in a conversation they are in most memories.
        ("What did Ana adopt last May?", ()),
        ("What does the user prefer?", ()),
    ],
)
def test_the_plan_names_the_entities_of_the_request(query, entities):
    from memory_core.retrieval.plan import extract_entities

    assert extract_entities(query) == entities
    hybrid = build_plan(mode=RetrievalMode.HYBRID, intent="", ctx=ctx(), policy=policy(),
                        query=query)  # fmt: skip
    assert hybrid.entities == entities and hybrid.as_trace()["entities"] == len(entities)


def test_common_words_of_a_query_in_capitals_are_not_entities():
    """Stop 60's audit of retrieval found that every word of "WHAT IS THE DEPLOY REGION?" was
    an entity (a capital after the first letter made a word identifier-shaped), so a memory
    saying "the" or "is" got the entity fit (0.8) and the reason "names what the request is
    about". Words in capitals among words in capitals (a query mostly in capitals, or a run
    of three) are not read as identifiers by their case; digits and separators still count,
    and an acronym among lower-case words is still one."""
    from memory_core.retrieval.plan import extract_entities
    from memory_core.retrieval.rerank import ENTITY_FIT, explain, rerank

    from .helpers import NOW, cand

    query = "WHAT IS THE DEPLOY REGION?"
    assert extract_entities(query) == ()
    assert extract_entities("WHICH REGION IS atlas-api IN, EU-WEST-1?") == (
        "atlas-api",
        "eu-west-1",
    )
    assert extract_entities("Deploy with the AWS API of the new script, NOT THE OLD ONE") == (
        "aws",
        "api",
    )
    plan_ = build_plan(
        mode=RetrievalMode.HYBRID, intent="", ctx=ctx(), policy=policy(), query=query
    )
    unrelated = cand("blue", content="The user likes the color blue.", semantic=0.3)
    ranked, _ = rerank([unrelated], ctx=ctx(), plan=plan_, policy=policy(), now=NOW)
    assert ranked[0].components["task_fit"] != ENTITY_FIT, explain(ranked[0], ctx=ctx())


@pytest.mark.parametrize("query", ["I use AWS", "Can I use AWS KMS"])
def test_the_pronoun_i_does_not_make_an_acronym_shouted(query):
    """Stop 60's review found that the pronoun "I" was counted as a word in capitals, so "I use
    AWS" was mostly in capitals (two of three words), the query counted as shouted and AWS was
    no entity, while "We use AWS" gave ("aws",). One-letter words neither count nor break a
    run, and an acronym among lower-case words stays an entity whoever says it."""
    from memory_core.retrieval.plan import extract_entities

    assert "aws" in extract_entities(query), extract_entities(query)
    assert extract_entities("please tell me WHAT DO I DO with the AWS") == ("aws",)
