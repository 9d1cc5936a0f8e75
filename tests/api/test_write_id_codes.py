"""A write's ids held to letters and digits (``session_id``, ``task_id``,
``source.conversation_id``, ``source.tool``) are refused with the same codes by the API (a
write, a batch item) and by the domain's parser (``import_memories``), as docs/api.md lists
them: one checker, ``memory_core.admission.candidate.id_problems``, tells each mistake once
(``null_characters_not_allowed``, ``surrogate_characters_not_allowed``,
``bidi_controls_not_allowed``, else ``invalid_id``)."""

import json

import pytest

from memory_core.admission import parse_candidate
from memory_core.exceptions import ValidationFailed
from tests.factories import write_body

pytestmark = pytest.mark.django_db


def api_codes(client, url, body, prefix=""):
    response = client.post(url, body, format="json")
    assert response.status_code == 400, response.content
    details = response.json()["error"]["details"]
    return {k[len(prefix) :]: sorted(e["code"] for e in v) for k, v in details.items()}


def import_codes(body):
    with pytest.raises(ValidationFailed) as caught:
        parse_candidate(json.loads(json.dumps(body)))
    return {k: sorted(e["code"] for e in v) for k, v in caught.value.details.items()}


@pytest.mark.parametrize(
    "field, text",
    [("session_id", "s\u202e1"), ("task_id", "t\u2066x"), ("session_id", "\u202a")],
)
def test_a_bidi_control_in_a_writes_session_or_task_id_is_bidi_controls_not_allowed(
    api_client, field, text
):
    """Stop 57's audit of bad input found a write's or a batch item's ``session_id`` or
    ``task_id`` holding a bidirectional control answered ``invalid_id``, where docs/api.md,
    import and every lookup of the same id say ``bidi_controls_not_allowed``; the API now
    answers that code, single and in a batch, as import does."""
    body = write_body(**{field: text})
    assert import_codes(body) == {field: ["bidi_controls_not_allowed"]}
    single = api_codes(api_client, "/api/v1/memories", body)
    batch = api_codes(api_client, "/api/v1/memories/batch", {"items": [body]}, "items.0.")
    assert single == {field: ["bidi_controls_not_allowed"]}, single
    assert batch == {field: ["bidi_controls_not_allowed"]}, batch


@pytest.mark.parametrize(
    "body",
    [
        write_body(source={"type": "user_input", "conversation_id": "\u200b", "message_id": "m"}),
        write_body(session_id="\u200b\u200b"),
        write_body(task_id="\ufeff"),
    ],
    ids=["conversation_id", "session_id", "task_id"],
)
def test_an_invisible_only_id_of_letters_and_digits_is_invalid_id_in_import_as_in_the_api(
    api_client, body
):
    """Stop 57's audit of bad input found an id of invisible characters alone answered
    ``invalid_id`` by the API, as docs/api.md says, but ``invisible_characters_only`` by the
    domain's parser (``import_memories``), which the docs say refuses the same; both now
    answer ``invalid_id``."""
    api = api_codes(api_client, "/api/v1/memories", body)
    assert set(sum(api.values(), [])) == {"invalid_id"}, api
    assert import_codes(body) == api


def test_a_nul_in_a_writes_session_id_is_one_mistake_told_once(api_client):
    """Stop 57's audit of bad input found a NUL in a write's ``session_id`` told twice by the
    API (``invalid_id`` and ``null_characters_not_allowed``) where docs/api.md says a field's
    same mistake is told once; it is now told once, as import tells it."""
    body = write_body(session_id="s\x001")
    assert import_codes(body) == {"session_id": ["null_characters_not_allowed"]}
    assert api_codes(api_client, "/api/v1/memories", body) == {
        "session_id": ["null_characters_not_allowed"]
    }


def test_a_lookup_by_the_same_session_id_answers_the_documented_code(api_client):
    """Stop 57's audit of bad input found the lookup side (retrieval's
    ``context.session_id``) answering the documented ``bidi_controls_not_allowed`` where the
    write side did not; it still does, and the write side now agrees."""
    response = api_client.post(
        "/api/v1/retrieve",
        {"query": "q", "context": {"user_id": "user-1", "session_id": "s\u202e1"}},
        format="json",
    )
    codes = [e["code"] for e in response.json()["error"]["details"]["context.session_id"]]
    assert codes == ["bidi_controls_not_allowed"]
