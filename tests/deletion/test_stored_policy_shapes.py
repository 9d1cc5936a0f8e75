"""A stored policy whose ``retention`` section is not a JSON object (a version stored before
``policy_errors`` checked sections: commit 040221d, "a stored section that is not an object
reads as absent").

Retrieval (``RetrievalPolicy.from_document``), the portal (``selectors.policy.active_retention``)
and the journal (``policy_check.retention_as_swept``) read such a section as absent, as the
commit promised. The retention sweep and admission did not until stop 53 (its audit of
retention): the sweep's part of the tenant failed on every run, and every write of the tenant
answered 500. Every reader takes the section through ``policy_defaults.stored_section`` now.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_core.deletion.retention import retention_apply
from memory_core.models import PolicyVersion, RetrievalTrace
from memory_core.policy_check import retention_as_swept
from tests.factories import write_body

pytestmark = pytest.mark.django_db


# Documents no path publishes today (``policy_errors``: "Must be a JSON object."), as a
# version stored before sections were checked may hold them.
STORED = [
    pytest.param({"retention": ["x"]}, id="retention-a-list"),
    pytest.param({"retention": "90 days"}, id="retention-a-string"),
    pytest.param(["x"], id="document-a-list"),
]


def _store(tenant, document) -> dict:
    PolicyVersion.objects.filter(tenant=tenant, is_active=True).update(document=document)
    return PolicyVersion.objects.get(tenant=tenant, is_active=True).document


@pytest.mark.parametrize("stored", STORED)
def test_a_stored_retention_section_that_is_not_an_object_does_not_stop_the_trace_sweep(
    tenant, stored
):
    """docs/operations.md ("Retention", step 3): traces older than ``trace_days`` are
    deleted, "(default 30; null keeps them)"; a policy stored before today's checks is read
    so that "no sweep fails on it". ``retention_as_swept`` (what the journal says "the
    retention sweep reads") reads this document as trace_days 30, and retrieval reads the
    section as absent.

    The sweep instead raised (``_trace_cutoffs``: ``{**["x"]}`` TypeError;
    ``_tenant_retention_delete``: ``["x"].get`` AttributeError) for every step of the
    tenant, on every run: the tenant is listed in ``tenant_failures`` three times and its
    traces and refused requests are kept forever."""
    document = _store(tenant, stored)
    assert retention_as_swept(document)["trace_days"] == 30  # what the journal says it reads
    old = RetrievalTrace.objects.create(tenant=tenant, mode="hybrid", stages={"counts": {}})
    RetrievalTrace.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=40))

    result = retention_apply()

    assert result["tenant_failures"] == []
    assert not RetrievalTrace.objects.filter(pk=old.pk).exists()


@pytest.mark.parametrize("stored", STORED)
def test_a_stored_retention_section_that_is_not_an_object_does_not_fail_every_write(
    tenant, api_client, stored
):
    """docs/operations.md:474-478: a policy stored before today's checks is read so that "no
    write answers 500" (and memory_core/retrieval/policy.py, ``from_document``: "A section
    that is not an object counts as absent ... this keeps one stored another way from
    failing every read"). ``admission.policy.policy_section``
    does ``dict.update(["x"])`` (ValueError): every write of the tenant answered 500."""
    _store(tenant, stored)

    response = api_client.post("/api/v1/memories", write_body(), format="json")

    assert response.status_code < 500, response.content[:300]
