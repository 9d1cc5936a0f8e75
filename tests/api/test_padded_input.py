"""Input that every later request names differently from how it was written.

The serializers trim ids; the domain parsed the raw body. A write's scope id and its source's
ids were stored padded ("project:atlas "), and no retrieval (``context.project_id`` trimmed),
task close or duplicate check could reach them; a blank tool passed ``source.tool_required``.
A user scope naming another person was stored and never retrieved. ``?format=`` answered 404
before authentication. A reason was accepted up to 1,000 characters and 500 kept.
"""

import pytest
from rest_framework.test import APIClient

from memory_core.models import Memory, MemoryEvent
from tests.factories import write_body

pytestmark = pytest.mark.django_db

ATLAS = "Which database does the atlas backend use?"


def write(client, **overrides):
    response = client.post("/api/v1/memories", write_body(**overrides), format="json")
    return response


def stored(response) -> Memory:
    assert response.status_code == 201, response.content
    return Memory.objects.get(pk=response.json()["memory"]["id"])


def error_codes(response, field: str) -> list[str]:
    return [e["code"] for e in response.json()["error"]["details"].get(field, [])]


@pytest.mark.parametrize("scope", ["project:atlas ", " project:atlas", "project : atlas"])
def test_a_padded_scope_id_is_stored_trimmed_and_retrieved(api_client, scope):
    memory = stored(
        write(
            api_client,
            memory_type="project_constraint",
            memory_key="db",
            scope=scope,
            content="The atlas backend uses Postgres 16.",
        )
    )
    assert (memory.scope_kind, memory.scope_ref) == ("project", "atlas")

    context = {"user_id": "user-1", "project_id": "atlas"}
    found = api_client.post("/api/v1/retrieve", {"query": ATLAS, "context": context}, format="json")

    assert str(memory.pk) in {item["id"] for item in found.json()["items"]}


def test_a_scope_id_is_measured_trimmed_in_one_round(api_client):
    """Stop 60's audit of bad input to the API found that a scope's length was measured as
    sent, before its id was trimmed (the serializer's ``max_length`` of 208, and the domain
    parser's): ``"project: "`` and an id of 200 characters, whose stored form
    ``project:<200 x>`` is valid, was refused 400 ``max_length`` "no more than 208
    characters", where ``"repo: "`` and the same id was stored; and ``"user:"`` and 204
    characters heard ``max_length`` 208 first, then ``invalid_scope`` "at most 200" once cut:
    two rounds for one mistake. The id is at most 200 characters once trimmed (docs/api.md),
    and one longer is one ``invalid_scope``."""
    ref = "x" * 200
    memory = stored(write(api_client, memory_key="k.scope", scope=f"project: {ref}"))
    assert (memory.scope_kind, memory.scope_ref) == ("project", ref)

    response = write(api_client, memory_key="k.user", scope="user:" + "u" * 204)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["details"] == {
        "scope": [{"code": "invalid_scope", "message": "the scope's id is at most 200 characters"}]
    }


def test_a_task_scope_written_padded_is_expired_by_its_tasks_close(api_client):
    memory = stored(
        write(
            api_client,
            memory_type="task_state",
            memory_key="",
            scope="task:t2 ",
            content="Step 3 of the migration is done.",
        )
    )

    closed = api_client.post(
        "/api/v1/tasks/close", {"user_id": "user-1", "task_id": "t2"}, format="json"
    )

    assert closed.status_code == 200, closed.content
    memory.refresh_from_db()
    assert memory.status == "expired"


def test_a_batch_holding_one_scope_padded_and_not_is_one_duplicate(api_client):
    items = [
        write_body(memory_type="project_constraint", memory_key="db", scope=scope, content=text)
        for scope, text in (
            ("project:orbit", "Orbit uses Postgres."),
            ("project:orbit ", "Orbit uses MySQL."),
        )
    ]

    response = api_client.post("/api/v1/memories/batch", {"items": items}, format="json")

    results = response.json()["results"]
    assert results[0]["decision"] == "accepted"
    assert results[1]["decision"] == "rejected"
    assert "fields.duplicate_in_batch" in results[1]["rule_codes"]


def test_a_blank_tool_is_no_tool_and_source_ids_are_trimmed(api_client):
    source = {"type": "verified_tool_output", "conversation_id": " c ", "message_id": "m"}
    rule = {"memory_type": "repository_rule", "memory_key": "lint", "scope": "repo:r1"}
    rule["content"] = "The repo uses ruff for linting."

    blank = write(api_client, **rule, source={**source, "tool": "   "})
    named = stored(write(api_client, **rule, source={**source, "tool": " ruff "}))

    assert blank.status_code == 422, blank.content
    assert "source.tool_required" in blank.json()["rule_codes"]
    assert (named.source_tool, named.source_conversation_id) == ("ruff", "c")


