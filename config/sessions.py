"""Django's session middleware, except that an answer tells the browser to drop its session
cookie only when its own request ended the session (a logout).

Django also drops it when the request's cookie names a session that is gone. Logging in as
another account in a second tab ends the first login's session; a request of the first tab
already on its way with the old cookie (a deletion page's poll, the login page it is sent to,
a reload) found it gone, and its "drop the cookie", arriving after the login's answer, dropped
the new login's cookie too: neither was logged in. A gone session's cookie logs nobody in (its
key is never given to a new session), so leaving it in the browser changes nothing else.
"""

from django.conf import settings
from django.contrib.sessions.middleware import SessionMiddleware as DjangoSessionMiddleware


def session_found_gone(request) -> bool:
    """Whether the request's cookie named a session that was not there, and the request did
    not end a session itself (``flush`` marks it modified)."""
    session = getattr(request, "session", None)
    return (
        session is not None
        and settings.SESSION_COOKIE_NAME in request.COOKIES
        and session.is_empty()
        and not session.modified
    )


class SessionMiddleware(DjangoSessionMiddleware):
    def process_response(self, request, response):
        response = super().process_response(request, response)
        if session_found_gone(request):
            # Django's answer set the cookie's deletion (``Vary: Cookie`` stays).
            response.cookies.pop(settings.SESSION_COOKIE_NAME, None)
        return response
