"""Who may open which portal page: login required, membership required, role required."""

import uuid

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

# Fixed, so that every pytest-xdist worker collects the same test ids.
ANY_ID = uuid.UUID("7d3f1c2a-5b6e-4f80-9a1d-2c4e6b8f0a13")

END_USER_GET = [
    reverse("portal:home"),
    reverse("portal:memory", args=[ANY_ID]),
    reverse("portal:memory-correct", args=[ANY_ID]),
    reverse("portal:memory-delete", args=[ANY_ID]),
    reverse("portal:memory-revoke", args=[ANY_ID]),
    reverse("portal:memory-withdraw", args=[ANY_ID]),
    reverse("portal:delete-everything"),
    reverse("portal:deletions"),
    reverse("portal:deletion", args=[ANY_ID]),
    reverse("portal:deletion-status", args=[ANY_ID]),
    reverse("portal:export"),
]
END_USER_POST = [
    reverse("portal:memory-revoke", args=[ANY_ID]),
    reverse("portal:memory-withdraw", args=[ANY_ID]),
]
REVIEWER_GET = [
    reverse("portal:review:queue"),
    reverse("portal:review:conflicts"),
    reverse("portal:review:rejected"),
    reverse("portal:review:deletions"),
    reverse("portal:review:health"),
]
REVIEWER_POST = [
    reverse("portal:review:approve", args=[ANY_ID]),
    reverse("portal:review:reject", args=[ANY_ID]),
    reverse("portal:review:resolve", args=[ANY_ID]),
    reverse("portal:review:deletion-retry", args=[ANY_ID]),
]


@pytest.mark.parametrize("url", END_USER_GET + REVIEWER_GET)
def test_pages_require_login(client, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("url", END_USER_POST + REVIEWER_POST)
def test_actions_require_login(client, url):
    response = client.post(url, {"reason": "x"})
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("url", END_USER_GET + REVIEWER_GET)
def test_login_without_membership_gets_a_clear_403(client, no_membership, url):
    client.force_login(no_membership)
    response = client.get(url)
    assert response.status_code == 403
    assert b"not linked to anyone" in response.content


@pytest.mark.parametrize("url", REVIEWER_GET)
def test_reviewer_pages_refuse_end_users(alice_client, url):
    response = alice_client.get(url)
    assert response.status_code == 403
    assert b"Only the reviewers" in response.content


@pytest.mark.parametrize("url", REVIEWER_POST)
def test_reviewer_actions_refuse_end_users(alice_client, url):
    response = alice_client.post(url, {"reason": "x", "outcome": "ask_user"})
    assert response.status_code == 403


@pytest.mark.parametrize("url", END_USER_GET[1:])
def test_end_user_pages_refuse_reviewers(reviewer_client, url):
    assert reviewer_client.get(url).status_code == 403


def test_portal_home_sends_reviewers_to_their_queue(reviewer_client):
    response = reviewer_client.get(reverse("portal:home"))
    assert response.status_code == 302
    assert response["Location"] == reverse("portal:review:queue")


def test_login_page_logs_in_and_logout_is_post_only(client, alice):
    page = client.get(reverse("login"))
    assert page.status_code == 200
    assert b'name="csrfmiddlewaretoken"' in page.content
    response = client.post(
        reverse("login"), {"username": "alice", "password": "portal-test-password"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/portal/"
    assert client.get(reverse("portal:home")).status_code == 200
    assert client.get(reverse("logout")).status_code == 405
    assert client.post(reverse("logout")).status_code == 302
    assert client.get(reverse("portal:home")).status_code == 302


def test_wrong_password_shows_an_error(client, alice):
    response = client.post(reverse("login"), {"username": "alice", "password": "nope"})
    assert response.status_code == 200
    assert b"didn't match" in response.content


def test_forms_carry_csrf_tokens(alice_client, alice_memory):
    for url in (
        reverse("portal:memory", args=[alice_memory.pk]),
        reverse("portal:memory-correct", args=[alice_memory.pk]),
        reverse("portal:memory-delete", args=[alice_memory.pk]),
        reverse("portal:delete-everything"),
        reverse("portal:export"),
    ):
        assert b'name="csrfmiddlewaretoken"' in alice_client.get(url).content, url


def test_csrf_is_enforced(alice, alice_memory):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post(reverse("portal:memory-revoke", args=[alice_memory.pk]))
    assert response.status_code == 403


def test_no_portal_page_may_be_kept_by_a_browser_or_proxy(alice_client, alice_memory):
    for url in (reverse("portal:home"), reverse("portal:memory", args=[alice_memory.id])):
        response = alice_client.get(url)
        assert response.status_code == 200
        assert "no-store" in response["Cache-Control"], url
        assert "private" in response["Cache-Control"], url
