"""The OpenAPI schema lists the error answers each endpoint really gives (clients and the
fuzzer read it), and each is the one error body."""

import json

import pytest

pytestmark = pytest.mark.django_db

# A single write and a batch refuse alike.
WRITES = {"400", "401", "406", "409", "410", "411", "413", "415", "422", "429", "503"}
EXPECTED = {
    ("/api/v1/retrieve", "post"): {
        *("400", "401", "403", "406", "410", "411", "413", "415", "429", "503")
    },
    # A query string is refused where none is read (400), a GET's too, and a charset of no
    # text on any method (415; stop 61's audit of docs found the GETs' left out).
    ("/api/v1/traces/{trace_id}", "get"): {"400", "401", "404", "406", "415", "429", "503"},
    ("/api/v1/whoami", "get"): {"400", "401", "406", "415", "429", "503"},
    ("/api/v1/deletions", "get"): {"400", "401", "406", "415", "429", "503"},
    ("/api/v1/deletions", "post"): {
        *("400", "401", "403", "404", "406", "409", "411", "413", "415", "429", "503")
    },
    ("/api/v1/deletions/{operation_id}", "get"): {
        *("400", "401", "404", "406", "415", "429", "503")
    },
    ("/api/v1/memories", "post"): WRITES,
    ("/api/v1/memories/batch", "post"): WRITES,
    ("/api/v1/memories/{memory_id}", "delete"): {
        *("400", "401", "403", "404", "406", "409", "415", "429", "503")
    },
    ("/api/v1/subject-tokens", "post"): {
        *("400", "401", "403", "404", "406", "410", "411", "413", "415", "429", "503")
    },
}
# Every agent operation answers an Accept header that takes no JSON with 406.
REFUSES_HTML = [
    ("get", "/api/v1/whoami"),
    ("get", "/api/v1/memories"),
    ("post", "/api/v1/memories"),
    ("post", "/api/v1/memories/batch"),
    ("post", "/api/v1/retrieve"),
    ("get", "/api/v1/deletions"),
    ("post", "/api/v1/tasks/close"),
    ("post", "/api/v1/subject-tokens"),
]


@pytest.fixture
def schema(client):
    return client.get("/api/schema/", HTTP_ACCEPT="application/json").json()


@pytest.mark.parametrize(("path", "method"), sorted(EXPECTED))
def test_each_endpoint_lists_its_error_answers_in_the_error_shape(schema, path, method):
    responses = schema["paths"][path][method]["responses"]
    errors = {code for code in responses if code >= "400" and code != "422"}
    assert errors == EXPECTED[(path, method)] - {"422"}
    for code in errors:
        content = responses[code]["content"]["application/json"]["schema"]
        assert content == {"$ref": "#/components/schemas/ErrorBody"}, (path, method, code)
        assert responses[code]["description"]


def test_every_operation_that_reads_a_body_lists_the_refusals_of_one(schema):
    """A body that is not JSON (415) or has no Content-Length (411) is refused by every
    endpoint that reads one; no operation of the schema said so."""
    with_body = [
        (path, method, operation)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if isinstance(operation, dict) and "requestBody" in operation
    ]
    assert len(with_body) >= 10
    for path, method, operation in with_body:
        assert {"411", "413", "415"} <= set(operation["responses"]), (path, method)


@pytest.mark.parametrize(
    ("path", "method"),
    [
        ("/api/v1/review/items", "get"),
        ("/api/v1/review/items/{item_id}", "get"),
        ("/api/v1/review/items/{item_id}/approve", "post"),
    ],
)
def test_the_reviewer_api_lists_the_database_being_unavailable(schema, path, method):
    assert "503" in schema["paths"][path][method]["responses"]


@pytest.mark.parametrize(
    ("path", "method"),
    [
        ("/api/v1/review/items", "get"),
        ("/api/v1/review/items/{item_id}", "get"),
        ("/api/v1/review/items/{item_id}/approve", "post"),
        ("/api/v1/review/items/{item_id}/reject", "post"),
    ],
)
def test_the_reviewer_api_lists_a_keys_rate_limit_and_a_charset_of_no_text(schema, path, method):
    """Stop 61's audit of docs: an agent's key sent to the reviewer API is charged to its rate
    limit (429, since stop 58) and a charset of no text is 415 on any method, which the
    reviewer operations' answers left out; a body's 415 still says what a body may be."""
    responses = schema["paths"][path][method]["responses"]
    assert {"415", "429"} <= set(responses)
    assert "agent's API key" in responses["429"]["description"]
    if method == "post":
        assert "not application/json" in responses["415"]["description"]


@pytest.mark.parametrize(
    "path",
    ["/api/v1/memories", "/api/v1/memories/batch", "/api/v1/memories/{memory_id}/supersede"],
)
def test_the_writes_document_the_idempotency_key_and_its_422(schema, path):
    operation = schema["paths"][path]["post"]
    headers = [p for p in operation["parameters"] if p["in"] == "header"]
    assert [(p["name"], p.get("required", False)) for p in headers] == [
        ("Idempotency-Key", False),
        ("X-Memledger-Subject-Token", False),
    ]
    answer = operation["responses"]["422"]["content"]["application/json"]["schema"]
    if path.endswith("batch"):
        assert answer == {"$ref": "#/components/schemas/ErrorBody"}
    else:  # the admission's rejection, or a key used for another request
        assert answer == {"$ref": "#/components/schemas/RejectedWriteOrError"}
        variants = schema["components"]["schemas"]["RejectedWriteOrError"]["oneOf"]
        assert {"$ref": "#/components/schemas/ErrorBody"} in variants


