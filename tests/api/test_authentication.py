"""Agents authenticate with bearer API keys; everything else is refused with a stable code."""

from datetime import timedelta

import pytest
from django.test import RequestFactory
from django.utils import timezone
from rest_framework.test import APIClient

from api import views
from api.middleware import server_error
from memory_core.models import ApiKey, Tenant
from memory_core.services.api_keys import api_key_resolve, api_key_revoke

pytestmark = pytest.mark.django_db


def test_key_fixes_tenant_and_agent(api_client, agent):
    response = api_client.get("/api/v1/whoami")
    assert response.status_code == 200
    assert response.json()["tenant_id"] == str(agent.tenant_id)
    assert response.json()["agent_id"] == str(agent.id)
    # What it acts for: every subject, or a subject token's (an integrator could not tell).
    assert response.json()["any_subject"] is True and response.json()["subject"] is None
    assert response.json()["issues_subject_tokens"] is False


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer"])
def test_the_scheme_is_read_whatever_its_case(db, api_key, scheme):
    """HTTP's authentication schemes are case-insensitive (RFC 9110, 11.1): ``bearer <key>``
    was refused with "Use 'Authorization: Bearer <api key>'"."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"{scheme} {api_key}")
    assert client.get("/api/v1/whoami").status_code == 200


@pytest.mark.parametrize(
    ("header", "code"),
    [
        (None, "not_authenticated"),
        ("Bearer", "not_an_api_key"),
        ("Bearer nonsense", "not_an_api_key"),
        ("Basic abc", "not_an_api_key"),
        ("Bearer mlk_x_y", "not_an_api_key"),
        ("Bearer mlk_0123456789ab_" + "A" * 43, "authentication_failed"),  # shaped, unknown
    ],
)
def test_missing_or_bad_keys_are_401(db, header, code):
    client = APIClient()
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    response = client.get("/api/v1/whoami")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == code
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ("Basic dXNlcjpwYXNzd29yZA==", "uses the Basic scheme"),
        ('Digest username="u"', "uses the Digest scheme"),
        ("Token abc", "uses the Token scheme"),
        ("Bearer ", "names the Bearer scheme and no key"),
        ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "memledger's keys read"),
        ("Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "memledger's keys read"),
        ("bearer mlk_0123456789ab_short!", "memledger's keys read"),
        # One word: a credential sent without its scheme was quoted back as "the hunter2
        # scheme" (a finding of stop 47's audit); a key so sent is not quoted either.
        ("hunter2", "holds one word"),
        ("mlk_0123456789ab_" + "k" * 43, "holds one word"),
        ("Bearer", "names the Bearer scheme and no key"),
    ],
)
def test_a_header_that_holds_no_api_key_is_told_so(db, header, said):
    """A Basic login or another service's bearer token heard "Unknown, revoked or expired API
    key, or its agent was deactivated or its tenant deleted" (or "Use 'Authorization: Bearer
    <api key>'"): integrators went looking for a revocation. It is ``not_an_api_key`` now,
    saying what was sent instead, and never echoing the credential."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    for response in (client.get("/api/v1/whoami"), client.post("/api/v1/memories", {})):
        assert response.status_code == 401, response.content
        error = response.json()["error"]
        assert error["code"] == "not_an_api_key"
        assert error["message"].startswith("This is not an API key:"), error
        assert said in error["message"], error
        scheme, space, secret = header.partition(" ")
        secret = secret.strip() if space else scheme  # one word may be the credential itself
        assert secret in ("", "Bearer") or secret not in error["message"]


MALFORMED_KEYS = [
    "mlk_ab\x00cd_xyz",  # a NUL byte reached PostgreSQL: a 500
    "mlk_abcdefabcdef_" + "x" * 20 + "\x00",
    "mlk_\u00ff\u00fe_x",
    "mlk_abcdefabcdef_" + "x" * 5000,
    "mlk_ab'cd_xyz",
    "mlk__xyz",
    "mlk_abcdefabcdef_",
    "MLK_abcdefabcdef_xyz",
]


