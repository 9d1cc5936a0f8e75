"""Every API error has one shape, whichever endpoint answers it (docs/api.md, "Every error")."""

import pytest
from rest_framework.test import APIClient

from api.exceptions import error_details
from tests.factories import write_body

pytestmark = pytest.mark.django_db

RETRIEVE = "/api/v1/retrieve"
DELETIONS = "/api/v1/deletions"
REQUIRED_WRITE_FIELDS = ("subject", "memory_type", "scope", "content", "source")


def details_of(response) -> dict:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    details = error["details"]
    for field, entries in details.items():  # {"field.sub": [{"code", "message"}]}
        assert isinstance(field, str) and entries, details
        for entry in entries:
            assert set(entry) == {"code", "message"}, details
            assert isinstance(entry["code"], str) and isinstance(entry["message"], str)
    return {field: [entry["code"] for entry in entries] for field, entries in details.items()}


@pytest.mark.parametrize(
    "url, body, expected",
    [
        (RETRIEVE, {"query": "x"}, {"context": ["required"]}),
        (
            RETRIEVE,
            {"query": "x", "context": {"user_id": "u", "bogus": 1}},
            {"context.bogus": ["unknown_field"]},
        ),
        (
            RETRIEVE,
            {"query": "x" * 4001, "context": {"user_id": ""}},
            {"query": ["max_length"], "context.user_id": ["blank"]},
        ),
        (RETRIEVE, {"query": "x", "context": None}, {"context": ["null"]}),
        (RETRIEVE, [], {"non_field_errors": ["invalid"]}),
        (DELETIONS, {}, {"non_field_errors": ["invalid"]}),
        (DELETIONS, {"memory_id": "not-a-uuid"}, {"memory_id": ["invalid"]}),
        (DELETIONS, {"subject": "user-1", "memorykey": "k"}, {"memorykey": ["unknown_field"]}),
        (DELETIONS, {"subject": "a\x00b"}, {"subject": ["null_characters_not_allowed"]}),
        (
            "/api/v1/memories",
            {"items": 1},
            {
                "items": ["unknown_field"],
                **{name: ["required"] for name in REQUIRED_WRITE_FIELDS},
            },
        ),
        (
            "/api/v1/memories",
            write_body(source={"type": "rumour", "conversation_id": "c", "message_id": "m"}),
            {"source.type": ["invalid_choice"]},
        ),
        ("/api/v1/memories/batch", {"items": [{}, "x"]}, None),
    ],
)
def test_a_400_names_each_field_with_code_and_message_on_every_endpoint(
    api_client, url, body, expected
):
    codes = details_of(api_client.post(url, body, format="json"))
    if expected is not None:
        assert codes == expected
    else:
        assert codes["items.0.content"] == ["required"]
        assert codes["items.1"] == ["invalid"]


def test_the_flattening_keeps_every_error_and_its_code():
    from rest_framework.exceptions import ErrorDetail, ValidationError

    nested = ValidationError(
        {
            "context": {"bogus": [ErrorDetail("Unknown field.", code="unknown_field")]},
            "items": [{}, {"source": {"type": [ErrorDetail("Bad.", code="invalid_choice")]}}],
            "tags": {0: [ErrorDetail("Not a string.", code="invalid")]},
            "single": ErrorDetail("One error, not in a list.", code="odd"),
        }
    ).detail
    assert error_details(nested) == {
        "context.bogus": [{"code": "unknown_field", "message": "Unknown field."}],
        "items.1.source.type": [{"code": "invalid_choice", "message": "Bad."}],
        "tags.0": [{"code": "invalid", "message": "Not a string."}],
        "single": [{"code": "odd", "message": "One error, not in a list."}],
    }
    # A nested object's own errors (DRF keys them non_field_errors) are keyed by its path.
    whole = ValidationError(
        {"source": {"non_field_errors": [ErrorDetail("Must be an object.", code="invalid")]}}
    ).detail
    assert error_details(whole) == {
        "source": [{"code": "invalid", "message": "Must be an object."}]
    }
    assert error_details(ValidationError("Whole body.").detail) == {
        "non_field_errors": [{"code": "invalid", "message": "Whole body."}]
    }


