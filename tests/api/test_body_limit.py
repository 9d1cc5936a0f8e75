"""The API reads a body of declared length only (api/body_limit.py)."""

import json

import pytest

from memory_core.models import AdmissionDecision

pytestmark = pytest.mark.django_db

BODY = {
    "subject": "user-1",
    "memory_type": "user_preference",
    "scope": "global",
    "content": "Prefers short answers.",
    "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"},
}


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/memories", BODY),
        ("/api/v1/retrieve", {"query": "answers?", "context": {"user_id": "user-1"}}),
    ],
)
def test_a_chunked_body_is_411_not_a_body_read_as_empty(api_client, path, body):
    """A body sent with ``Transfer-Encoding: chunked`` and no Content-Length (a streaming
    client's) was read as empty: the answer said every field it held was ``required``."""
    response = api_client.generic(
        "POST",
        path,
        json.dumps(body),
        content_type="application/json",
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
    )
    assert response.status_code == 411, response.content
    error = response.json()["error"]
    assert error["code"] == "length_required"
    assert "Content-Length" in error["message"]
    assert not AdmissionDecision.objects.exists()


def test_a_request_whose_body_is_never_read_is_answered_as_before(api_client):
    response = api_client.get("/api/v1/whoami", CONTENT_LENGTH="", HTTP_TRANSFER_ENCODING="chunked")
    assert response.status_code == 200, response.content


def test_a_body_of_declared_length_is_read_as_before(api_client):
    response = api_client.post("/api/v1/memories", BODY, format="json")
    assert response.status_code == 201, response.content
