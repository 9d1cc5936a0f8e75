"""A page answered with the CSRF cookie a request brought must not replace a newer one.

A login gives the browser a new CSRF cookie (Django rotates the token). A request of another
tab already on its way with the old cookie (the login page a logged-out poll is sent to, a
reload, a slow page) rendered a form, and Django's answer set the cookie it had received
again, only to renew its expiry: arriving after the login's answer, it put the old token
back, and every form of the pages opened under the new login failed the CSRF check ("reload
and try again": docs/security.md, "Left open", stop 68).

The browser is modelled as in test_poll_session_cookie.py: one client with CSRF checks on,
whose jar holds the new login's cookies while a request carries the old ones; the answer's
cookies then go into the jar, as a browser's would.
"""

import re

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from memory_core.models import Memory
from tests.portal.conftest import PASSWORD

pytestmark = pytest.mark.django_db

LOGIN = reverse("login")
CSRF = settings.CSRF_COOKIE_NAME
SESSION = settings.SESSION_COOKIE_NAME
TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture
def browser():
    return Client(enforce_csrf_checks=True)


def form_token(page) -> str:
    assert page.status_code == 200, page.get("Location")
    return TOKEN.search(page.content.decode())[1]


def logged_in(browser, username) -> dict[str, str]:
    """Log ``username`` in through the login page's form; return the jar's cookies then."""
    token = form_token(browser.get(LOGIN))
    response = browser.post(
        LOGIN, {"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302, response.content.decode()
    return {name: browser.cookies[name].value for name in (SESSION, CSRF)}


def sent_with(browser, cookies, url):
    """GET ``url`` with ``cookies`` (a request in flight since before the jar got others),
    and let its answer's cookies into the jar."""
    return browser.get(url, HTTP_COOKIE=cookie_header(cookies))


def cookie_header(cookies) -> str:
    return "; ".join(f"{name}={value}" for name, value in cookies.items())


def correct(browser, memory, token):
    return browser.post(
        reverse("portal:memory-correct", args=[memory.pk]),
        {"content": "Bob likes short tutorials.", "reason": "", "csrfmiddlewaretoken": token},
    )


@pytest.mark.parametrize("stale", ["login", "logged_out_login", "page"])
def test_an_old_tabs_page_does_not_put_back_the_old_csrf_cookie(
    browser, alice, bob, bob_memory, stale
):
    """Bob logs in while a tab's request with the old cookies is on its way: the login page
    a logged-out poll of Alice's is sent to, a logged-out tab's login page (both read after
    the login), or a page of Bob's own read before he logged in again in another tab and
    answered after it. Its answer leaves Bob's new CSRF cookie in the jar, and the form of
    Bob's page opened under the new login saves."""
    if stale == "page":
        old = logged_in(browser, "bob")
        url = reverse("portal:memory", args=[bob_memory.pk])
        response = Client(enforce_csrf_checks=True, HTTP_COOKIE=cookie_header(old)).get(url)
    else:
        old = logged_in(browser, "alice")
        url = f"{LOGIN}?next={reverse('portal:deletions')}"
        if stale == "logged_out_login":
            old.pop(SESSION)
    new = logged_in(browser, "bob")
    assert new[CSRF] != old[CSRF]  # the login rotated the token
    token = form_token(browser.get(reverse("portal:memory-correct", args=[bob_memory.pk])))

    if stale == "page":
        browser.cookies.update(response.cookies)  # its answer arrives after the login's
    else:
        response = sent_with(browser, old, url)

    assert response.status_code == 200, response.get("Location")
    assert 'name="csrfmiddlewaretoken"' in response.content.decode()  # it rendered a form
    saved = correct(browser, bob_memory, token)
    assert saved.status_code == 302, saved.content.decode()[:300]  # not the CSRF page, 403
    assert Memory.objects.get(supersedes=bob_memory).content == "Bob likes short tutorials."
    assert CSRF not in response.cookies, response.cookies.output()
    assert browser.cookies[CSRF].value == new[CSRF]


def test_the_old_tabs_form_is_refused_as_one_opened_before_the_login(browser, alice, bob):
    """What the old tab's page holds is the old token: posted after Bob's login, it is
    refused with the CSRF page (nothing changed, reload and try again), as any form opened
    before the last login is, and the reload's form logs in."""
    old = logged_in(browser, "alice")
    logged_in(browser, "bob")
    token = form_token(sent_with(browser, old, LOGIN))

    refused = browser.post(
        LOGIN, {"username": "alice", "password": PASSWORD, "csrfmiddlewaretoken": token}
    )

    assert refused.status_code == 403
    assert "reload" in refused.content.decode().lower()
    assert logged_in(browser, "alice")[CSRF] != old[CSRF]


def test_a_first_visit_and_a_login_still_set_the_csrf_cookie(browser, alice):
    """A request that makes the token (a first visit: no cookie, or an unreadable one) or
    rotates it (a login) still sends the cookie; a page answered with the token it was sent
    does not send it again."""
    first = browser.get(LOGIN)
    assert first.cookies[CSRF].value == browser.cookies[CSRF].value
    assert CSRF not in browser.get(LOGIN).cookies
    browser.cookies[CSRF] = "not a token"
    assert browser.get(LOGIN).cookies[CSRF].value != "not a token"
    before = browser.cookies[CSRF].value

    after = logged_in(browser, "alice")[CSRF]

    assert after != before
    assert CSRF not in browser.get(reverse("portal:home"), follow=True).cookies
    assert browser.cookies[CSRF].value == after


def test_a_logout_answered_after_another_login_still_drops_the_cookie(browser, alice, bob):
    """Left as it was, on purpose: a logout sent from Alice's tab before Bob's login in
    another tab, and answered after it, still drops the browser's session cookie, Bob's
    now. Cookies have no compare-and-swap, so an answer cannot drop only its own session's;
    and one that kept the cookie would show the person who asked to log out the login page
    while a login stays in the browser (a shared computer), where this costs Bob a login."""
    old = logged_in(browser, "alice")
    token = form_token(browser.get(reverse("portal:deletions")))
    logged_in(browser, "bob")

    response = browser.post(
        reverse("logout"),
        {"csrfmiddlewaretoken": token},
        HTTP_COOKIE=f"{SESSION}={old[SESSION]}; {CSRF}={old[CSRF]}",
    )

    assert response.status_code == 302
    assert response.cookies[SESSION]["max-age"] == 0
    assert browser.get(reverse("portal:home"))["Location"].startswith(LOGIN)
