"""A sensitive fact stop 65's audit of admission found stored personal, confirmed through the
API (tests/memory_core/admission/test_bypasses_stop65_sensitive.py)."""

import pytest

from memory_core.models import Memory, Status

pytestmark = pytest.mark.django_db

URL = "/api/v1/memories"


def test_over_http_a_blood_type_waits_for_a_reviewer(api_client):
    """Stop 65's audit of admission: "User's blood type is O negative." was answered 201 and
    stored active and personal, readable by every agent capped at personal. It must be
    answered 202, waiting for a reviewer, nothing stored active."""
    content = "User's blood type is O negative."
    body = {
        "subject": "user-42",
        "memory_type": "user_preference",
        "memory_key": "profile.blood",
        "scope": "global",
        "content": content,
        "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"},
    }

    response = api_client.post(URL, body, format="json")

    assert response.status_code == 202, (response.status_code, response.json())
    assert not Memory.objects.filter(content=content, status=Status.ACTIVE).exists()
