"""A read-only database (a failover to a standby, ``default_transaction_read_only``): writes
and retrievals answer 503 ``memory_unavailable`` with Retry-After, as when the database is
down, in the API and the portal, and the readiness probe says not ready with a named reason.

The session of the test's connection (the one the test client's requests use) is switched
to read-only and back: PostgreSQL refuses every write of it with SQLSTATE 25006, as a hot
standby does.
"""

import contextlib

import pytest
from django.db import connection
from django.urls import reverse

from memory_core.readiness import readiness_forget
from tests.factories import MemoryFactory, write_body
from tests.portal.conftest import make_login

pytestmark = pytest.mark.django_db(transaction=True)


@contextlib.contextmanager
def read_only():
    with connection.cursor() as cursor:
        cursor.execute("SET default_transaction_read_only = on")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET default_transaction_read_only")


def _assert_unavailable(response):
    assert response.status_code == 503, response.content
    assert response.json()["error"]["code"] == "memory_unavailable"
    assert response["Retry-After"] == "5"


def test_writes_and_retrievals_answer_503_when_the_database_is_read_only(api_client, subject):
    with read_only():
        _assert_unavailable(api_client.post("/api/v1/memories", write_body(), format="json"))
        _assert_unavailable(
            api_client.post(
                "/api/v1/retrieve",
                {"query": "answers", "context": {"user_id": subject.external_id}},
                format="json",
            )
        )


def test_a_portal_write_answers_the_503_page_when_the_database_is_read_only(client, subject):
    user = make_login("alice", tenant=subject.tenant, role="end_user", subject=subject)
    memory = MemoryFactory(subject=subject)
    client.force_login(user)
    with read_only():
        response = client.post(reverse("portal:memory-revoke", args=[memory.pk]), {})
    assert response.status_code == 503, response.content[:2000]
    assert response["Retry-After"] == "5"
    assert b"unavailable" in response.content


def test_a_read_only_database_is_not_ready(client):
    readiness_forget()
    with read_only():
        response = client.get("/readyz")
    assert response.status_code == 503, response.content
    body = response.json()
    assert body["status"] == "not_ready"
    assert body["checks"]["database"] == {"ok": False, "code": "database_read_only"}
    readiness_forget()
    assert client.get("/readyz").status_code == 200
