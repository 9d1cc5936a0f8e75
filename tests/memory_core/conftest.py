"""Fixtures of the domain's tests."""

import pytest

from memory_core.models import ReviewItem
from memory_core.principals import ReviewerPrincipal
from memory_core.services.conflicts import conflict_resolve
from memory_core.services.writes import WriteResult, memory_write
from tests.factories import write_body

INFERRED = {"type": "model_inference", "conversation_id": "c-2", "message_id": "m-2"}


@pytest.fixture
def reviewer(tenant, django_user_model) -> ReviewerPrincipal:
    """A reviewer of ``tenant``, as the service functions take one."""
    user = django_user_model.objects.create_user("memory-core-reviewer")
    return ReviewerPrincipal(tenant_id=tenant.id, user_id=user.id)


def stated_then_inferred(
    stated_by, inferred_by, *, key: str, inference: str
) -> tuple[WriteResult, WriteResult]:
    """The person's statement on ``key``, then a model's ``inference`` on it: of lower
    authority, the inference opens a conflict beside the statement. Return both writes."""
    stated = memory_write(
        principal=stated_by,
        data=write_body(memory_key=key, content="User prefers vegetarian meals."),
    )
    inferred = memory_write(
        principal=inferred_by,
        data=write_body(memory_key=key, content=inference, source=INFERRED),
    )
    return stated, inferred


def keep_both_open_conflict(reviewer, reason: str) -> ReviewItem:
    """A reviewer keeps both rows of the one open conflict (``keep_both_scoped``); return it."""
    item = ReviewItem.objects.get(kind="conflict", state="open")
    conflict_resolve(principal=reviewer, item_id=item.id, outcome="keep_both_scoped", reason=reason)
    return item
