"""The deletion endpoints over HTTP: a body that does not say exactly what to delete is a 400."""

import pytest

from memory_core.models import DeletionOperation, Memory, Status
from tests.factories import write_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/deletions"


@pytest.fixture
def two_keys(api_client):
    for key in ("style.answers", "style.language"):
        body = write_body(memory_key=key, content=f"User prefers {key} to stay as agreed.")
        assert api_client.post("/api/v1/memories", body, format="json").status_code == 201
    return Memory.objects.filter(subject__external_id="user-1")


@pytest.mark.parametrize(
    "body, field",
    [
        ({"subject": "user-1", "memorykey": "style.answers"}, "memorykey"),  # a typo
        ({"subject": "user-1", "memory_key": "style.answers", "tenant": "t"}, "tenant"),
        ({"subject": "user-1", "dry_run": True}, "dry_run"),
    ],
)
def test_an_unknown_field_is_refused_and_nothing_is_deleted(api_client, two_keys, body, field):
    response = api_client.post(URL, body, format="json")
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert field in error["details"]
    assert not DeletionOperation.objects.exists()
    assert {memory.status for memory in two_keys} == {Status.ACTIVE}
