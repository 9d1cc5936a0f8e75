"""The Django admin is platform work: a staff user sees every tenant's rows (platform mode)."""

import pytest
from django.contrib.auth import get_user_model

from tests.factories import MemoryFactory, SubjectFactory


@pytest.mark.django_db
def test_admin_changelist_shows_every_tenant_to_staff_only(client, tenant, other_tenant):
    mine = MemoryFactory(subject=SubjectFactory(tenant=tenant), content="Tenant one row.")
    theirs = MemoryFactory(subject=SubjectFactory(tenant=other_tenant), content="Tenant two row.")
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    response = client.get("/admin/memory_core/memory/")
    assert response.status_code == 200
    body = response.content.decode()
    assert str(mine.memory_key) in body and str(theirs.memory_key) in body
    client.logout()
    assert client.get("/admin/memory_core/memory/").status_code == 302  # to the login page
