"""An answer sets the CSRF cookie only when its request made or changed the token (a first
visit, an unreadable cookie, a login's rotation), not again as it was.

Django sets the cookie again on every answer that renders a form, with the value the request
brought, to renew its expiry. A login rotates the token; a request of another tab already on
its way with the old cookie (the login page a logged-out poll is sent to, a reload, a slow
page) rendered a form, and its answer, arriving after the login's, put the old token back:
every form of the pages opened under the new login then failed the CSRF check (stop 68's
"Left open"). Cookies have no compare-and-swap, so an answer that has nothing new to say
leaves the cookie alone.

What is given up is the renewal: the cookie lasts ``CSRF_COOKIE_AGE`` (a year) from the
answer that set it, and every login sets it anew (a session lasts two weeks), so a browser
that logs in is never near it; past it, the next page makes a new token (a form opened
before fails the check once, as one opened before a login does).
Storing the token in the session (``CSRF_USE_SESSIONS``) was not taken: the login page's
form would save a session for every visitor, and a stale tab's login page, saving one
under its gone session's request, would set a session cookie over the new login's again.
"""

from django.conf import settings


def csrf_cookie_unchanged(request) -> bool:
    """Whether the token the request used is the one its cookie brought, as it was (a
    cookie of Django before 4.0 held it masked: set again, unmasked)."""
    brought = request.COOKIES.get(settings.CSRF_COOKIE_NAME)
    return brought is not None and request.META.get("CSRF_COOKIE") == brought


class CsrfCookieUnchangedMiddleware:
    """Takes out of an answer the CSRF cookie Django set again unchanged. Listed just before
    Django's ``CsrfViewMiddleware`` (which stays, and which ``check --deploy`` looks for), so
    it sees the answer after it, and after a view's ``csrf_protect`` (the login views)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        sent = response.cookies.get(settings.CSRF_COOKIE_NAME)
        # ``Vary: Cookie`` stays: the page's form holds a token of the cookie.
        if sent is not None and csrf_cookie_unchanged(request):
            if sent.value == request.META["CSRF_COOKIE"]:
                response.cookies.pop(settings.CSRF_COOKIE_NAME)
        return response
