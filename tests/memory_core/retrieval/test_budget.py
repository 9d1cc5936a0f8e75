"""Stage 9: max items, real token counts, per-type quotas, diversity; greedy prefixes."""

import uuid

from memory_core.embeddings import get_embedder
from memory_core.retrieval.assembly import (
    MARKUP_LINES,
    render_item,
    render_item_parts,
    render_prompt,
)
from memory_core.retrieval.budget import select_within_budget
from memory_core.retrieval.types import Budget, Clarification

from .helpers import cand, policy


def select(rows, budget, *, additive=False, clarifications=()):
    return select_within_budget(
        rows,
        budget=budget,
        policy=policy(),
        count_tokens=get_embedder().count_tokens,
        render=lambda items: render_prompt(items, list(clarifications)),
        additive=additive,
    )


def ranked_rows():
    return [
        cand(f"p{i}", score=1 - i / 10, content=f"Preference number {i} about answers.")
        for i in range(5)
    ] + [cand("inc", memory_type="incident", score=0.05, content="An incident.")]


def test_per_type_quota_and_max_items():
    selected, rejected, _ = select(
        ranked_rows(), Budget(max_items=4, max_tokens=5000, max_items_per_type=2)
    )
    assert [c.id for c in selected] == ["p0", "p1", "inc"]
    reasons = {r.memory_id: r.reason for r in rejected}
    assert reasons["p2"] == "type_quota_full"


def test_tokens_are_counted_with_the_model_tokenizer_and_never_exceeded():
    budget = Budget(max_items=10, max_tokens=120, max_items_per_type=10)
    selected, rejected, tokens = select(ranked_rows(), budget)
    assert tokens == get_embedder().count_tokens(render_prompt(selected)) <= 120
    assert any(r.reason == "over_token_budget" for r in rejected)


def test_a_near_copy_of_a_selected_item_is_skipped_for_diversity():
    rows = [
        cand("a", score=0.9, embedding=(1.0, 0.0)),
        cand("b", score=0.8, embedding=(0.999, 0.01)),
        cand("c", score=0.7, embedding=(0.0, 1.0)),
    ]
    selected, rejected, _ = select(rows, Budget(max_items=5, max_tokens=5000, max_items_per_type=5))
    assert [c.id for c in selected] == ["a", "c"]
    assert rejected[0].reason == "redundant_with_selected"


def test_smaller_budget_selects_a_prefix_of_a_larger_one():
    big, _, _ = select(ranked_rows(), Budget(max_items=5, max_tokens=5000, max_items_per_type=5))
    small, _, _ = select(ranked_rows(), Budget(max_items=2, max_tokens=5000, max_items_per_type=5))
    assert [c.id for c in small] == [c.id for c in big][:2]


def test_the_model_s_counts_add_up_so_the_running_sum_is_the_package_s_count():
    assert get_embedder().additive_token_counts
    types = ["user_preference", "incident", "episode", "project_constraint", "task_state"]
    texts = [
        "Prefers tabs; hates 'smart' quotes & <b>markup</b>.",
        "Outage at 03:00 UTC — café wifi, naïve retry loop (see #4512).",
        "Deploys from main-branch via `make release`; 10x faster than CI/CD.",
        "東京 office, Zoë's team: standup at 9:30.",
        "    leading spaces\tand a tab, then a very-long-hyphenated-compound-word-indeed",
    ]
    rows = [
        cand(
            f"m{i}", memory_type=types[i % 5], score=1 - i / 20, content=texts[i % 5] * (1 + i % 3)
        )
        for i in range(15)
    ]
    asked = [Clarification(memory_key="style.answers & <tone>", candidates=[])]
    for max_tokens in (40, 120, 300, 5000):
        for clarifications in ((), asked):
            budget = Budget(max_items=12, max_tokens=max_tokens, max_items_per_type=4)
            exact, _, exact_tokens = select(rows, budget, clarifications=clarifications)
            summed, _, tokens = select(rows, budget, additive=True, clarifications=clarifications)
            assert [c.id for c in summed] == [c.id for c in exact]
            package = render_prompt(summed, list(clarifications))
            assert tokens == exact_tokens == get_embedder().count_tokens(package)
            # (The notice and the clarification alone may be over a tiny budget: no items.)
            assert tokens <= max_tokens or not summed


def test_an_item_s_parts_count_up_to_the_item():
    # The budget counts an item as the sum of its parts (most of them looked up, not counted).
    count = get_embedder().count_tokens
    contents = [
        "",
        "plain words",
        "  spaces, tabs\tand\nnewlines  ",
        "&amp; <b>tags</b> 'quotes' \"double\"",
        "\u0301combining first, then café and naïve",
        "東京 office 日本語テキスト",
        "emoji 🚀🔥 and ﬁ ligatures",
        "x" * 150,  # a word over WordPiece's 100-character limit
        "ends in punctuation!?",
    ]
    scopes = ["global", "user:s21", 'project:"atlas" & co']
    for i, content in enumerate(contents):
        c = cand(
            str(uuid.uuid4()) if i % 2 else f"m{i}",
            content=content,
            scope_kind=scopes[i % 3].split(":")[0],
            scope_ref=scopes[i % 3].partition(":")[2],
            confidence=i / 10,
        )
        parts = render_item_parts(c)
        assert "".join(parts) == render_item(c)
        assert sum(count(part) for part in parts) == count(render_item(c)), content


def test_only_markup_is_counted_once_per_process_never_memory_data():
    # A deletion must not leave a memory's scope, content or key behind in a process cache.
    real = get_embedder().count_tokens
    seen: list[str] = []

    def count(text):
        seen.append(text)
        return real(text)

    rows = [
        cand("m1", scope_kind="user", scope_ref="dana-private", content="Dana prefers tea."),
        cand("m2", memory_type="incident", content="Outage at 03:00.", score=0.4),
    ]
    asked = [Clarification(memory_key="health.allergy", candidates=[])]
    for _ in range(2):
        seen.clear()
        select_within_budget(
            rows,
            budget=Budget(max_items=5, max_tokens=5000, max_items_per_type=5),
            policy=policy(),
            count_tokens=count,
            render=lambda items: render_prompt(items, asked),
            additive=True,
        )
    # The second time round, the memories' data is counted again, the markup is not.
    for data in ("m1", "user:dana-private", "Dana prefers tea.", "Outage at 03:00."):
        assert data in seen, data
    assert any("health.allergy" in text for text in seen)
    assert not [text for text in seen if text in MARKUP_LINES or text == "</memory>"]
