"""A web request waits for a lock at most ``MEMLEDGER_REQUEST_LOCK_TIMEOUT`` seconds: past it,
503 ``busy`` with nothing changed, instead of a worker held until gunicorn kills it.

A whole tenant's deletion holds the tenant row (``FOR UPDATE``) until it commits, minutes for
a large tenant, and every row the tenant's requests insert (a memory, a trace) waits on it
through its foreign key.
"""

import time

import pytest
from django.db import connection

from memory_core.models import Memory, RetrievalTrace, Tenant
from memory_core.rls import tenant_scope
from tests.deletion.conftest import held_in_another_transaction
from tests.factories import write_body

pytestmark = pytest.mark.django_db(transaction=True)

RETRIEVE = {"query": "How does the user like answers?", "context": {"user_id": "user-1"}}


def tenant_row_held(tenant):
    """Hold ``tenant``'s row as a tenant deletion request does, in another transaction."""
    return held_in_another_transaction(
        tenant.id, lambda: Tenant.objects.select_for_update().get(pk=tenant.id)
    )


def test_requests_waiting_on_a_held_tenant_row_answer_503_busy(settings, api_client, tenant):
    settings.MEMLEDGER_REQUEST_LOCK_TIMEOUT = 0.5
    assert api_client.post("/api/v1/memories", write_body(), format="json").status_code == 201
    with tenant_row_held(tenant):
        for url, body in (
            ("/api/v1/memories", write_body(memory_key="style.tone", content="Warm tone.")),
            ("/api/v1/retrieve", RETRIEVE),
        ):
            started = time.monotonic()
            response = api_client.post(url, body, format="json")
            assert time.monotonic() - started < 5
            assert response.status_code == 503, (url, response.content)
            assert response["Retry-After"] == "5"
            error = response.json()["error"]
            assert error["code"] == "busy" and "MEMLEDGER_REQUEST_LOCK_TIMEOUT" in error["message"]
    with tenant_scope(tenant.id):
        assert Memory.objects.count() == 1 and not RetrievalTrace.objects.exists()


def test_the_timeout_is_the_requests_own(settings, api_client, tenant):
    """Set for the request's transaction only: the connection goes back to no limit."""
    settings.MEMLEDGER_REQUEST_LOCK_TIMEOUT = 0.5
    assert api_client.post("/api/v1/retrieve", RETRIEVE, format="json").status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('lock_timeout')")
        assert cursor.fetchone()[0] == "0"


def test_a_portal_page_waiting_on_a_held_tenant_row_answers_a_503_page(settings, client, tenant):
    """The portal's answer is a page in the portal's words, not a plain text line."""
    from django.urls import reverse

    from tests.factories import MemoryFactory, SubjectFactory
    from tests.portal.conftest import make_login

    settings.MEMLEDGER_REQUEST_LOCK_TIMEOUT = 0.5
    subject = SubjectFactory(tenant=tenant)
    memory = MemoryFactory(subject=subject, content="Alice prefers tabs.")
    client.force_login(make_login("alice", tenant=tenant, role="end_user", subject=subject))
    url = reverse("portal:memory-correct", args=[memory.pk])
    with tenant_row_held(tenant):
        response = client.post(url, {"content": "Alice prefers spaces."})
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response["Content-Type"].startswith("text/html")
    body = response.content.decode()
    assert "Other work held what this request needs" in body and "Nothing was changed" in body
    with tenant_scope(tenant.id):
        assert not Memory.objects.filter(supersedes=memory).exists()