def test_a_method_the_endpoint_lacks_is_405_and_a_format_it_lacks_is_406(api_client):
    response = api_client.put("/api/v1/memories", {}, format="json")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert {"GET", "POST"} <= {method.strip() for method in response["Allow"].split(",")}
    response = api_client.get("/api/v1/whoami", HTTP_ACCEPT="text/html")
    assert response.status_code == 406
    assert response.json()["error"]["code"] == "not_acceptable"


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize(
    "body, content_type",
    [("not json", "application/json"), ("items=1", "text/plain")],
    ids=["malformed_json", "not_json"],
)
def test_a_method_the_batch_endpoint_lacks_is_405_whatever_its_body(
    api_client, method, body, content_type
):
    """Stop 59's audit of bad input found ``PUT``, ``PATCH`` or ``DELETE
    /api/v1/memories/batch`` with a body that is not JSON answered 400 ``malformed_json`` or
    415: the write quota priced the request by reading its body (``items_cost``) before the
    method was looked at. It should be 405, ``Allow: POST, OPTIONS``, as on every endpoint."""
    response = api_client.generic(method, "/api/v1/memories/batch", body, content_type=content_type)
    assert (response.status_code, response.json()["error"]["code"]) == (
        405,
        "method_not_allowed",
    )
    assert response["Allow"] == "POST, OPTIONS"


@pytest.mark.parametrize(
    ("accept", "status"),
    [
        ("application/json;q=0", 406),
        ("application/json;q=0, text/html", 406),
        ("*/*;q=0", 406),
        ("application/json;q=0, */*", 406),  # the more specific range decides
        ("*/*;q=0, application/json", 200),
        ("text/html, application/json;q=0.1", 200),
        ("application/json;q=abc", 200),  # a quality that is no number refuses nothing
    ],
)
def test_a_quality_of_0_refuses_a_format(api_client, accept, status):
    """``Accept: application/json;q=0`` refuses JSON (RFC 9110, 12.4.2) and was answered
    JSON: DRF's negotiation ignores quality values (stop 49's API audit)."""
    response = api_client.get("/api/v1/whoami", HTTP_ACCEPT=accept)
    assert response.status_code == status, response.content[:200]
    if status == 406:
        assert response.json()["error"]["code"] == "not_acceptable"


def test_a_406_and_a_missing_key_say_what_to_send(db, api_client):
    """They said "Could not satisfy the request Accept header." and "Authentication
    credentials were not provided.", naming neither the format nor the header."""
    error = api_client.get("/api/v1/whoami", HTTP_ACCEPT="text/html").json()["error"]
    assert "application/json" in error["message"] and "text/html" in error["message"]
    error = APIClient().get("/api/v1/whoami").json()["error"]
    assert error["code"] == "not_authenticated"
    assert "Authorization: Bearer <api key>" in error["message"]


@pytest.mark.parametrize(
    ("path", "methods"),
    [
        ("/api/v1/memories", ["GET", "POST", "HEAD", "OPTIONS"]),
        ("/api/v1/retrieve", ["POST", "OPTIONS"]),
        (
            "/api/v1/memories/00000000-0000-0000-0000-000000000000",
            ["GET", "DELETE", "HEAD", "OPTIONS"],
        ),
    ],
)
def test_options_names_the_methods_and_the_schema_and_nothing_else(api_client, path, methods):
    """The schema is the one contract: OPTIONS publishes no docstring and no field list."""
    response = api_client.options(path)
    assert response.status_code == 200
    assert response.json() == {"methods": methods, "schema": "/api/schema/"}
    assert [method.strip() for method in response["Allow"].split(",")] == methods


def test_a_503_logs_the_database_error_behind_it(caplog):
    """The client gets the stable code; the operator must see the cause (a deadlock here)."""
    from django.db import OperationalError

    from api.exceptions import exception_handler

    with caplog.at_level("WARNING", logger="api.exceptions"):
        response = exception_handler(OperationalError("deadlock detected"), {})
    assert response.status_code == 503
    assert response.data["error"]["code"] == "memory_unavailable"
    assert "deadlock detected" in caplog.text


@pytest.mark.parametrize("status", [403, 404, 409, 503])
def test_a_refused_request_changes_nothing_its_view_wrote_before_the_refusal(status):
    """A domain error answered a 4xx or a 503 and committed the request's transaction
    (ATOMIC_REQUESTS): whatever the view wrote before the service refused stayed."""
    from django.db import transaction

    from api.exceptions import exception_handler
    from memory_core.exceptions import DomainError
    from memory_core.models import Tenant

    refusal = DomainError("refused", code="refused")
    refusal.status = status
    with transaction.atomic():
        Tenant.objects.create(slug="written-before-the-refusal", name="x")
        response = exception_handler(refusal, {})
        assert response.status_code == status
        assert transaction.get_rollback()
    assert not Tenant.objects.filter(slug="written-before-the-refusal").exists()


