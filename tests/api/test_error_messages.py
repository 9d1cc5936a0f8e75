"""Every 400 says what is wrong in words a first-time client can act on: where the mistake
lies (the query string or the body), the valid choices, every field at once, the limits a
refusal applies (docs/api.md, "Every error")."""

import json

import pytest

from memory_core.exceptions import ValidationFailed
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


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (MEMORIES, "Unknown parameter."),
        # It takes none, and said "Unknown parameter." as if it took others (stop 49's audit).
        ("/api/v1/deletions", "Unknown parameter: this endpoint takes no query string."),
    ],
)
def test_an_unknown_query_parameter_is_called_a_parameter(api_client, path, message):
    """Its message said "Unknown field.", a body's word, of ``?bogus=1``."""
    details = error_of(api_client.get(f"{path}?bogus=1"))["details"]
    assert details == {"bogus": [{"code": "unknown_field", "message": message}]}


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (MEMORIES, "Unknown parameter."),
        ("/api/v1/whoami", "Unknown parameter: this endpoint takes no query string."),
    ],
)
def test_an_unknown_query_parameter_named_with_a_lone_surrogate_is_named_escaped(
    api_client, path, message
):
    """A charset such as unicode_escape turns ``%5Cud800`` into a lone surrogate (Django
    decodes the query string with it; the served application reads it as UTF-8,
    tests/config/test_wsgi.py). The answer named the parameter as sent and could not be
    encoded: a 500."""
    response = api_client.generic(
        "GET",
        f"{path}?%5Cud800=1&{'x' * 70}=1",
        content_type="application/json; charset=unicode_escape",
    )
    details = error_of(response)["details"]
    assert details == {
        "\\ud800": [{"code": "unknown_field", "message": message}],
        "x" * 60 + "…": [{"code": "unknown_field", "message": message}],
    }


def test_a_review_queue_query_and_too_many_parameters_are_the_query_string(api_client, reviewer):
    error = error_of(reviewer.get("/api/v1/review/items?state=gone"))
    assert error["message"].startswith("The query string is invalid")
    error = error_of(api_client.get("/api/v1/whoami?" + "&".join(["a="] * 1001)))
    assert error["message"].startswith("The query string is invalid")


def test_a_bad_body_is_still_named_as_the_body(api_client):
    error = error_of(api_client.post(MEMORIES, write_body(memory_type="x"), format="json"))
    assert error["message"] == "The request body is invalid; see details for each field."


# --- A choice outside the enumeration names the valid ones -------------------------------------


@pytest.mark.parametrize(
    "body, field, message",
    [
        (
            write_body(memory_type="preference"),
            "memory_type",
            '"preference" is not a valid choice; one of: user_preference, project_constraint, '
            "repository_rule, task_state, previous_decision, incident, successful_procedure, "
            "episode.",
        ),
        (
            write_body(source={"type": "chat", "conversation_id": "c", "message_id": "m"}),
            "source.type",
            '"chat" is not a valid choice; one of: user_input, verified_tool_output, '
            "model_inference, admin.",
        ),
        (
            write_body(authority="boss"),
            "authority",
            '"boss" is not a valid choice; one of: explicit_user, explicit_admin, '
            "confirmed_system, tool_observation, model_inference.",
        ),
        (
            write_body(consent="yes"),
            "consent",
            '"yes" is not a valid choice; one of: explicit, workflow.',
        ),
        (
            write_body(sensitivity="secret"),
            "sensitivity",
            '"secret" is not a valid choice; one of: public, personal, sensitive, restricted.',
        ),
    ],
)
def test_a_write_choice_outside_the_enumeration_names_the_valid_ones(
    api_client, body, field, message
):
    response = api_client.post(MEMORIES, body, format="json")
    assert codes_of(response)[field] == ["invalid_choice"]
    assert messages_of(response)[field] == [message]


