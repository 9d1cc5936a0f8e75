"""A JSON body's field takes only its own JSON type (api/fields.py, docs/api.md "Every error").

DRF's fields read "yes" and 1 as true, "5" and 5.0 as 5, "0.5" as 0.5 and 5 as "5": each is a
client bug that a loose reading hides (a revoke's ``reason: 5`` revoked the memory, a
deletion's ``subject: 5`` deleted subject "5"). Each wrong type is a 400 ``invalid_input``
naming the field with ``invalid`` and a sentence saying what it must be, and nothing is
stored. Query strings are text whatever they mean and keep reading "5" as 5.
"""

import copy
import json
import math

import pytest
from rest_framework import serializers

from api import fields
from memory_core.models import (
    AdmissionDecision,
    DeletionOperation,
    IdempotencyRecord,
    Memory,
    MemoryEvent,
    RetrievalTrace,
    ReviewItem,
    Subject,
    Tombstone,
)
from tests.factories import write_body

pytestmark = pytest.mark.django_db

CSRF = "a" * 32  # any well-formed token, sent as the cookie and the header

# Values of the wrong JSON type for a field of each type.
WRONG_STRINGS = [5, 1.5, True, ["x"], {"x": "y"}]
WRONG_BOOLEANS = ["true", "yes", "on", "1", 1, 0, 0.0]
WRONG_INTEGERS = ["5", 5.0, True, [5]]
WRONG_NUMBERS = ["0.5", True, False, [0.5]]


@pytest.fixture
def url_of(api_client, reviewer):
    """Return a function giving an endpoint's URL, after making through the API what the URL
    names (a memory, a retrieval trace, a pending review item)."""

    def made(name: str) -> str:
        if name == "memory_id":
            written = api_client.post("/api/v1/memories", write_body(), format="json")
            assert written.status_code == 201, written.json()
            return written.json()["memory"]["id"]
        if name == "trace_id":
            body = {"query": "answers", "context": {"user_id": "user-1"}}
            retrieved = api_client.post("/api/v1/retrieve", body, format="json")
            assert retrieved.status_code == 200, retrieved.json()
            return retrieved.json()["trace_id"]
        sensitive = write_body(memory_key="health.allergy", content="User is allergic to dust.")
        pending = api_client.post("/api/v1/memories", sensitive, format="json")
        assert pending.status_code == 202, pending.json()
        return pending.json()["review_item"]

    def url_of(endpoint: str) -> str:
        url = ENDPOINTS[endpoint][0]
        if endpoint == "delete":
            made("memory_id")  # the memory its body names
        names = [name for name in ("memory_id", "trace_id", "review_item") if f"{{{name}}}" in url]
        return url.format(**{name: made(name) for name in names})

    reviewer.cookies["csrftoken"] = CSRF
    return url_of


# Each endpoint: its URL (``url_of`` fills it in), a valid body, and the client to call it.
ENDPOINTS = {
    "write": ("/api/v1/memories", write_body(), "agent"),
    "batch": ("/api/v1/memories/batch", {"items": [write_body(memory_key="k.batch")]}, "agent"),
    "supersede": (
        "/api/v1/memories/{memory_id}/supersede",
        {
            "content": "User prefers very concise answers.",
            "source": {"type": "user_input", "conversation_id": "c-2", "message_id": "m-2"},
        },
        "agent",
    ),
    "revoke": ("/api/v1/memories/{memory_id}/revoke", {"reason": "Asked to."}, "agent"),
    "retrieve": (
        "/api/v1/retrieve",
        {"query": "answers", "context": {"user_id": "user-1"}, "budget": {"max_items": 5}},
        "agent",
    ),
    "usage": ("/api/v1/traces/{trace_id}/usage", {"kind": "answer", "memory_ids": []}, "agent"),
    "delete": ("/api/v1/deletions", {"subject": "user-1", "memory_key": "style.answers"}, "agent"),
    "close_task": ("/api/v1/tasks/close", {"user_id": "user-1", "task_id": "T-1"}, "agent"),
    "approve": ("/api/v1/review/items/{review_item}/approve", {"reason": "Checked."}, "reviewer"),
    "reject": ("/api/v1/review/items/{review_item}/reject", {"reason": "No."}, "reviewer"),
}