def test_a_query_string_on_an_endpoint_that_reads_none_is_unknown_field(api_client, reviewer):
    """Only the lists read a query string; every other endpoint ignored one, so
    ``POST /api/v1/memories?dry_run=1`` stored the memory and ``?format=api`` answered as if
    honoured. Each parameter is now ``unknown_field``, and nothing is stored."""
    from memory_core.models import DeletionOperation, Memory

    memory = api_client.post("/api/v1/memories", write_body(), format="json").json()["memory"]
    url = f"/api/v1/memories/{memory['id']}"
    retrieve = {"query": "answers", "context": {"user_id": "user-1"}}
    before = (Memory.objects.count(), DeletionOperation.objects.count())
    answers = [
        api_client.get("/api/v1/whoami?format=api&b=1&a="),
        api_client.post("/api/v1/memories?dry_run=1&b=1&a=", write_body(), format="json"),
        api_client.post("/api/v1/memories/batch?a=&b=1", {"items": [write_body()]}, format="json"),
        api_client.get(f"{url}?a=&b=1"),
        api_client.delete(f"{url}?a=&b=1"),
        api_client.post(f"{url}/revoke?a=&b=1", {}, format="json"),
        api_client.post(RETRIEVE + "?a=&b=1", retrieve, format="json"),
        api_client.post(DELETIONS + "?a=&b=1", {"subject": "user-1"}, format="json"),
        api_client.post(
            "/api/v1/tasks/close?a=&b=1", {"user_id": "user-1", "task_id": "t"}, format="json"
        ),
        reviewer.get("/api/v1/review/items/3f1c8a52-0d4e-4d7b-9a8e-2b1f6c0e9a11?a=&b=1"),
    ]
    for response in answers:
        assert response.status_code == 400, (response.request["PATH_INFO"], response.content)
        error = response.json()["error"]
        assert error["message"].startswith("The query string is invalid"), error
        names = sorted(error["details"])
        assert names in (["a", "b"], ["a", "b", "format"], ["a", "b", "dry_run"]), error
        assert {e["code"] for entries in error["details"].values() for e in entries} == {
            "unknown_field"
        }
    assert (Memory.objects.count(), DeletionOperation.objects.count()) == before


def test_a_query_string_still_reaches_the_lists_and_a_wrong_method_is_405_first(api_client):
    listed = api_client.get("/api/v1/memories?limit=1")
    assert listed.status_code == 200, listed.content
    assert api_client.get(DELETIONS).status_code == 200
    assert details_of(api_client.get(DELETIONS + "?limit=5")) == {"limit": ["unknown_field"]}
    for method, url in (("put", "/api/v1/memories"), ("post", "/api/v1/whoami")):
        response = getattr(api_client, method)(url + "?a=1", {}, format="json")
        assert response.status_code == 405, response.content
    assert APIClient().get("/api/v1/whoami?a=1").status_code == 401  # a key first, as a body


def test_a_query_string_of_too_many_parameters_is_read_after_the_key_and_the_method(api_client):
    """Stop 61's audit of API input: a query string of more than 1,000 parameters is
    checked where any other is, after the key (no key is 401 ``not_authenticated``) and the
    method (one the endpoint lacks is 405 ``method_not_allowed``). It was 400
    ``too_many_parameters`` before either: content negotiation, which runs before
    authentication, parsed the query string looking for a format parameter."""
    too_many = "&".join(f"p{i}=1" for i in range(1001))
    no_key = APIClient().get(f"/api/v1/whoami?{too_many}")
    assert (no_key.status_code, no_key.json()["error"]["code"]) == (401, "not_authenticated")
    for method, url in (("put", "/api/v1/memories"), ("post", "/api/v1/whoami")):
        response = getattr(api_client, method)(f"{url}?{too_many}", {}, format="json")
        assert response.status_code == 405, response.content
        assert response.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/memories",
        "/api/v1/memories/batch",
        RETRIEVE,
        DELETIONS,
        "/api/v1/tasks/close",
        "/api/v1/subject-tokens",
    ],
)
def test_a_body_of_literal_null_says_it_must_be_an_object(api_client, url):
    """DRF answered "No data provided", as if nothing had been sent."""
    from memory_core.models import Memory

    response = api_client.generic("POST", url, "null", content_type="application/json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert error["details"] == {
        "non_field_errors": [
            {"code": "null", "message": "The body must be a JSON object, not null."}
        ]
    }
    assert not Memory.objects.exists()


def test_a_nested_null_is_still_its_fields_error(api_client):
    body = {"query": "x", "context": None}
    assert details_of(api_client.post(RETRIEVE, body, format="json")) == {"context": ["null"]}
