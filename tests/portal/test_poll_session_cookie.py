"""A request sent with a session that another login has ended must not log the browser out.

Logging in as another account in a second tab flushes the first login's session. A request
of the first tab already on its way with the old cookie (a deletion page's poll of its
``status.json``, the login page that poll is redirected to, the page's reload or its
``follow`` fetch) found its session gone, and Django's ``SessionMiddleware`` answered it with a
deletion of the session cookie: arriving after the login's answer, it dropped the new session
too, and neither was logged in (docs/security.md, "Left open", stop 67;
``tests/browser/test_portal_stop53.py`` met it about once in 14 runs).

The browser is modelled by one client whose cookie jar holds the new login's cookie while a
request carries the old one (sent before the login's answer came back); the answer's cookies
then go into the jar, as a browser's would.
"""

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from memory_core.models import DeletionOperation
from tests.portal.conftest import PASSWORD

pytestmark = pytest.mark.django_db

LOGIN = reverse("login")
COOKIE = settings.SESSION_COOKIE_NAME


@pytest.fixture
def operation(alice_subject):
    operation = DeletionOperation.objects.create(
        tenant=alice_subject.tenant, subject=alice_subject, target="subject", status="running"
    )
    operation.steps.create(store="primary", status="pending")
    return operation


def logged_in(client, username) -> str:
    """Log ``username`` in through the login page, as a browser does; return its cookie."""
    response = client.post(LOGIN, {"username": username, "password": PASSWORD})
    assert response.status_code == 302, response.content.decode()
    return client.cookies[COOKIE].value


def sent_with(client, cookie, url):
    """GET ``url`` with the session cookie ``cookie`` (a request in flight since before the
    jar got another), and let its answer's cookies into the jar."""
    return client.get(url, HTTP_COOKIE=f"{COOKIE}={cookie}")


def after_another_login(client, alice, bob) -> str:
    """Alice logs in, then Bob in the same browser; return Alice's old cookie."""
    alice_cookie = logged_in(client, "alice")
    assert logged_in(client, "bob") != alice_cookie  # Django flushed Alice's session
    return alice_cookie


def login_redirect(url) -> str:
    return f"{LOGIN}?next={url}"


def assert_logged_in_as(client, username):
    """The jar's cookie opens ``username``'s deletions page, not the login page."""
    page = client.get(reverse("portal:deletions"))
    assert page.status_code == 200, page.get("Location")
    assert f'<span class="who">{username} ' in page.content.decode()


@pytest.mark.parametrize("polled", ["status", "page", "login"])
def test_a_poll_with_the_old_session_does_not_log_the_new_login_out(
    client, alice, bob, operation, polled
):
    """Each address the deletion page asks on a timer: its status JSON (``poll``), the login
    page the fetch follows the status's redirect to, and the page itself (``follow``'s fetch,
    the reload, and without JavaScript the head's refresh every 10 s)."""
    status = reverse("portal:deletion-status", args=[operation.pk])
    url = {
        "status": status,
        "page": reverse("portal:deletion", args=[operation.pk]),
        "login": login_redirect(status),
    }[polled]
    refused = Client().get(url)  # what a browser without a login is answered
    old = after_another_login(client, alice, bob)

    response = sent_with(client, old, url)

    assert COOKIE not in response.cookies, response.cookies.output()
    # Refused as a browser without a login is: to the login page, which is shown.
    assert response.status_code == refused.status_code == (200 if polled == "login" else 302)
    assert response.get("Location") == refused.get("Location")
    if polled != "login":
        assert response["Location"] == login_redirect(url)
    assert_logged_in_as(client, "bob")


def test_an_ordinary_page_with_the_old_session_is_refused_as_before(client, alice, bob):
    """A page no timer asks is refused to the old cookie as before, to the login page (as
    to a browser without a login), and the new login is left as it is."""
    old = after_another_login(client, alice, bob)
    home = reverse("portal:home")

    response = sent_with(client, old, home)

    assert response.status_code == 302
    assert response["Location"] == login_redirect(home) == Client().get(home)["Location"]
    assert_logged_in_as(client, "bob")


def test_logging_out_still_deletes_the_session_cookie(client, alice):
    """A request that ends the session itself (logout) still tells the browser to drop it."""
    logged_in(client, "alice")

    response = client.post(reverse("logout"))

    assert response.cookies[COOKIE].value == ""
    assert response.cookies[COOKIE]["max-age"] == 0
    assert client.get(reverse("portal:home")).status_code == 302