# (endpoint, dotted field path, the type the message names, the wrong values to send)
FIELDS = [
    ("write", "content", "a string", WRONG_STRINGS),
    ("write", "subject", "a string", [5, True]),
    ("write", "scope", "a string", [7]),
    ("write", "memory_key", "a string", [5]),
    ("write", "memory_type", "a string", [1, True]),
    ("write", "session_id", "a string", [3]),
    ("write", "source.type", "a string", [1]),
    ("write", "source.conversation_id", "a string", [5]),
    ("write", "confidence", "a finite number", WRONG_NUMBERS),
    ("write", "sensitivity", "a string", [2]),
    ("write", "valid_until", "ISO 8601", [1893456000, True]),
    ("batch", "items.0.content", "a string", [5]),
    ("batch", "items.0.confidence", "a finite number", ["0.5"]),
    ("supersede", "content", "a string", [5, False]),
    ("supersede", "confidence", "a finite number", ["1", True]),
    ("supersede", "reason", "a string", [5]),
    ("revoke", "reason", "a string", [5, True, 1.5]),
    ("retrieve", "query", "a string", [5, True]),
    ("retrieve", "intent", "a string", [1]),
    ("retrieve", "has_complete_context", "true or false", WRONG_BOOLEANS),
    ("retrieve", "context.user_id", "a string", [1, True]),
    ("retrieve", "context.project_id", "a string", [9]),
    ("retrieve", "budget.max_items", "an integer", WRONG_INTEGERS),
    ("retrieve", "budget.max_tokens", "an integer", ["500", 500.0]),
    ("retrieve", "budget.max_items_per_type", "an integer", [2.0, False]),
    ("usage", "kind", "a string", [1]),
    ("usage", "reference", "a string", [5, True]),
    ("delete", "subject", "a string", [5, True, 1.0]),
    ("delete", "memory_key", "a string", [5]),
    ("usage", "memory_ids.0", "an id (a UUID string)", [5, True, ["x"]]),
    ("close_task", "user_id", "a string", [5]),
    ("close_task", "task_id", "a string", [1, 1.5, True]),
    ("approve", "reason", "a string", [5, True]),
    ("reject", "reason", "a string", [5]),
]

CASES = [
    pytest.param(endpoint, path, expected, value, id=f"{endpoint}-{path}-{value!r}")
    for endpoint, path, expected, values in FIELDS
    for value in values
]


def with_value(body: dict, path: str, value) -> dict:
    """Return ``body`` with the field at dotted ``path`` set to ``value``."""
    body = copy.deepcopy(body)
    *parents, name = path.split(".")
    node = body
    for part in parents:
        if isinstance(node, list):
            node = node[int(part)]
        else:
            node = node.setdefault(part, {})
    if isinstance(node, list):  # an item of a list: ``memory_ids.0``
        node[int(name) :] = [value]
    else:
        node[name] = value
    return body


def stored_state() -> dict:
    """Return what a request could have stored or changed, to compare before and after."""
    return {
        "memories": sorted(Memory.objects.values_list("id", "status", "version", "valid_until")),
        "decisions": AdmissionDecision.objects.count(),
        "events": MemoryEvent.objects.count(),
        "subjects": Subject.objects.count(),
        "traces": sorted(
            (str(trace_id), repr(usage), repr(used))
            for trace_id, usage, used in RetrievalTrace.objects.values_list(
                "id", "usage", "used_ids"
            )
        ),
        "deletions": DeletionOperation.objects.count(),
        "tombstones": Tombstone.objects.count(),
        "review_items": sorted(ReviewItem.objects.values_list("id", "state")),
        "idempotency": IdempotencyRecord.objects.count(),
    }


def send(api_client, reviewer, url: str, endpoint: str, body):
    if ENDPOINTS[endpoint][2] == "reviewer":
        return reviewer.post(url, body, format="json", HTTP_X_CSRFTOKEN=CSRF)
    return api_client.post(url, body, format="json")


@pytest.mark.parametrize(("endpoint", "path", "expected", "value"), CASES)
def test_a_field_of_another_json_type_is_400_and_nothing_is_stored(
    api_client, reviewer, url_of, endpoint, path, expected, value
):
    url = url_of(endpoint)
    body = with_value(ENDPOINTS[endpoint][1], path, value)
    before = stored_state()
    response = send(api_client, reviewer, url, endpoint, body)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_input", error
    assert list(error["details"]) == [path], error
    (entry,) = error["details"][path]
    assert entry["code"] == "invalid", entry
    assert entry["message"].startswith("Must be ") and expected in entry["message"], entry
    assert stored_state() == before


