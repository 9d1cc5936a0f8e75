"""The portal's and the admin's logins: failed attempts counted per username, and past a bound
a login refused for a while without its password being checked.

Neither login limited guesses: after 50 wrong passwords in a row for one account, the 51st
try logged in at once (stop 50's audit), and a portal login reads everything remembered about
a person, a reviewer's every pending sensitive write of a tenant, a staff login every tenant.

- A failure (``user_login_failed``, which ``authenticate`` sends when every backend refuses)
  adds one to the username's counter in the rate limits' cache (``api.throttling``), kept
  ``MEMLEDGER_LOGIN_FAILURE_MINUTES`` from its first failure; the username is case-folded
  and hashed (``login-failures:<sha256>``), so "Alice" and "alice" count together and no
  name is written to the cache.
- At ``MEMLEDGER_LOGIN_FAILURES`` failures the login forms refuse that username until the
  counter expires, with a sentence saying so; the password is not checked, so the right one
  logs in no sooner. A successful login clears the counter.
- Per username, not per address: behind a proxy every client has the proxy's address, and
  one guesser would shut every person out. A guesser can hold one account's logins closed for
  the window: the price of the bound, which its owner waits out.
- With the cache down, logins are refused ("unavailable for a moment"), as the API's rate
  limits refuse a request they cannot count: never a guess let through uncounted.
"""

import hashlib
import logging

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.exceptions import ValidationError
from django.dispatch import receiver

from api.throttling import counter_add, counter_cache

logger = logging.getLogger(__name__)

UNAVAILABLE = "Logging in is unavailable for a moment: try again shortly."


def _key(username: str) -> str:
    digest = hashlib.sha256(username.casefold().encode("utf-8", "surrogatepass")).hexdigest()
    return f"login-failures:{digest}"


def _window_seconds() -> int:
    return settings.MEMLEDGER_LOGIN_FAILURE_MINUTES * 60


def login_refusal(username: str) -> str:
    """Return why a login as ``username`` is refused now ("" when it is not)."""
    try:
        failures = counter_cache().get(_key(username), 0)
    except Exception:  # the cache is down (Redis, the cache folder)
        logger.warning("login refused: the failed logins' counter cannot be read", exc_info=True)
        return UNAVAILABLE
    if failures < settings.MEMLEDGER_LOGIN_FAILURES:
        return ""
    minutes = settings.MEMLEDGER_LOGIN_FAILURE_MINUTES
    return (
        f"Logging in as this user is paused after {failures} failed attempts: try again in "
        f"{minutes} minute{'s' if minutes != 1 else ''}."
    )


@receiver(user_login_failed)
def _count_failure(sender, credentials, request=None, **kwargs):
    username = credentials.get("username")
    if not isinstance(username, str) or not username:
        return
    try:
        counter_add(_key(username), 1, _window_seconds())
    except Exception:  # the cache is down: the next try is refused when it reads the counter
        logger.warning("a failed login was not counted: the cache failed", exc_info=True)


@receiver(user_logged_in)
def _clear_failures(sender, request, user, **kwargs):
    try:
        counter_cache().delete(_key(user.get_username()))
    except Exception:
        logger.warning("failed logins not cleared: the cache failed", exc_info=True)


class ThrottledLogin:
    """A login form that refuses a username past its failed attempts (module docstring)
    before checking the password; ``throttled`` says the form was refused so."""

    throttled = False

    def clean(self):
        username = self.cleaned_data.get("username")
        if username:
            refusal = login_refusal(username)
            if refusal:
                self.throttled = True
                raise ValidationError(refusal, code="too_many_failures")
        return super().clean()


class LoginForm(ThrottledLogin, AuthenticationForm):
    """The portal's login (``/accounts/login/``)."""


class AdminLoginForm(ThrottledLogin, AdminAuthenticationForm):
    """The admin's login (``/admin/login/``)."""
