"""Odd input a second audit at stop 48 found answered with a 500 or accepted as nothing: a
policy holding NaN or nested past Python's parser in the admin, and a reviewer's reason that
shows nothing (zero-width or bidi characters alone), which decided a write."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from memory_core.models import PolicyVersion, PortalMembership, ReviewItem
from tests.factories import write_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client():
    user = get_user_model().objects.create_superuser("root-odd", "r@example.com", "pw-12345!")
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    "document",
    [
        '{"note_extra": NaN}',
        '{"admission": {"x": Infinity}}',
        '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
    ids=["nan", "infinity", "nested-too-deep"],
)
def test_the_admins_policy_form_refuses_what_no_policy_holds(admin_client, tenant, document):
    """NaN under a key no check reads reached PostgreSQL's JSON (a DataError), and a document
    nested too deeply raised RecursionError through Django's JSONField: both were a 500."""
    before = PolicyVersion.objects.filter(tenant=tenant).count()
    response = admin_client.post(
        "/admin/memory_core/policyversion/add/",
        {"tenant": str(tenant.pk), "document": document, "note": "n"},
    )
    assert response.status_code == 200  # the form, shown again with its error
    assert PolicyVersion.objects.filter(tenant=tenant).count() == before


# The last, blank Braille cells, decided a write until stop 49 (its reviewer audit).
INVISIBLE = ["\u200b\u200b", "\u202e", "\u2060\u00ad", "\u2800\u2800\u2800"]


@pytest.fixture
def reviewer_login(tenant):
    user = get_user_model().objects.create_user("rev-odd", password="pw-rev-12345")
    PortalMembership.objects.create(user=user, tenant=tenant, role="reviewer")
    return user


@pytest.fixture
def waiting_item(api_client):
    body = write_body(memory_key="health.0", content="User is allergic to dust.")
    response = api_client.post("/api/v1/memories", body, format="json")
    assert response.status_code == 202, response.json()
    return response.json()["review_item"]


@pytest.mark.parametrize("reason", INVISIBLE)
def test_a_reviewers_reason_that_shows_nothing_decides_nothing(
    reviewer_login, waiting_item, reason
):
    api = APIClient()
    api.force_login(reviewer_login)
    path = f"/api/v1/review/items/{waiting_item}/approve"
    response = api.post(path, {"reason": reason}, format="json")
    assert response.status_code == 400, response.json()
    assert response.json()["error"]["code"] == "reason_invisible"
    portal = Client()
    portal.force_login(reviewer_login)
    portal.post(f"/portal/review/items/{waiting_item}/reject/", {"reason": reason})
    assert ReviewItem.objects.get(pk=waiting_item).state == "open"
