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
