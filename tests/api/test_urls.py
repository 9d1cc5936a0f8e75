"""The API's paths (api/urls.py): an id in a path is a UUID in either case."""

import pytest

from tests.factories import write_body

pytestmark = pytest.mark.django_db


def test_an_upper_case_id_in_a_path_names_the_same_memory(api_client):
    """UUIDs are case-insensitive on input (RFC 9562), and a body's UUID fields take either
    case: a path's upper-case id was a 404 that said "check ... that the ids in the path are
    UUIDs"."""
    written = api_client.post("/api/v1/memories", write_body(), format="json").json()
    memory_id = written["memory"]["id"]
    response = api_client.get(f"/api/v1/memories/{memory_id.upper()}")
    assert response.status_code == 200, response.json()
    assert response.json()["memory"]["id"] == memory_id
    revoked = api_client.post(f"/api/v1/memories/{memory_id.upper()}/revoke", {}, format="json")
    assert revoked.status_code == 200, revoked.json()


def test_the_schema_still_says_a_path_id_is_a_uuid(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path":
                    assert parameter["schema"] == {"type": "string", "format": "uuid"}, path


@pytest.mark.parametrize("path", ["/api/schema", "/api/docs"])
@pytest.mark.parametrize("debug", [False, True])
def test_the_schema_and_docs_without_their_slash(client, settings, path, debug):
    """A GET or HEAD is redirected to the slashed path (query kept); any other method is the
    JSON 405 of the slashed path. A body sent there was, under DEBUG, Django's HTML page
    (APPEND_SLASH refuses to redirect a POST), though docs/api.md promises JSON."""
    settings.DEBUG = debug
    client.raise_request_exception = False
    for method in ("get", "head"):
        response = getattr(client, method)(path, {"format": "json"})
        assert response.status_code == 301
        assert response["Location"] == f"{path}/?format=json"
    for method in ("post", "put", "patch", "delete"):
        response = getattr(client, method)(path, {}, content_type="application/json")
        assert response.status_code == 405, (method, response.content[:200])
        assert response["Content-Type"] == "application/json"
        assert response.json()["error"]["code"] == "method_not_allowed"
        assert "X-Request-ID" in response
        assert [m.strip() for m in response["Allow"].split(",")] == ["GET", "HEAD", "OPTIONS"]


@pytest.mark.parametrize("path", ["/api/schema/", "/api/docs/"])
def test_the_schema_and_docs_answer_what_is_not_their_document_in_json(client, path):
    """Through the pages' own renderers, a method they lack was Django's text/html "405 Method
    Not Allowed" on the docs page and the envelope in YAML on the schema, and OPTIONS on the
    docs page a 500 (its template rendered without its names; a finding of stop 47's audit).
    Their documents are unchanged."""
    client.raise_request_exception = False
    for method in ("post", "put", "patch", "delete"):
        response = getattr(client, method)(path, {}, content_type="application/json")
        assert response.status_code == 405, (method, response.content[:200])
        assert response["Content-Type"] == "application/json", response.content[:200]
        assert response.json()["error"]["code"] == "method_not_allowed"
    options = client.options(path)
    assert options.status_code == 200, options.content[:300]
    assert options.json() == {"methods": ["GET", "HEAD", "OPTIONS"], "schema": "/api/schema/"}
    page = client.get(path)
    assert page.status_code == 200
    expected = "text/html" if path == "/api/docs/" else "application/vnd.oai.openapi"
    assert page["Content-Type"].startswith(expected), page["Content-Type"]
    assert client.get("/api/schema/", HTTP_ACCEPT="application/json").json()["openapi"]