@pytest.mark.parametrize("raw_key", MALFORMED_KEYS)
def test_a_key_of_the_wrong_shape_is_401_and_never_queried(
    api_client, api_key, raw_key, django_assert_num_queries
):
    with django_assert_num_queries(0):
        assert api_key_resolve(raw_key) is None
    client = APIClient(raise_request_exception=False)
    response = client.get("/api/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    assert response.status_code == 401, response.content
    assert response.json()["error"]["code"] == "not_an_api_key"
    # A real key, with a NUL byte anywhere in it, is refused too.
    for index in (4, 10, len(api_key)):
        spoilt = api_key[:index] + "\x00" + api_key[index:]
        response = client.get("/api/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {spoilt}")
        assert response.status_code == 401, response.content
    assert api_key_resolve(api_key) is not None


def test_a_key_whose_secret_is_wrong_is_refused(api_client, api_key):
    """The prefix finds the row; the secret after it must hash to the stored one."""
    kind, prefix, secret = api_key.split("_", 2)  # the secret may hold "_" itself
    prefix = f"{kind}_{prefix}"
    for other in (secret[::-1], "A" * len(secret)):
        assert api_key_resolve(f"{prefix}_{other}") is None
        client = APIClient(raise_request_exception=False)
        response = client.get("/api/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {prefix}_{other}")
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "authentication_failed"
    assert api_key_resolve(api_key) is not None


@pytest.mark.parametrize("cut", ["secret_short", "secret_long", "prefix_short"])
def test_a_key_cut_short_or_lengthened_is_not_an_api_key_and_never_queried(api_key, cut):
    """docs/api.md, 401: a token not shaped like ``mlk_<12 hex digits>_<43 …>``, "a key cut
    short or altered when copied" too, is ``not_an_api_key``, refused before any query. One a
    character short was looked up and answered ``authentication_failed`` (stop 52's audit)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    kind, prefix, secret = api_key.split("_", 2)
    token = {
        "secret_short": f"{kind}_{prefix}_{secret[:-1]}",
        "secret_long": f"{kind}_{prefix}_{secret}A",
        "prefix_short": f"{kind}_{prefix[:-1]}_{secret}",
    }[cut]
    client = APIClient(raise_request_exception=False)
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_an_api_key"
    assert not [q for q in queries if "apikey" in q["sql"]], [q["sql"] for q in queries]


def test_a_key_of_a_deleted_tenant_is_refused_even_before_it_is_revoked(api_client, tenant):
    """A tenant's deletion revokes its keys in a step of its own; the mark of the deletion
    refuses them from the moment it is set."""
    assert api_client.get("/api/v1/whoami").status_code == 200
    Tenant.objects.filter(pk=tenant.pk).update(deleted_at=timezone.now())
    assert ApiKey.objects.filter(agent__tenant=tenant, revoked_at=None).exists()
    response = api_client.get("/api/v1/whoami")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_a_resolved_key_and_its_agent_are_the_rows_as_stored(api_key, agent):
    """``api_key_resolve`` builds the rows from one statement of its own: every field of the
    key and of its agent as the ORM reads them (a field that needs a converter would not be)."""
    resolved = api_key_resolve(api_key)
    stored = ApiKey.objects.select_related("agent").get(agent=agent)
    for model_row, read in ((stored, resolved), (stored.agent, resolved.agent)):
        for field in type(model_row)._meta.concrete_fields:
            assert getattr(read, field.attname) == getattr(model_row, field.attname), field.name
    assert resolved.agent.pk == agent.pk and not resolved._state.adding


def test_revoked_and_expired_keys_are_refused(api_client, agent):
    key = ApiKey.objects.get(agent=agent)
    key.expires_at = timezone.now() - timedelta(seconds=1)
    key.save(update_fields=["expires_at"])
    assert api_client.get("/api/v1/whoami").status_code == 401
    key.expires_at = None
    key.save(update_fields=["expires_at"])
    assert api_client.get("/api/v1/whoami").status_code == 200
    api_key_revoke(key=key)
    assert api_client.get("/api/v1/whoami").status_code == 401


def test_a_deactivated_agents_key_is_told_it_may_be_the_agent(api_client, agent):
    """The 401 said "Unknown, revoked or expired API key." of a valid key whose agent an
    operator deactivated: its holder looked for a fault in the key."""
    agent.is_active = False
    agent.save(update_fields=["is_active"])
    response = api_client.get("/api/v1/whoami")
    assert response.status_code == 401
    assert "deactivated" in response.json()["error"]["message"]


def test_schema_is_served(client):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    assert b"openapi" in response.content
    for path in ("/api/schema", "/api/docs"):  # without the slash: redirected, not a 404
        assert client.get(path).headers["Location"] == path + "/"


@pytest.mark.parametrize(
    "method, path",
    [
        ("get", "/api/v1/nothing-here"),
        ("get", "/api/v1/traces/123"),  # a known endpoint, an id that is not a UUID
        ("get", "/api/v1/deletions/not-a-uuid"),
        ("post", "/api/v1/memories/not-a-uuid/revoke"),
        ("delete", "/api/v1/"),
        ("get", "/api/v2/retrieve"),
    ],
)
def test_a_path_that_names_no_endpoint_is_a_json_404(api_client, method, path):
    response = getattr(api_client, method)(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "not_found"
    assert path in response.json()["error"]["message"]
    anonymous = getattr(APIClient(), method)(path)  # authentication first, as everywhere
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == "not_authenticated"


@pytest.mark.parametrize(
    "method", ["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE", "TRACE", "PROPFIND"]
)
@pytest.mark.parametrize("path", ["/api/v1/nothing-here", "/api/v1/memories/not-a-uuid"])
def test_every_method_on_a_path_that_names_no_endpoint_is_a_404(api_client, method, path):
    response = api_client.generic(method, path)
    assert response.status_code == 404, response.content
    assert response["Content-Type"] == "application/json"
    if method != "HEAD":  # a HEAD answer has no body
        assert response.json()["error"]["code"] == "not_found"
    assert "Allow" not in response


def test_an_unforeseen_failure_is_a_json_500_under_api_and_a_page_elsewhere(
    api_client, monkeypatch, settings
):
    settings.DEBUG = False
    monkeypatch.setattr(views.WhoAmIView, "get", lambda self, request: 1 / 0)
    api_client.raise_request_exception = False  # answered as in production, not re-raised
    response = api_client.get("/api/v1/whoami")
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "internal_error"

    page = server_error(RequestFactory().get("/portal/memories/"))
    assert page.status_code == 500 and b"Something went wrong" in page.content


def test_an_unforeseen_failure_is_a_json_500_under_api_with_debug_on_too(
    api_client, monkeypatch, settings, caplog
):
    """``make run`` serves with DEBUG on: the API answered a failure with Django's HTML debug
    page (settings and source included) instead of its JSON error."""
    settings.DEBUG = True
    monkeypatch.setattr(views.WhoAmIView, "get", lambda self, request: 1 / 0)
    api_client.raise_request_exception = False
    with caplog.at_level("ERROR", logger="django.request"):
        response = api_client.get("/api/v1/whoami", HTTP_ACCEPT="text/html,*/*")
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == "internal_error"
    assert error["details"]["request_id"] == response["X-Request-ID"]
    [record] = [r for r in caplog.records if r.name == "django.request"]
    assert record.exc_info[0] is ZeroDivisionError  # the traceback is logged, as before


@pytest.mark.parametrize("debug", [False, True])
def test_what_django_answers_itself_is_no_500_with_debug_on_either(
    api_client, monkeypatch, settings, debug
):
    """A body Django finds too large (RequestDataTooBig) is the API's 413, and a Django
    PermissionDenied its 403, with DEBUG on as off: only a failure nobody foresaw is a 500."""
    from django.core.exceptions import PermissionDenied, RequestDataTooBig

    settings.DEBUG = debug
    api_client.raise_request_exception = False
    for raised, status in ((RequestDataTooBig, 413), (PermissionDenied, 403)):

        def fail(self, request, raised=raised):
            raise raised()

        monkeypatch.setattr(views.WhoAmIView, "get", fail)
        response = api_client.get("/api/v1/whoami")
        assert response.status_code == status, (raised, response.content)


def test_a_request_records_when_its_key_was_last_used_to_the_minute(api_client, agent):
    """docs/operations.md's rotation watches the old key's "last used" stop: nothing wrote
    it, so every key read as never used (stop 47's audit). A request records it once a
    minute at most (``LAST_USED_EVERY``); a refused key records nothing."""
    from datetime import timedelta

    from memory_core.models import ApiKey

    key = ApiKey.objects.get(agent=agent, revoked_at=None)
    assert key.last_used_at is None
    assert api_client.get("/api/v1/whoami").status_code == 200
    first = ApiKey.objects.get(pk=key.pk).last_used_at
    assert first is not None
    assert api_client.get("/api/v1/whoami").status_code == 200
    assert ApiKey.objects.get(pk=key.pk).last_used_at == first  # within the minute
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=first - timedelta(minutes=2))
    assert api_client.get("/api/v1/whoami").status_code == 200
    assert ApiKey.objects.get(pk=key.pk).last_used_at > first - timedelta(seconds=1)
    ApiKey.objects.filter(pk=key.pk).update(
        revoked_at=first, last_used_at=first - timedelta(minutes=2)
    )
    assert api_client.get("/api/v1/whoami").status_code == 401
    assert ApiKey.objects.get(pk=key.pk).last_used_at == first - timedelta(minutes=2)
