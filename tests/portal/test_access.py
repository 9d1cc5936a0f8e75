"""Who may open which portal page: login required, membership required, role required."""

import uuid
from urllib.parse import parse_qs, urlparse

import pytest
from django.urls import reverse

from memory_core.models import DeletionOperation, ReviewItem
from tests.factories import MemoryFactory, pending_write_on

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


def _login_next(client, url: str, body: dict) -> str:
    """Send ``url`` without a session (it ended: SESSION_COOKIE_AGE, a restart) and return
    the login page's ``next``: the address the browser opens once logged in again."""
    response = client.post(url, body)
    assert response.status_code == 302
    location = urlparse(response["Location"])
    assert location.path == reverse("login")
    return parse_qs(location.query)["next"][0]


def _reviewer_actions(subject) -> list[tuple[str, str, object]]:
    """(an action's URL, the page it lives on, its row) for each reviewer action: a write's
    approval and rejection (sent from page 2 of the queue), a conflict's resolution, a dead
    letter's retry."""
    write = pending_write_on(MemoryFactory(subject=subject, memory_key="diet"), "Has diabetes.")
    rivals = [MemoryFactory(subject=subject, memory_key="deploy.region") for _ in range(2)]
    conflict = ReviewItem.objects.create(
        tenant=subject.tenant,
        subject=subject,
        kind="conflict",
        memory_key="deploy.region",
        candidate_ids=[rival.pk for rival in rivals],
    )
    failed = DeletionOperation.objects.create(
        tenant=subject.tenant, subject=subject, target="memory", status="failed"
    )
    queue = reverse("portal:review:queue")
    approve = reverse("portal:review:approve", args=[write.pk])
    return [
        (f"{approve}?page=2", f"{queue}?page=2", write),
        (reverse("portal:review:reject", args=[write.pk]), queue, write),
        (
            reverse("portal:review:resolve", args=[conflict.pk]),
            reverse("portal:review:conflicts"),
            conflict,
        ),
        (
            reverse("portal:review:deletion-retry", args=[failed.pk]),
            reverse("portal:review:deletions"),
            failed,
        ),
    ]


def test_a_reviewer_action_sent_after_the_session_ended_opens_its_page_and_does_nothing(
    client, reviewer, alice_subject
):
    """The POST-only actions answered the login's ``next`` (a GET of the action's own
    address, once logged in again; a refused decision's page reloaded too) with a bare 405,
    and the browser showed its own "HTTP ERROR 405" page. Each now opens the page the action
    lives on, the queue's page kept, saying that nothing was done."""
    body = {"reason": "Confirmed by phone", "outcome": "ask_user"}
    for url, page, row in _reviewer_actions(alice_subject):
        client.logout()
        next_url = _login_next(client, url, body)
        client.force_login(reviewer)

        response = client.get(next_url)

        assert (response.status_code, response["Location"]) == (302, page), url
        shown = client.get(page).content.decode()
        assert "Nothing was" in shown and "lost at the login" in shown, url
        row.refresh_from_db()
        untouched = row.state == "open" if isinstance(row, ReviewItem) else row.status == "failed"
        assert untouched, url


def test_a_confirmation_sent_after_the_session_ended_opens_the_memory_and_confirms_nothing(
    client, alice, alice_subject
):
    """The same for an end user's "This is right": a blank 405 instead of her memory."""
    guess = MemoryFactory(
        subject=alice_subject,
        authority="model_inference",
        source_type="model_inference",
        confidence=0.6,
        content="Alice probably prefers dark mode.",
    )
    next_url = _login_next(client, reverse("portal:memory-confirm", args=[guess.pk]), {})
    client.force_login(alice)

    response = client.get(next_url, follow=True)

    assert response.redirect_chain == [(reverse("portal:memory", args=[guess.pk]), 302)]
    assert "Nothing was confirmed" in response.content.decode()
    guess.refresh_from_db()
    assert guess.status == "active" and guess.authority == "model_inference"


def test_an_opened_action_address_of_another_tenant_or_subject_is_404(
    client, alice, other_reviewer, bob_memory, alice_subject
):
    """Opened (GET), an action's address answers 404 for an id outside the login's scope, as
    its POST does, and never sends the login to a page as though the row were there."""
    client.force_login(other_reviewer)
    for url, _page, _row in _reviewer_actions(alice_subject):
        assert client.get(url).status_code == 404, url
    client.force_login(alice)
    assert client.get(reverse("portal:memory-confirm", args=[bob_memory.pk])).status_code == 404