def test_every_agent_operation_takes_the_subject_token_header_and_the_list_its_refusal(schema):
    """The header appeared nowhere in the schema: a generated client could not send it."""
    agent_operations = [
        (path, method, operation)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if any("ApiKey" in requirement for requirement in operation.get("security", []))
    ]
    assert len(agent_operations) >= 10
    for path, method, operation in agent_operations:
        headers = [p["name"] for p in operation.get("parameters", []) if p["in"] == "header"]
        assert "X-Memledger-Subject-Token" in headers, (path, method)
    listing = schema["paths"]["/api/v1/memories"]["get"]["responses"]
    assert "403" in listing  # a bound agent without its token, or naming another subject


def test_whoami_is_described_field_by_field_as_it_answers(schema, api_client):
    """The schema said only "an object" of the answer docs/api.md names field by field."""
    ref = schema["paths"]["/api/v1/whoami"]["get"]["responses"]["200"]["content"]
    name = ref["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    described = schema["components"]["schemas"][name]
    answer = api_client.get("/api/v1/whoami").json()
    assert set(described["properties"]) == set(answer)
    assert set(described["required"]) == set(answer)
    assert described["properties"]["subject"].get("nullable") is True


def test_a_subject_token_for_a_new_subject_of_a_tenant_deleted_meanwhile_is_a_listed_410(
    schema, api_client, agent, monkeypatch
):
    """A token for a new subject inserts the subject, which the database refuses once the
    tenant is deleted: the answer is 410 tenant_deleted, and the schema lists it."""
    from django.utils import timezone

    from api import subject_tokens as view_module
    from memory_core.models import Subject, Tenant

    agent.issues_subject_tokens = True
    agent.save(update_fields=["issues_subject_tokens"])
    real = view_module.subject_token_grant

    def raced(**kwargs):
        Tenant.objects.filter(pk=agent.tenant_id).update(deleted_at=timezone.now())
        return real(**kwargs)

    monkeypatch.setattr(view_module, "subject_token_grant", raced)
    response = api_client.post(
        "/api/v1/subject-tokens", {"agent": agent.name, "subject": "new-user"}, format="json"
    )
    assert response.status_code == 410, response.json()
    assert response.json()["error"]["code"] == "tenant_deleted"
    assert not Subject.objects.filter(external_id="new-user").exists()
    assert "410" in schema["paths"]["/api/v1/subject-tokens"]["post"]["responses"]


def test_the_memory_schema_says_which_words_agents_are_not_answered(schema):
    """A client reading ``content: ""`` must learn from the schema why: the write waits for a
    reviewer or one rejected it (``selectors.memories.WITHHELD_FIELDS``)."""
    from memory_core.selectors.memories import WITHHELD_FIELDS

    ref = schema["paths"]["/api/v1/memories/{memory_id}"]["get"]["responses"]["200"]["content"]
    detail = ref["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    memory = schema["components"]["schemas"][detail]["properties"]["memory"]
    fields = schema["components"]["schemas"][memory["$ref"].rsplit("/", 1)[-1]]
    for name in WITHHELD_FIELDS:
        described = fields["properties"][name]["description"]
        assert "pending_approval" in described and "rejected" in described, (name, described)


def test_a_batchs_items_are_bounded_as_the_api_bounds_them(schema, api_client):
    """drf-spectacular described no bounds of a batch's items: a client reading the schema
    could not know an empty batch, or one of 101 items, is refused (stop 52's audit)."""
    items = schema["components"]["schemas"]["MemoryBatchRequest"]["properties"]["items"]
    assert (items.get("minItems"), items.get("maxItems")) == (1, 100)
    for size, code in ((0, "min_length"), (101, "max_length")):
        body = {"items": [{"subject": "s"}] * size}
        answer = api_client.post("/api/v1/memories/batch", body, format="json")
        assert answer.status_code == 400
        assert answer.json()["error"]["details"]["items"][0]["code"] == code


def test_the_schema_honours_its_format_parameter_and_refuses_others(client):
    """``?format=json``, drf-spectacular's spelling and the URL the fuzzer loads, was ignored
    and answered YAML with a 200 (stop 56's audit of the API): it chooses the document's
    format now, as ``Accept`` does, and any other parameter, or another format, is a 400."""
    as_json = client.get("/api/schema/?format=json")
    assert as_json.status_code == 200
    assert "json" in as_json["Content-Type"], as_json["Content-Type"]
    assert json.loads(as_json.content)["openapi"].startswith("3.")
    as_yaml = client.get("/api/schema/?format=yaml", HTTP_ACCEPT="application/json")
    assert as_yaml.status_code == 200
    assert as_yaml["Content-Type"].startswith("application/vnd.oai.openapi;")  # YAML
    assert as_yaml.content.startswith(b"openapi: ")
    assert client.get("/api/schema/?lang=en").status_code == 200
    for query in ("format=xml", "format=api", "dry_run=1"):
        refused = client.get(f"/api/schema/?{query}")
        assert refused.status_code == 400, (query, refused.content[:200])
        [name] = refused.json()["error"]["details"]
        assert refused.json()["error"]["details"][name][0]["code"] == "unknown_field"


@pytest.mark.parametrize(("method", "path"), REFUSES_HTML)
def test_the_schema_lists_the_406_every_operation_answers(schema, api_client, method, path):
    """Stop 57's audit found the schema left out the ``406 not_acceptable`` every operation
    answers to an Accept header that takes no JSON (docs/api.md's error table): a client or
    fuzzer generated from it did not know the answer existed."""
    body = ({},) if method == "post" else ()
    answer = getattr(api_client, method)(path, *body, HTTP_ACCEPT="text/html", format="json")
    assert answer.status_code == 406
    assert answer.json()["error"]["code"] == "not_acceptable"
    assert "406" in schema["paths"][path][method]["responses"]