@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
def test_each_endpoints_valid_body_is_accepted(api_client, reviewer, url_of, endpoint):
    """The control: the bodies above fail only for the wrong type they were given."""
    url = url_of(endpoint)
    response = send(api_client, reviewer, url, endpoint, ENDPOINTS[endpoint][1])
    assert response.status_code < 300, response.content


@pytest.mark.parametrize(
    ("endpoint", "path", "value"),
    [
        ("write", "confidence", 1),  # an integer is a number
        ("write", "confidence", 0.25),
        ("retrieve", "has_complete_context", True),
        ("retrieve", "has_complete_context", False),
        ("retrieve", "budget.max_tokens", 500),
        ("write", "valid_until", None),  # null where the field allows it
        ("write", "valid_until", "2999-01-01T00:00:00Z"),
    ],
)
def test_the_right_json_type_is_read(api_client, reviewer, url_of, endpoint, path, value):
    url = url_of(endpoint)
    body = with_value(ENDPOINTS[endpoint][1], path, value)
    response = send(api_client, reviewer, url, endpoint, body)
    assert response.status_code < 300, response.content


def test_every_wrong_field_of_a_body_is_named_at_once(api_client):
    body = write_body(content=5, confidence="0.5", subject=True)
    response = api_client.post("/api/v1/memories", body, format="json")
    assert response.status_code == 400
    details = response.json()["error"]["details"]
    assert {name: [e["code"] for e in entries] for name, entries in details.items()} == {
        "content": ["invalid"],
        "confidence": ["invalid"],
        "subject": ["invalid"],
    }
    assert details["confidence"][0]["message"] == "Must be a finite number, not a string."
    assert details["subject"][0]["message"] == "Must be a string, not a boolean."


@pytest.mark.parametrize(
    ("endpoint", "path", "value", "code", "message"),
    [
        ("usage", "memory_ids.0", 5, "invalid", "Must be an id (a UUID string), not an integer."),
        ("usage", "memory_ids.0", 1.5, "invalid", "Must be an id (a UUID string), not a number "
         "with a fraction or an exponent."),
        ("usage", "memory_ids", "3f1c8a52-0d4e-4d7b-9a8e-2b1f6c0e9a11", "not_a_list",
         "Must be an array of ids (UUID strings), not a string."),
        ("usage", "memory_ids", {"id": 1}, "not_a_list",
         "Must be an array of ids (UUID strings), not an object."),
        ("usage", "memory_ids", 7, "not_a_list",
         "Must be an array of ids (UUID strings), not an integer."),
    ],
)  # fmt: skip
def test_an_id_or_a_list_of_another_type_is_named_by_the_type_sent(
    api_client, reviewer, url_of, endpoint, path, value, code, message
):
    """A UUID field said "Must be a valid UUID." to a number, as if it were a string spelt
    wrong, and a list field "Expected a list of items but got type "str".", naming Python's
    type: each now names the JSON type sent, as every other field does."""
    url = url_of(endpoint)
    before = stored_state()
    body = with_value(ENDPOINTS[endpoint][1], path, value)
    response = send(api_client, reviewer, url, endpoint, body)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["details"] == {path: [{"code": code, "message": message}]}
    assert stored_state() == before


def test_a_deletions_memory_id_of_another_type_names_it(api_client):
    for value, sent in ((5, "an integer"), (True, "a boolean"), (["x"], "an array")):
        response = api_client.post("/api/v1/deletions", {"memory_id": value}, format="json")
        assert response.status_code == 400, response.content
        message = f"Must be an id (a UUID string), not {sent}."
        assert response.json()["error"]["details"] == {
            "memory_id": [{"code": "invalid", "message": message}]
        }
    assert not DeletionOperation.objects.exists()


def test_query_string_numbers_still_read_as_numbers(api_client, url_of):
    """A query string is text: ``?limit=1`` and ``?offset=0`` keep working (api.pagination)."""
    url_of("revoke")  # a memory to list
    response = api_client.get("/api/v1/memories", {"limit": "1", "offset": "0"})
    assert response.status_code == 200, response.json()
    assert len(response.json()["results"]) == 1


