"""Stage 3's entities: "quoted phrases and identifier-shaped words" (docs/retrieval.md). The
text *between* two quoted values is neither, yet it becomes an entity when a quoted value is
a single character (below the two-character minimum) or longer than 60: `Rename "a" to "b"`
plans the entity "to", and every memory holding the word "to" is ranked as naming what the
request is about (task_fit 0.8, reason "names what the request is about")."""

import pytest

from memory_core.retrieval.plan import extract_entities
from tests.factories import write_body

pytestmark = pytest.mark.django_db
URL = "/api/v1/retrieve"


@pytest.mark.parametrize(
    ("query", "entities"),
    [
        ('Rename "a" to "b" everywhere', ()),
        ("Swap `x` or `y` in the config", ()),
        ('Use "dark mode" and "x" and "light mode"', ("dark mode", "light mode")),
    ],
)
def test_text_between_two_quoted_values_is_no_entity(query, entities):
    assert extract_entities(query) == entities


def test_a_memory_is_not_ranked_as_naming_the_gap_between_two_quoted_values(api_client):
    body = write_body(
        subject="dana",
        memory_key="style.reply",
        content="User wants replies to stay short.",
    )
    assert api_client.post("/api/v1/memories", body, format="json").status_code == 201
    response = api_client.post(
        URL,
        {
            "query": 'How do I rename "a" to "b" in the replies?',
            "context": {"user_id": "dana"},
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    data = response.json()
    trace = api_client.get(f"/api/v1/traces/{data['trace_id']}").json()
    [item] = trace["stages"]["selected"]
    # The memory names none of the request's things: it merely holds the word "to", which
    # sits between the quoted "a" and "b" (each below the two-character minimum).
    assert "names what the request is about" not in item["reason"], item
    assert item["components"]["task_fit"] != 0.8, item
    assert trace["stages"]["plan"]["entities"] == 0
