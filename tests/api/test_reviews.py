"""The reviewer API over HTTP: the queue pages like every list."""

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from memory_core.models import PortalMembership
from tests.factories import write_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/review/items"


@pytest.fixture
def reviewer(tenant):
    user = get_user_model().objects.create_user("reviewer", password="pw-rev-12345")
    PortalMembership.objects.create(user=user, tenant=tenant, role="reviewer")
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    return client


@pytest.fixture
def pending(api_client):
    """Two sensitive writes waiting for a reviewer; return their review item ids."""
    ids = []
    for index in range(2):
        content = f"User is allergic to dust {index}."
        body = write_body(memory_key=f"health.{index}", content=content)
        response = api_client.post("/api/v1/memories", body, format="json")
        assert response.status_code == 202, response.json()
        ids.append(response.json()["review_item"])
    return ids


def test_the_queue_pages_with_limit_and_offset_and_its_next_link_works(reviewer, pending):
    first = reviewer.get(URL, {"limit": 1})
    assert first.status_code == 200, first.json()
    page = first.json()
    assert page["count"] == 2 and [item["id"] for item in page["results"]] == pending[:1]
    assert "offset=1" in page["next"]
    second = reviewer.get(page["next"])
    assert second.status_code == 200, second.json()
    assert [item["id"] for item in second.json()["results"]] == pending[1:]
    assert second.json()["next"] is None
    filtered = reviewer.get(URL, {"state": "open", "kind": "sensitive_write", "offset": 1})
    assert [item["id"] for item in filtered.json()["results"]] == pending[1:]


@pytest.mark.parametrize(
    "query, field, code",
    [
        ({"limit": 0}, "limit", "min_value"),
        ({"limit": 101}, "limit", "max_value"),
        ({"offset": -1}, "offset", "min_value"),
        ({"limit": "abc"}, "limit", "invalid"),
        ({"page": 2}, "page", "unknown_field"),
    ],
)
def test_bad_paging_parameters_are_400(reviewer, query, field, code):
    response = reviewer.get(URL, query)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert [detail["code"] for detail in error["details"][field]] == [code]
