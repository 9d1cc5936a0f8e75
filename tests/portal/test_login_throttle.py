"""Failed logins are counted per username, and past MEMLEDGER_LOGIN_FAILURES a login is refused
for a while, the password unchecked (config/login.py).

Neither the portal's login nor the admin's limited guesses: after 50 wrong passwords in a row
for one account the 51st try, the right one, logged in at once (stop 50's audit).
"""

import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.core.cache import caches
from django.test import Client, override_settings

from config.login import UNAVAILABLE
from tests.portal.conftest import PASSWORD, make_login

pytestmark = pytest.mark.django_db

PORTAL, ADMIN = "/accounts/login/", "/admin/login/"


@pytest.fixture(autouse=True)
def _counters_cleared():
    """Each test starts with no failed login counted (the counters outlive a transaction)."""
    caches["throttle"].clear()
    yield
    caches["throttle"].clear()


@pytest.fixture
def alice(tenant, alice_subject):
    return make_login("alice", tenant=tenant, role="end_user", subject=alice_subject)


def _guess(client, url, username, times):
    for n in range(times):
        response = client.post(url, {"username": username, "password": f"guess-{n}"})
        assert response.status_code == 200 and SESSION_KEY not in client.session


@override_settings(MEMLEDGER_LOGIN_FAILURES=5)
def test_past_the_bound_even_the_right_password_is_refused_with_a_sentence(alice):
    attacker = Client()
    _guess(attacker, PORTAL, "alice", 5)
    response = attacker.post(PORTAL, {"username": "alice", "password": PASSWORD})
    assert SESSION_KEY not in attacker.session
    page = response.content.decode()
    assert "paused after 5 failed attempts: try again in 15 minutes" in page
    assert "didn't match" not in page  # the password was not checked
    # Another person's login is not held by it, from the same client.
    make_login("bob")
    attacker.post(PORTAL, {"username": "bob", "password": PASSWORD})
    assert SESSION_KEY in attacker.session


@override_settings(MEMLEDGER_LOGIN_FAILURES=5)
def test_a_username_counts_in_any_letter_case(alice):
    attacker = Client()
    _guess(attacker, PORTAL, "ALICE", 3)
    _guess(attacker, PORTAL, "Alice", 2)
    attacker.post(PORTAL, {"username": "alice", "password": PASSWORD})
    assert SESSION_KEY not in attacker.session


@override_settings(MEMLEDGER_LOGIN_FAILURES=5)
def test_a_successful_login_clears_the_count(alice):
    person = Client()
    _guess(person, PORTAL, "alice", 4)
    person.post(PORTAL, {"username": "alice", "password": PASSWORD})
    assert SESSION_KEY in person.session
    person.logout()
    _guess(person, PORTAL, "alice", 4)  # four more: not five since the success
    person.post(PORTAL, {"username": "alice", "password": PASSWORD})
    assert SESSION_KEY in person.session


@override_settings(MEMLEDGER_LOGIN_FAILURES=5)
def test_the_admin_login_is_held_the_same_way():
    """A staff login works in platform mode over every tenant (config/admin.py)."""
    get_user_model().objects.create_superuser("platform-admin", password=PASSWORD)
    attacker = Client()
    _guess(attacker, ADMIN, "platform-admin", 5)
    response = attacker.post(ADMIN, {"username": "platform-admin", "password": PASSWORD})
    assert SESSION_KEY not in attacker.session
    assert "paused after 5 failed attempts" in response.content.decode()


def test_with_the_cache_down_a_login_is_refused_not_a_500(alice, settings):
    """Never a guess let through uncounted, and never a 500: as the API's rate limits."""
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
        },
    }
    person = Client()
    response = person.post(PORTAL, {"username": "alice", "password": PASSWORD})
    assert response.status_code == 200
    assert SESSION_KEY not in person.session
    assert UNAVAILABLE in response.content.decode()