# --- The fields alone ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (fields.StrictFloatField(), math.nan, "Must be a finite number, not NaN or an infinity."),
        (fields.StrictFloatField(), math.inf, "Must be a finite number, not NaN or an infinity."),
        (fields.StrictIntegerField(), 5.0, "Must be an integer, not a number with a fraction "
         "or an exponent."),
        (fields.StrictIntegerField(), True, "Must be an integer, not a boolean."),
        (fields.StrictBooleanField(), "false", "Must be true or false, not a string."),
        (fields.StrictCharField(), None, "This field may not be null."),  # null stays `null`
        (fields.StrictCharField(), {"a": 1}, "Must be a string, not an object."),
        (fields.StrictChoiceField(choices=["1", "2"]), 1, "Must be a string, not an integer."),
    ],
)  # fmt: skip
def test_a_strict_field_names_the_type_it_wants_and_the_type_it_got(field, value, message):
    with pytest.raises(serializers.ValidationError) as raised:
        field.run_validation(value)
    assert [str(detail) for detail in raised.value.detail] == [message]


def test_a_strict_field_keeps_the_checks_of_its_drf_field():
    with pytest.raises(serializers.ValidationError) as raised:
        fields.StrictIntegerField(max_value=3).run_validation(4)
    assert raised.value.detail[0].code == "max_value"
    with pytest.raises(serializers.ValidationError) as raised:
        fields.StrictCharField(max_length=2).run_validation("abc")
    assert raised.value.detail[0].code == "max_length"
    assert fields.StrictFloatField().run_validation(1) == 1.0
    assert fields.StrictChoiceField(choices=["1", "2"]).run_validation("1") == "1"


@pytest.mark.parametrize(
    ("digits", "code"), [("1" * 400, "max_value"), ("-" + "1" * 400, "min_value")]
)
def test_an_integer_confidence_beyond_a_floats_range_is_out_of_bounds(api_client, digits, code):
    """Stop 60's audit of bad input to the API found that a ``confidence`` sent as a JSON
    integer of 400 digits (valid JSON, read as a Python int) was answered ``overflow``,
    "Integer value too large to convert to float", where ``2`` or ``10**30`` is ``max_value``:
    ``StrictFloatField`` handed any integer to DRF's ``FloatField``, whose ``float()``
    overflowed before the bounds were compared. It should be ``max_value`` (``min_value`` below
    0), as any other confidence out of 0 to 1, and nothing stored."""
    text = json.dumps(write_body(memory_key="k.huge"))[:-1] + f', "confidence": {digits}}}'
    response = api_client.post("/api/v1/memories", data=text, content_type="application/json")
    assert response.status_code == 400, response.content
    details = response.json()["error"]["details"]
    assert [entry["code"] for entry in details["confidence"]] == [code], details
    assert not Memory.objects.filter(memory_key="k.huge").exists()


# --- The schema shows the JSON types --------------------------------------------------------


@pytest.fixture
def components(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    return schema["components"]["schemas"]


@pytest.mark.parametrize(
    ("component", "field", "expected"),
    [
        ("RetrieveInputRequest", "has_complete_context", {"type": "boolean"}),
        ("RetrieveInputRequest", "query", {"type": "string"}),
        ("BudgetInputRequest", "max_items", {"type": "integer", "minimum": 1, "maximum": 100}),
        ("MemoryWriteRequest", "confidence", {"type": "number", "format": "double"}),
        ("MemoryWriteRequest", "content", {"type": "string"}),
        ("MemoryWriteRequest", "valid_until", {"type": "string", "format": "date-time"}),
        ("MemoryWriteRequest", "subject", {"type": "string", "maxLength": 200}),
        ("SourceRequest", "conversation_id", {"type": "string"}),
        ("DeletionInputRequest", "subject", {"type": "string"}),
        ("TaskCloseInputRequest", "task_id", {"type": "string"}),
        ("RevokeRequest", "reason", {"type": "string"}),
        ("ReviewDecisionRequest", "reason", {"type": "string"}),
        ("TraceUsageInputRequest", "reference", {"type": "string"}),
    ],
)
def test_the_schema_gives_each_strict_field_its_json_type(components, component, field, expected):
    prop = components[component]["properties"][field]
    # An id that may be blank (a usage report's reference) is one of two strings: an id
    # (its pattern) or "" (``maxLength: 0``); each is a string.
    for alternative in prop.get("oneOf", [prop]):
        assert expected.items() <= alternative.items(), prop


@pytest.mark.parametrize(
    ("component", "field"),
    [
        ("MemoryWriteRequest", "memory_type"),
        ("SourceRequest", "type"),
        ("TraceUsageInputRequest", "kind"),
    ],
)
def test_the_schema_keeps_each_strict_choice_an_enum(components, component, field):
    ref = components[component]["properties"][field]
    name = (ref.get("$ref") or ref["allOf"][0]["$ref"]).rsplit("/", 1)[1]
    assert components[name]["type"] == "string" and components[name]["enum"]
