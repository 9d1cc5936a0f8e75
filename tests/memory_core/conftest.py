"""Fixtures of the domain's tests."""

import pytest

from memory_core.principals import ReviewerPrincipal


@pytest.fixture
def reviewer(tenant, django_user_model) -> ReviewerPrincipal:
    """A reviewer of ``tenant``, as the service functions take one."""
    user = django_user_model.objects.create_user("memory-core-reviewer")
    return ReviewerPrincipal(tenant_id=tenant.id, user_id=user.id)
