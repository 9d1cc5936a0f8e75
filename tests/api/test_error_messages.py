"""Every 400 says what is wrong in words a first-time client can act on: where the mistake
lies (the query string or the body), the valid choices, every field at once, the limits a
refusal applies (docs/api.md, "Every error")."""

import pytest

from tests.factories import write_body

pytestmark = pytest.mark.django_db

MEMORIES = "/api/v1/memories"
BATCH = "/api/v1/memories/batch"


def error_of(response, status: int = 400) -> dict:
    assert response.status_code == status, response.content
    return response.json()["error"]


def messages_of(response) -> dict:
    """Return ``{field: [message, ...]}`` of a 400 ``invalid_input``."""
    error = error_of(response)
    assert error["code"] == "invalid_input"
    return {name: [e["message"] for e in found] for name, found in error["details"].items()}


def codes_of(response) -> dict:
    error = error_of(response)
    return {name: [e["code"] for e in found] for name, found in error["details"].items()}


# --- The query string, not the body ------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    ["status=gone&limit=abc", "subject=a&subject=b", "pagination=cursor&offset=5", "bogus=1"],
)
def test_a_bad_query_string_is_named_as_the_query_string(api_client, query):
    error = error_of(api_client.get(f"{MEMORIES}?{query}"))
    assert error["code"] == "invalid_input"
    assert error["message"] == "The query string is invalid; see details for each parameter."


def test_a_review_queue_query_and_too_many_parameters_are_the_query_string(api_client, reviewer):
    error = error_of(reviewer.get("/api/v1/review/items?state=gone"))
    assert error["message"].startswith("The query string is invalid")
    error = error_of(api_client.get("/api/v1/whoami?" + "&".join(["a="] * 1001)))
    assert error["message"].startswith("The query string is invalid")


def test_a_bad_body_is_still_named_as_the_body(api_client):
    error = error_of(api_client.post(MEMORIES, write_body(memory_type="x"), format="json"))
    assert error["message"] == "The request body is invalid; see details for each field."