@pytest.mark.parametrize("scope", ["user:user-2", "user:someone else"])
def test_a_user_scope_naming_another_person_is_refused(api_client, scope):
    response = write(api_client, scope=scope)

    assert response.status_code == 400, response.content
    assert error_codes(response, "scope") == ["invalid_scope"]
    assert not Memory.objects.exists()


@pytest.mark.parametrize("scope", ["user:user-1", "user:user-1 "])
def test_a_user_scope_naming_the_subject_is_kept(api_client, scope):
    assert stored(write(api_client, scope=scope)).scope_kind == "user"


def test_a_user_scope_by_uuid_is_the_subjects_own_and_retrieved(api_client):
    first = stored(write(api_client))
    own = str(first.subject_id)

    by_uuid = stored(
        write(
            api_client,
            memory_key="style.tone",
            scope=f"user:{own.upper()}",
            content="User prefers a friendly tone.",
        )
    )
    found = api_client.post(
        "/api/v1/retrieve",
        {"query": "How should answers sound?", "context": {"user_id": "user-1"}},
        format="json",
    )

    # Stored naming the subject by its id, one spelling for one scope (the next test).
    assert (by_uuid.scope_kind, by_uuid.scope_ref) == ("user", "user-1")
    assert str(by_uuid.pk) in {item["id"] for item in found.json()["items"]}


def test_a_user_scope_by_id_or_by_uuid_is_one_chain(api_client):
    """The scope is part of a chain's identity, and ``user:user-1`` and ``user:<its UUID>``
    stood as two chains on one key: both active, and deleting the newer (by its id) gave
    agents the older value again."""

    def lang(content: str, scope: str = "user:user-1") -> Memory:
        return stored(write(api_client, memory_key="lang", scope=scope, content=content))

    first = lang("User wants answers in German.")
    own = str(first.subject_id)
    second = lang("User wants answers in Dutch.", scope=f"user:{own}")
    assert second.supersedes_id == first.id and second.scope_ref == "user-1"
    # A row stored by UUID before this was so: a write by id lands on its chain too.
    Memory.objects.filter(pk=second.pk).update(scope_ref=own)
    third = lang("User wants answers in French.")
    assert third.supersedes_id == second.id
    assert list(Memory.objects.filter(memory_key="lang", status="active")) == [third]
    deleted = api_client.post("/api/v1/deletions", {"memory_id": str(third.pk)}, format="json")
    assert deleted.status_code == 202, deleted.content
    found = api_client.post(
        "/api/v1/retrieve",
        {"query": "Which language should answers use?", "context": {"user_id": "user-1"}},
        format="json",
    ).json()
    assert "German" not in found["prompt"] and "Dutch" not in found["prompt"]
    # One batch spelling the scope both ways names one chain twice.
    items = [
        write_body(memory_key="tone", scope="user:user-1", content="User likes a dry tone."),
        write_body(memory_key="tone", scope=f"user:{own}", content="User likes warmth."),
    ]
    batch = api_client.post("/api/v1/memories/batch", {"items": items}, format="json")
    results = [(r["decision"], r["rule_codes"]) for r in batch.json()["results"]]
    assert results == [("accepted", []), ("rejected", ["fields.duplicate_in_batch"])]
    assert Memory.objects.filter(memory_key="tone", status="active").count() == 1


def test_a_user_scope_by_another_uuid_is_refused(api_client):
    stored(write(api_client))  # user-1 exists
    stranger = "3f1c8a52-0d4e-4d7b-9a8e-2b1f6c0e9a11"

    single = write(api_client, memory_key="style.tone", scope=f"user:{stranger}")
    unborn = write(api_client, subject="user-9", scope=f"user:{stranger}")
    items = [write_body(memory_key="a"), write_body(memory_key="b", scope=f"user:{stranger}")]
    batch = api_client.post("/api/v1/memories/batch", {"items": items}, format="json")

    assert single.status_code == unborn.status_code == batch.status_code == 400
    assert error_codes(single, "scope") == error_codes(unborn, "scope") == ["invalid_scope"]
    assert error_codes(batch, "items.1.scope") == ["invalid_scope"]
    assert Memory.objects.count() == 1


def test_format_is_an_unknown_parameter_not_a_404(api_client):
    assert APIClient().get("/api/v1/memories?format=xml").status_code == 401
    listed = api_client.get("/api/v1/memories?format=xml")
    assert listed.status_code == 400
    assert error_codes(listed, "format") == ["unknown_field"]
    # An endpoint that reads no query string refuses it too (api.parsing.QueryStringChecked).
    whoami = api_client.get("/api/v1/whoami?format=api")
    assert whoami.status_code == 400
    assert error_codes(whoami, "format") == ["unknown_field"]


