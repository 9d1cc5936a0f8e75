"""Portal fixtures: two end users and a reviewer in one tenant, a reviewer in another tenant,
a login without membership, and a memory for each subject."""

import pytest
from django.contrib.auth import get_user_model

from memory_core.models import PortalMembership
from tests.factories import MemoryFactory, SubjectFactory

PASSWORD = "portal-test-password"


def make_login(username, *, tenant=None, role=None, subject=None):
    user = get_user_model().objects.create_user(username, password=PASSWORD)
    if role:
        PortalMembership.objects.create(user=user, tenant=tenant, role=role, subject=subject)
    return user


@pytest.fixture
def alice_subject(tenant):
    return SubjectFactory(tenant=tenant, external_id="alice-subject")


@pytest.fixture
def bob_subject(tenant):
    return SubjectFactory(tenant=tenant, external_id="bob-subject")


@pytest.fixture
def stranger_subject(other_tenant):
    return SubjectFactory(tenant=other_tenant, external_id="stranger-subject")


@pytest.fixture
def alice(alice_subject):
    return make_login("alice", tenant=alice_subject.tenant, role="end_user", subject=alice_subject)


@pytest.fixture
def bob(bob_subject):
    return make_login("bob", tenant=bob_subject.tenant, role="end_user", subject=bob_subject)


@pytest.fixture
def reviewer(tenant):
    return make_login("reviewer", tenant=tenant, role="reviewer")


@pytest.fixture
def other_reviewer(other_tenant):
    return make_login("other-reviewer", tenant=other_tenant, role="reviewer")


@pytest.fixture
def no_membership(db):
    return make_login("nobody")


@pytest.fixture
def alice_memory(alice_subject):
    return MemoryFactory(
        subject=alice_subject,
        content="Alice prefers tabs over spaces.",
        memory_key="style.indent",
    )


@pytest.fixture
def bob_memory(bob_subject):
    return MemoryFactory(subject=bob_subject, content="Bob likes long tutorials.")


@pytest.fixture
def stranger_memory(stranger_subject):
    return MemoryFactory(subject=stranger_subject, content="Stranger in another tenant.")


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client


@pytest.fixture
def reviewer_client(client, reviewer):
    client.force_login(reviewer)
    return client
