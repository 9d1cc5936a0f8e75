"""A retrieval for a user memledger does not know yet stores a trace without a subject, named
by the digest of the user's id (``RetrievalTrace.user_id_sha256``): the user's deletion, once
they are known, removes it with their other traces."""

import unicodedata

import pytest

from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import deletion_request
from memory_core.models import RetrievalTrace
from memory_core.principals import SubjectPrincipal
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db


def test_a_subjects_deletion_removes_the_traces_made_before_they_were_known(tenant):
    """Stop 58's audit of authentication gave such a trace the digest, by which a subject
    token for the user reads it: it names the person, so their deletion takes it."""
    client = client_for(AgentFactory(tenant=tenant))

    def trace_for(user_id):
        body = {"query": "Which database does the project use?", "context": {"user_id": user_id}}
        return client.post("/api/v1/retrieve", body, format="json").json()["trace_id"]

    # From a macOS client (NFD); the subject is known later by the same name in NFC.
    theirs = trace_for(unicodedata.normalize("NFD", "José"))
    anothers = trace_for("passer-by")
    subject = SubjectFactory(tenant=tenant, external_id="José")
    MemoryFactory(subject=subject, content="Prefers tea.")

    principal = SubjectPrincipal(tenant_id=tenant.id, subject_id=subject.id, user_id=1)
    operation = deletion_request(principal=principal, subject_id=subject.id)
    assert deletion_run(operation_id=operation.id) == "completed"
    assert not RetrievalTrace.objects.filter(pk=theirs).exists()
    assert RetrievalTrace.objects.filter(pk=anothers).exists()