def test_a_reason_is_kept_whole_or_refused(api_client):
    memory = stored(write(api_client))
    url = f"/api/v1/memories/{memory.pk}"

    too_long = api_client.post(f"{url}/revoke", {"reason": "x" * 501}, format="json")
    assert too_long.status_code == 400
    assert error_codes(too_long, "reason") == ["max_length"]
    correction = {
        "content": "User prefers short answers.",
        "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-2"},
        "reason": "y" * 501,
    }
    assert api_client.post(f"{url}/supersede", correction, format="json").status_code == 400
    memory.refresh_from_db()
    assert memory.status == "active"

    assert api_client.post(f"{url}/revoke", {"reason": "x" * 500}, format="json").status_code == 200
    event = MemoryEvent.objects.get(memory_id=memory.pk, action="revoked")
    assert event.details["reason"] == "x" * 500


# Zero-width spaces and joiners, a word joiner and BOM, bidi marks, a soft hyphen, a tag.
INVISIBLE = [
    "\u200b",
    "\u200b\u200c\u200d",
    "\u2060\ufeff",
    " \u200e\u200f ",
    "\u00ad",
    "\U000e0041",
]


@pytest.mark.parametrize("invisible", INVISIBLE)
@pytest.mark.parametrize(
    ("field", "path"),
    [
        ("subject", "subject"),
        ("memory_key", "memory_key"),
        ("scope", "scope"),
        ("source", "source.message_id"),
    ],
)
def test_an_id_of_invisible_characters_only_is_refused(api_client, invisible, field, path):
    """A subject, key, scope or message id of zero-width spaces alone was stored (201): an id
    that shows nothing, listed and answered as if empty, that no one could type again. (The
    ids held to letters and digits, ``source.conversation_id`` say, were ``invalid_id``.)"""
    value = {
        "subject": invisible,
        "memory_key": invisible,
        "scope": f"project:{invisible}",
        "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"},
    }[field]
    if path.startswith("source."):
        value[path.split(".")[1]] = invisible
    single = write(api_client, **{field: value})
    batch = api_client.post(
        "/api/v1/memories/batch", {"items": [write_body(**{field: value})]}, format="json"
    )

    for response, name in ((single, path), (batch, f"items.0.{path}")):
        assert response.status_code == 400, response.content
        error = response.json()["error"]
        assert error["code"] == "invalid_input"
        assert [e["code"] for e in error["details"][name]] == ["invisible_characters_only"]
        assert "invisible characters" in error["details"][name][0]["message"]
    assert not Memory.objects.exists()


def test_invisible_characters_inside_a_visible_id_are_kept(api_client):
    subject, key = "user\u200b-7", "style\u00ad.answers"
    memory = stored(write(api_client, subject=subject, memory_key=key))
    assert (memory.subject.external_id, memory.memory_key) == (subject, key)


def test_a_correction_whose_message_id_is_invisible_is_refused(api_client):
    memory = stored(write(api_client))
    correction = {
        "content": "User prefers short answers.",
        "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "\u200b"},
    }
    response = api_client.post(f"/api/v1/memories/{memory.pk}/supersede", correction, format="json")
    assert response.status_code == 400, response.content
    assert error_codes(response, "source.message_id") == ["invisible_characters_only"]
    assert Memory.objects.count() == 1


@pytest.mark.parametrize("invisible", ["\u200b", " \u200e\u200f ", "\u00ad"])
@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("post", "/api/v1/retrieve", {"query": "q", "context": {"user_id": "@"}},
         "context.user_id"),
        ("post", "/api/v1/retrieve", {"query": "q", "context": {"user_id": "u", "task_id": "@"}},
         "context.task_id"),
        ("post", "/api/v1/retrieve",
         {"query": "q", "context": {"user_id": "u", "repository_id": "@"}},
         "context.repository_id"),
        ("get", "/api/v1/memories", {"subject": "@"}, "subject"),
        ("get", "/api/v1/memories", {"key": "@"}, "key"),
        ("post", "/api/v1/deletions", {"subject": "@"}, "subject"),
        ("post", "/api/v1/deletions", {"subject": "u", "memory_key": "@"}, "memory_key"),
        ("post", "/api/v1/tasks/close", {"user_id": "u", "task_id": "@"}, "task_id"),
        ("post", "/api/v1/subject-tokens", {"agent": "a", "subject": "@"}, "subject"),
    ],
)  # fmt: skip
def test_a_lookup_by_an_id_of_invisible_characters_only_is_refused(
    api_client, agent, invisible, method, path, body, field
):
    """No write stores such an id, so a lookup by one found nothing and said nothing: a
    retrieval answered an empty package, a deletion "nothing to delete". Each is the write's
    400 ``invisible_characters_only`` now, and nothing is read or changed."""
    agent.issues_subject_tokens = True
    agent.save(update_fields=["issues_subject_tokens"])
    stored(write(api_client, subject="u"))

    def filled(value):
        if isinstance(value, dict):
            return {k: filled(v) for k, v in value.items()}
        return invisible if value == "@" else value

    data = filled(body)
    if method == "get":
        response = api_client.get(path, data)
    else:
        response = api_client.post(path, data, format="json")
    assert response.status_code == 400, response.content
    assert error_codes(response, field) == ["invisible_characters_only"], response.content
    assert Memory.objects.filter(status="active").count() == 1
