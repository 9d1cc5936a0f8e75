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


@pytest.mark.parametrize("query", ["limit=5", "subject=user-1", "status=completed", "bogus=1"])
def test_the_list_refuses_a_query_parameter_rather_than_ignoring_it(api_client, two_keys, query):
    """The list takes no parameters: ``?limit=5`` answered up to 100 operations and
    ``?subject=`` every subject's, as if the parameter had been applied."""
    assert api_client.post(URL, {"subject": "user-1"}, format="json").status_code == 202
    response = api_client.get(f"{URL}?{query}")
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert error["message"].startswith("The query string is invalid")
    name = query.split("=")[0]
    assert [item["code"] for item in error["details"][name]] == ["unknown_field"]
    assert len(api_client.get(URL).json()["results"]) == 1
