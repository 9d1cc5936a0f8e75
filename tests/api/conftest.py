"""Fixtures of the API tests."""

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from memory_core.models import PortalMembership


@pytest.fixture
def reviewer(tenant):
    """A client logged in to the portal as a reviewer of ``tenant`` (the reviewer API's
    authentication: its session, CSRF enforced)."""
    user = get_user_model().objects.create_user("reviewer", password="pw-rev-12345")
    PortalMembership.objects.create(user=user, tenant=tenant, role="reviewer")
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    return client