def test_a_query_choice_names_the_valid_ones(api_client, reviewer):
    response = api_client.get(f"{MEMORIES}?status=gone&type=x&pagination=pages")
    found = messages_of(response)
    assert found["status"] == [
        '"gone" is not a valid choice; one of: pending_approval, active, superseded, '
        "revoked, expired, deleted, rejected."
    ]
    assert found["type"][0].startswith('"x" is not a valid choice; one of: user_preference, ')
    assert found["pagination"] == ['"pages" is not a valid choice; one of: offset, cursor.']
    found = messages_of(reviewer.get("/api/v1/review/items?kind=other"))
    assert found["kind"] == ['"other" is not a valid choice; one of: sensitive_write, conflict.']


def test_a_long_or_unencodable_choice_is_echoed_short_and_escaped(api_client):
    response = api_client.post(
        MEMORIES,
        b'{"subject": "u", "memory_type": "' + b"x" * 500 + b'\\ud800", "scope": "global"}',
        content_type="application/json",
    )
    (message,) = messages_of(response)["memory_type"]
    assert message.startswith('"' + "x" * 60 + '…" is not a valid choice; one of: ')
    response = api_client.post(
        MEMORIES,
        b'{"subject": "u", "memory_type": "a\\ud800"}',
        content_type="application/json",
    )
    assert messages_of(response)["memory_type"][0].startswith('"a\\ud800" is not a valid')


# --- An object or a list of the wrong type or size is the field's own error -------------------


@pytest.mark.parametrize(
    "source, message",
    [
        ("chat", "Must be an object, not a string."),
        (5, "Must be an object, not an integer."),
        (["user_input"], "Must be an object, not an array."),
    ],
)
def test_a_source_of_another_type_is_an_error_of_source_in_the_fields_words(
    api_client, source, message
):
    response = api_client.post(MEMORIES, write_body(source=source), format="json")
    assert codes_of(response) == {"source": ["invalid"]}
    assert messages_of(response) == {"source": [message]}


def test_a_body_and_a_batch_item_of_another_type_say_so_in_the_same_words(api_client):
    response = api_client.post(MEMORIES, [1, 2], format="json")
    assert messages_of(response) == {"non_field_errors": ["Must be an object, not an array."]}
    response = api_client.post(BATCH, {"items": [write_body(), "x"]}, format="json")
    assert messages_of(response) == {"items.1": ["Must be an object, not a string."]}
    response = api_client.post("/api/v1/retrieve", {"query": "x", "context": "dana"}, format="json")
    assert messages_of(response) == {"context": ["Must be an object, not a string."]}


@pytest.mark.parametrize(
    "items, code, message",
    [
        ([], "min_length", "A batch holds 1 to 100 items; this one holds 0."),
        ([write_body()] * 101, "max_length", "A batch holds 1 to 100 items; this one holds 101."),
        (5, "not_a_list", "Must be an array of 1 to 100 write bodies, not an integer."),
        (
            {"0": write_body()},
            "not_a_list",
            "Must be an array of 1 to 100 write bodies, not an object.",
        ),
    ],
)
def test_a_batch_of_the_wrong_size_or_type_is_an_error_of_items(api_client, items, code, message):
    response = api_client.post(BATCH, {"items": items}, format="json")
    assert codes_of(response) == {"items": [code]}
    assert messages_of(response) == {"items": [message]}


def service_details(call) -> dict:
    """Return the field errors the write service raises for ``call()``."""
    with pytest.raises(ValidationFailed) as caught:
        call()
    return caught.value.details


@pytest.mark.parametrize(
    "items",
    [[], [write_body()] * 101, 5, {"0": write_body()}],
    ids=["empty", "too many", "a number", "an object"],
)
def test_the_batch_service_keys_the_same_mistakes_the_same_way(api_client, agent_principal, items):
    """The service (an import's path, the batch's) answered a batch of the wrong size or type
    with ``invalid_length`` where the API says ``min_length``, ``max_length`` or
    ``not_a_list``: one mistake, two codes, depending on the way in."""
    from memory_core.services.writes import memory_write_batch

    answer = error_of(api_client.post(BATCH, {"items": items}, format="json"))["details"]
    details = service_details(lambda: memory_write_batch(principal=agent_principal, items=items))
    assert details == answer
    details = service_details(
        lambda: memory_write_batch(principal=agent_principal, items=[write_body(), "x"])
    )
    assert details == {
        "items.1": [{"code": "invalid", "message": "Must be an object, not a string."}]
    }


