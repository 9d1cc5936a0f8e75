"""The portal's and the admin's logins: the password checks a username gets within a window
are bounded, and past the bound a login is refused for a while, its password unchecked.

Neither login limited guesses: after 50 wrong passwords in a row for one account, the 51st
try logged in at once (stop 50's audit), and a portal login reads everything remembered about
a person, a reviewer's every pending sensitive write of a tenant, a staff login every tenant.

- Every login posted with a username is charged, before its password is checked, to the
  username's sliding window in the rate limits' cache (``api.throttling.window_charge``: ten
  slices of ``MEMLEDGER_LOGIN_FAILURE_MINUTES``); one the window cannot hold
  (``MEMLEDGER_LOGIN_FAILURES``) is refused, with a sentence saying when to try again, and
  spends nothing. Charged first, so that guesses sent at once are bounded too: counted after
  the password check, every guess in flight saw the count below the bound (the stop's review).
- A successful login forgets the window: only failures add up. The username is hashed as
  the login matches it (``login-failures:<sha256>:<slice>``: Django's form reads it in NFKC,
  and its backend matches it exactly), so no name is written to the cache. It was case-folded
  until stop 54, and two accounts folding alike ("großmann" and "grossmann") shared one
  window: one's owner cleared the count of guesses at the other by logging in between rounds
  (the audit of access). A slice's counter is never used again once its slice has passed, so
  one whose expiry Redis lost holds no later window (the stop's review: a fixed key could
  lock an account for good).
- The windows live in a cache of their own (``logins``): anyone may post logins under fresh
  usernames, and in the rate limits' cache a full one culled the API keys' live counters.
- Per username, not per address: behind a proxy every client has the proxy's address, and
  one guesser would shut every person out. A guesser can hold one account's logins closed for
  the window: the price of the bound, which its owner waits out.
- With the cache down, logins are refused ("unavailable for a moment"), as the API's rate
  limits refuse a request they cannot count: never a guess let through uncounted.
"""

import hashlib
import logging
import math

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.admin.forms import AdminPasswordChangeForm as DjangoAdminPasswordChangeForm
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_logged_in
from django.core.exceptions import ValidationError
from django.dispatch import receiver

from api.throttling import window_charge, window_clear
from memory_core.admin import PasswordsJournaled, PasswordsRefuseLoneSurrogates
from memory_core.cache_backends import LOGINS_CACHE_ALIAS as LOGINS
from memory_core.text import lone_surrogate, refuse_lone_surrogates
from portal.forms import shown_escaped

logger = logging.getLogger(__name__)

UNAVAILABLE = "Logging in is unavailable for a moment: try again shortly."


def _prefix(username: str) -> str:
    digest = hashlib.sha256(username.encode("utf-8", "surrogatepass")).hexdigest()
    return f"login-failures:{digest}:"


def _window_seconds() -> int:
    return settings.MEMLEDGER_LOGIN_FAILURE_MINUTES * 60


def login_refusal(username: str) -> str:
    """Charge a login as ``username`` to its window; return why it is refused ("" when its
    password may be checked)."""
    bound, minutes = settings.MEMLEDGER_LOGIN_FAILURES, settings.MEMLEDGER_LOGIN_FAILURE_MINUTES
    try:
        charge = window_charge(
            _prefix(username), 1, bound, _window_seconds(), whole_period=True, alias=LOGINS
        )
    except Exception:  # the cache is down (Redis, the cache folder)
        logger.warning("login refused: the failed logins cannot be counted", exc_info=True)
        return UNAVAILABLE
    if charge.fits:
        return ""
    wait = max(1, math.ceil(charge.wait / 60))
    return (
        f"Logging in as this user is paused after {bound} failed attempts within "
        f"{_minutes(minutes)}: try again in {_minutes(wait)}."
    )


def _minutes(count: int) -> str:
    return f"{count} minute{'s' if count != 1 else ''}"


@receiver(user_logged_in)
def _forget_failures(sender, request, user, **kwargs):
    try:
        window_clear(
            _prefix(user.get_username()), _window_seconds(), whole_period=True, alias=LOGINS
        )
    except Exception:
        logger.warning("failed logins not forgotten: the cache failed", exc_info=True)


class ThrottledLogin:
    """A login form that charges a username's window, and refuses it past the bound, before
    checking the password (module docstring); ``throttled`` says the form was refused so."""

    throttled = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # A lone surrogate (``\ud800``, which a charset such as ``unicode_escape`` sent until
        # stop 64's review of the charsets, and the check keeps out whatever sends one) reached
        # PostgreSQL in ``authenticate()`` from the username and the hasher from the password:
        # a 500 (stop 52's audit). Refused on the field, as every portal form refuses it, and
        # the username shown again escaped (the page could not be encoded with it).
        for name in ("username", "password"):
            self.fields[name].validators.append(refuse_lone_surrogates)
        self.fields["username"].prepare_value = shown_escaped

    def clean(self):
        username = self.cleaned_data.get("username")
        # Charged only where a password will be checked (a form missing either checks none).
        if username and self.cleaned_data.get("password"):
            refusal = login_refusal(username)
            if refusal:
                self.throttled = True
                raise ValidationError(refusal, code="too_many_failures")
        return super().clean()


class LoginForm(ThrottledLogin, AuthenticationForm):
    """The portal's login (``/accounts/login/``)."""


def without_unencodable_next(request) -> None:
    """Drop a ``next`` holding a lone surrogate from ``request``: the redirect after a login
    could not encode it (a 500: stop 52's audit), and no page lives there. The login then goes
    where a login without one goes."""
    for name in ("GET", "POST"):
        query = getattr(request, name)
        if lone_surrogate(query.get(REDIRECT_FIELD_NAME, "")):
            query = query.copy()
            query.pop(REDIRECT_FIELD_NAME)
            setattr(request, name, query)


class LogoutView(auth_views.LogoutView):
    """Django's logout view without an unencodable ``next`` (a 500: stop 52's review)."""

    def dispatch(self, request, *args, **kwargs):
        without_unencodable_next(request)
        return super().dispatch(request, *args, **kwargs)


class AdminPasswordChangeForm(
    PasswordsJournaled, PasswordsRefuseLoneSurrogates, DjangoAdminPasswordChangeForm
):
    """The admin's own "Change password" page (``MemledgerAdminSite.password_change``)."""


class LoginView(auth_views.LoginView):
    """Django's login view with the portal's form and without an unencodable ``next``."""

    authentication_form = LoginForm

    def dispatch(self, request, *args, **kwargs):
        without_unencodable_next(request)
        return super().dispatch(request, *args, **kwargs)


class AdminLoginForm(ThrottledLogin, AdminAuthenticationForm):
    """The admin's login (``/admin/login/``)."""