SOURCE = {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"}
# One mistake each, in a body both ways in read: the API's serializer and the service's
# parser (memory_core.admission.candidate) must key it with the same code.
WRITE_MISTAKES = {
    "body an array": [1],
    "confidence over 1": write_body(confidence=2),
    "confidence under 0": write_body(confidence=-0.5),
    "confidence a string": write_body(confidence="0.5"),
    "confidence a boolean": write_body(confidence=True),
    "content a number": write_body(content=5),
    "content empty": write_body(content=""),
    "content null": write_body(content=None),
    "content with NUL": write_body(content="a\x00b"),
    "content with a lone surrogate": write_body(content="a\ud800b"),
    "content too long": write_body(content="x" * 20_001),
    "subject blank": write_body(subject="  "),
    "subject a number": write_body(subject=5),
    "subject too long": write_body(subject="x" * 201),
    "memory_key a number": write_body(memory_key=5),
    "memory_type a number": write_body(memory_type=5),
    "memory_type unknown": write_body(memory_type="preference"),
    "memory_type null": write_body(memory_type=None),
    "scope a number": write_body(scope=5),
    "scope unknown": write_body(scope="galaxy:x"),
    "valid_until not a date": write_body(valid_until="tomorrow"),
    "valid_until a number": write_body(valid_until=5),
    "valid_until out of range": write_body(valid_until="9999-12-31T23:00:00-05:00"),
    "source a string": write_body(source="chat"),
    "source null": write_body(source=None),
    "source.type unknown": write_body(source={**SOURCE, "type": "chat"}),
    "source.conversation_id a number": write_body(source={**SOURCE, "conversation_id": 5}),
    "source.conversation_id empty": write_body(source={**SOURCE, "conversation_id": ""}),
    "source field unknown": write_body(source={**SOURCE, "x": 1}),
    "field unknown": write_body(x=1),
    "session_id a number": write_body(session_id=5),
    "environment a number": write_body(environment=5),
    "several at once": write_body(subject=5, content="", confidence=3, source="x", bogus=1),
}


@pytest.mark.parametrize("body", WRITE_MISTAKES.values(), ids=WRITE_MISTAKES.keys())
def test_the_write_service_keys_a_mistake_as_the_api_does(api_client, agent_principal, body):
    """An import (``import_memories``) and the batch read a body with the domain's parser:
    it answered ``invalid_type`` where the API says ``invalid``, ``out_of_range`` for its
    ``max_value``, ``required`` for its ``blank`` and ``null``, ``null_character`` for its
    ``null_characters_not_allowed``, ``invalid_datetime`` for its ``invalid``."""
    from memory_core.services.writes import memory_write

    # As JSON text: a lone surrogate goes as its escape, "\ud800", as a client sends it.
    raw = json.dumps(body)
    answer = codes_of(api_client.post(MEMORIES, raw, content_type="application/json"))
    details = service_details(lambda: memory_write(principal=agent_principal, data=body))
    assert {name: [e["code"] for e in found] for name, found in details.items()} == answer


CORRECTION_MISTAKES = {
    "body an array": [1],
    "reason a number": {"content": "x", "source": SOURCE, "reason": 5},
    "reason too long": {"content": "x", "source": SOURCE, "reason": "x" * 501},
    "confidence over 1": {"content": "x", "source": SOURCE, "confidence": 2},
    "content missing": {"source": SOURCE},
    "source a list": {"content": "x", "source": []},
}


@pytest.mark.parametrize("body", CORRECTION_MISTAKES.values(), ids=CORRECTION_MISTAKES.keys())
def test_the_correction_service_keys_a_mistake_as_the_api_does(api_client, agent_principal, body):
    from memory_core.services.writes import memory_correct, memory_write

    memory = memory_write(principal=agent_principal, data=write_body()).memory
    url = f"{MEMORIES}/{memory.pk}/supersede"
    answer = codes_of(api_client.post(url, body, format="json"))
    details = service_details(
        lambda: memory_correct(principal=agent_principal, memory_id=memory.pk, data=body)
    )
    assert {name: [e["code"] for e in found] for name, found in details.items()} == answer


def test_the_serializers_and_the_domain_parser_read_the_same_fields():
    """Two lists of a write's fields: a field added to one only was refused by the other."""
    from api.memories_serializers import (
        MemoryCorrectionSerializer,
        MemoryWriteSerializer,
        SourceSerializer,
    )
    from memory_core.admission.candidate import CORRECTION_FIELDS, SOURCE_FIELDS, WRITE_FIELDS

    assert set(MemoryWriteSerializer().fields) == WRITE_FIELDS
    assert set(MemoryCorrectionSerializer().fields) == CORRECTION_FIELDS
    assert set(SourceSerializer().fields) == SOURCE_FIELDS


# --- Every mistake of a body in one answer ------------------------------------------------------


def test_unknown_and_missing_fields_are_answered_together(api_client):
    response = api_client.post(MEMORIES, {"user": "u", "type": "t", "text": "x"}, format="json")
    assert codes_of(response) == {
        "user": ["unknown_field"],
        "type": ["unknown_field"],
        "text": ["unknown_field"],
        "subject": ["required"],
        "memory_type": ["required"],
        "scope": ["required"],
        "content": ["required"],
        "source": ["required"],
    }


def test_a_bad_choice_does_not_hide_a_bad_scope_or_value(api_client):
    body = write_body(
        memory_type="preference",
        scope="galaxy:x",
        value={"a": [[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]},
        bogus=1,
        source={"type": "chat", "conversation_id": "c"},
    )
    assert codes_of(api_client.post(MEMORIES, body, format="json")) == {
        "bogus": ["unknown_field"],
        "memory_type": ["invalid_choice"],
        "scope": ["invalid_scope"],
        "value": ["too_deep"],
        "source.type": ["invalid_choice"],
        "source.message_id": ["required"],
    }


def test_a_user_scope_of_another_subject_is_answered_with_the_other_mistakes(api_client):
    body = write_body(scope="user:someone-else", content=5)
    assert codes_of(api_client.post(MEMORIES, body, format="json")) == {
        "content": ["invalid"],
        "scope": ["invalid_scope"],
    }


def test_a_batch_answers_every_item_and_every_field_at_once(api_client):
    items = [
        write_body(),
        {"user": "u", "content": "x"},
        write_body(memory_type="nope", scope="moon:1"),
        "x",
    ]
    assert codes_of(api_client.post(BATCH, {"items": items, "extra": 1}, format="json")) == {
        "extra": ["unknown_field"],
        "items.1.user": ["unknown_field"],
        "items.1.subject": ["required"],
        "items.1.memory_type": ["required"],
        "items.1.scope": ["required"],
        "items.1.source": ["required"],
        "items.2.memory_type": ["invalid_choice"],
        "items.2.scope": ["invalid_scope"],
        "items.3": ["invalid"],
    }


def test_a_correction_answers_every_field_at_once(api_client):
    created = api_client.post(MEMORIES, write_body(), format="json")
    assert created.status_code == 201, created.content
    memory_id = created.json()["memory"]["id"]
    body = {"scope": "global", "value": [[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}
    response = api_client.post(f"{MEMORIES}/{memory_id}/supersede", body, format="json")
    assert codes_of(response) == {
        "scope": ["unknown_field"],
        "content": ["required"],
        "source": ["required"],
        "value": ["too_deep"],
    }


def test_every_endpoint_names_unknown_and_missing_fields_together(api_client):
    response = api_client.post("/api/v1/retrieve", {"q": "x"}, format="json")
    assert codes_of(response) == {
        "q": ["unknown_field"],
        "query": ["required"],
        "context": ["required"],
    }
    response = api_client.get(f"{MEMORIES}?bogus=1&limit=0")
    assert codes_of(response) == {"bogus": ["unknown_field"], "limit": ["min_value"]}


# --- An answer is bounded by the schema, not by the body -----------------------------------------


def _unknown(count: int, prefix: str = "k") -> dict:
    return {f"{prefix}{index:05d}": 1 for index in range(count)}


def _post_raw(client, path: str, body) -> object:
    return client.post(path, json.dumps(body), content_type="application/json")


@pytest.mark.parametrize(
    "path, body, prefix",
    [
        (MEMORIES, write_body(**_unknown(60_000)), ""),
        (
            "/api/v1/retrieve",
            {"query": "x", "context": {"user_id": "u", **_unknown(60_000)}},
            "context.",
        ),
        ("/api/v1/deletions", {"subject": "user-1", **_unknown(60_000)}, ""),
    ],
)
def test_a_body_of_60000_unknown_fields_names_the_first_50_and_counts_the_rest(
    api_client, path, body, prefix
):
    """Every unknown field was named: a 768 kB body of 60,000 keys answered 3.7 MB."""
    from memory_core.models import AdmissionDecision, DeletionOperation, Memory

    response = _post_raw(api_client, path, body)
    assert len(response.content) < 5_000, len(response.content)
    details = error_of(response)["details"]
    assert details == {
        **{f"{prefix}k{index:05d}": [details[f"{prefix}k{index:05d}"][0]] for index in range(50)},
        "non_field_errors": [
            {
                "code": "too_many_errors",
                "message": "59,950 more unknown fields were sent: an answer names the first 50.",
            }
        ],
    }
    assert {entry["code"] for name, (entry,) in details.items() if name != "non_field_errors"} == {
        "unknown_field"
    }
    assert not Memory.objects.exists()
    assert not AdmissionDecision.objects.exists()
    assert not DeletionOperation.objects.exists()


def test_a_batch_shares_one_bound_across_its_items_and_keeps_the_other_mistakes(api_client):
    items = [write_body(**_unknown(600)) for _ in range(99)] + [write_body(memory_type="x")]
    response = _post_raw(api_client, BATCH, {"items": items})
    assert len(response.content) < 5_000, len(response.content)
    codes = codes_of(response)
    assert list(codes)[:50] == [f"items.0.k{index:05d}" for index in range(50)]
    assert codes["items.99.memory_type"] == ["invalid_choice"]
    assert len(codes) == 52
    assert messages_of(response)["non_field_errors"] == [
        "59,350 more unknown fields were sent: an answer names the first 50."
    ]


def test_50_unknown_fields_are_all_named_as_before(api_client):
    codes = codes_of(_post_raw(api_client, MEMORIES, write_body(**_unknown(50))))
    assert codes == {f"k{index:05d}": ["unknown_field"] for index in range(50)}


def test_a_query_string_of_999_unknown_parameters_names_the_first_50(api_client):
    query = "&".join(f"p{index:03d}=1" for index in range(999))
    response = api_client.get(f"{MEMORIES}?{query}&limit=0")
    codes = codes_of(response)
    assert list(codes) == [f"p{index:03d}" for index in range(50)] + [
        "limit",
        "non_field_errors",
    ]
    assert codes["limit"] == ["min_value"]
    assert messages_of(response)["non_field_errors"] == [
        "949 more unknown parameters were sent: an answer names the first 50."
    ]


def test_a_value_of_many_bad_strings_is_told_once(api_client):
    """Each string holding NUL was told: 60,000 of them answered 5.5 MB."""
    response = _post_raw(api_client, MEMORIES, write_body(value=["\u0000"] * 60_000))
    assert messages_of(response) == {"value": ["Null characters are not allowed."]}


def test_a_usage_report_of_too_many_ids_is_one_max_length_not_an_error_per_id(api_client):
    """DRF checks a list's items before its length: 60,000 numbers were 60,000 errors."""
    retrieved = api_client.post(
        "/api/v1/retrieve", {"query": "x", "context": {"user_id": "user-1"}}, format="json"
    )
    assert retrieved.status_code == 200, retrieved.content
    path = f"/api/v1/traces/{retrieved.json()['trace_id']}/usage"
    response = _post_raw(api_client, path, {"kind": "answer", "memory_ids": [1] * 60_000})
    assert error_of(response)["details"] == {
        "memory_ids": [
            {"code": "max_length", "message": "Ensure this field has no more than 100 elements."}
        ]
    }


# --- A refusal by a policy limit names the limit -----------------------------------------------


def _publish_limits(tenant, **admission):
    import copy

    from memory_core.policy_defaults import DEFAULT_POLICY
    from memory_core.services.policy import policy_publish

    document = copy.deepcopy(DEFAULT_POLICY)
    document["admission"].update(admission)
    policy_publish(tenant=tenant, document=document, note="limits for the test")


def test_content_over_the_policy_names_the_limit_and_a_replay_says_the_same(api_client, tenant):
    body = write_body(content="x" * 5000)
    response = api_client.post(MEMORIES, body, format="json", HTTP_IDEMPOTENCY_KEY="k-long")
    assert response.status_code == 422, response.content
    assert response.json()["rule_codes"] == ["fields.content_too_long"]
    message = "The content is longer than the tenant policy allows (4000 characters)."
    assert response.json()["message"] == message
    # A later, looser policy does not change what the first answer said.
    _publish_limits(tenant, max_content_chars=3000)
    replay = api_client.post(MEMORIES, body, format="json", HTTP_IDEMPOTENCY_KEY="k-long")
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.json()["message"] == message
    assert api_client.post(MEMORIES, body, format="json").json()["message"] == (
        "The content is longer than the tenant policy allows (3000 characters)."
    )


def test_a_key_and_a_value_over_the_policy_name_their_limits(api_client, tenant):
    _publish_limits(tenant, max_key_chars=10, max_value_bytes=64)
    items = [
        write_body(memory_key="k" * 11),
        write_body(memory_key="other", value={"text": "v" * 100}),
    ]
    results = api_client.post(BATCH, {"items": items}, format="json").json()["results"]
    assert [r["message"] for r in results] == [
        "The memory_key is longer than the tenant policy allows (10 characters).",
        "The structured value is larger than the tenant policy allows (64 bytes).",
    ]


# --- 415 says what to send ----------------------------------------------------------------------


def test_a_body_that_is_not_json_is_told_to_send_application_json(api_client):
    response = api_client.generic("POST", MEMORIES, b"hello", content_type="")
    error = error_of(response, 415)
    assert error["code"] == "unsupported_media_type"
    assert error["message"] == (
        "The request has no Content-Type: send the body as JSON, with "
        "Content-Type: application/json."
    )
    response = api_client.post(MEMORIES, "hello", content_type="text/plain")
    assert error_of(response, 415)["message"] == (
        "The body must be JSON, sent with Content-Type: application/json "
        '(this one was "text/plain").'
    )
    response = api_client.post(MEMORIES, {"subject": "u"})  # a form, as curl -d sends
    assert (
        'Content-Type: application/json (this one was "multipart/form-data'
        in (error_of(response, 415)["message"])
    )


# --- A trailing slash is named ------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/whoami/",
        "/api/v1/memories//",
        "/api/v1/memories/00000000-0000-0000-0000-000000000000/",
        "/api/v1/memories/batch/",
    ],
)
def test_a_path_with_a_trailing_slash_is_told_to_drop_it(api_client, path):
    response = api_client.get(path)
    error = error_of(response, 404)
    assert error["code"] == "not_found"
    assert error["message"] == f"No such endpoint; drop the trailing slash: {path.rstrip('/')}"


@pytest.mark.parametrize("path", ["/api/v1/nothing/", "/api/v1/memories/not-a-uuid/", "/api/"])
def test_a_path_that_matches_nothing_either_way_keeps_the_general_404(api_client, path):
    error = error_of(api_client.get(path), 404)
    assert error["message"].startswith(f"There is nothing at {path}: check the endpoint")


def test_the_reviewer_api_names_the_trailing_slash_to_a_reviewer(reviewer):
    error = error_of(reviewer.get("/api/v1/review/items/"), 404)
    assert error["message"] == "No such endpoint; drop the trailing slash: /api/v1/review/items"
