"""A rejected write's rule codes: the 422's, its AdmissionDecision row's and the reviewers'
"rejected writes by rule" page's say why it was refused, never how it would have been kept."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from memory_core.models import AdmissionDecision, PortalMembership
from memory_core.principals import ReviewerPrincipal
from memory_core.selectors.portal import rejected_by_rule
from tests.api.test_memories import URL
from tests.api.test_memories import body as preference_body

pytestmark = pytest.mark.django_db

# The codes that say the write was stored, or waits for a reviewer (docs/api.md's table).
SAID_ADMITTED = {"sensitivity.review_required", "class.pointer"}


def body(**overrides):
    """An episode without a key (``test_memories.body`` writes a preference on a key)."""
    episode = {"memory_type": "episode", "content": "User has asthma and skips the stairs."}
    data = preference_body(**{**episode, **overrides})
    del data["memory_key"]
    return data


def test_a_sensitive_write_refused_for_its_past_end_is_not_said_to_wait_for_a_reviewer(
    api_client, tenant
):
    """Stop 57's audit of admission found a sensitive episode with a past ``valid_until``
    answered 422 with ``["sensitivity.review_required", "ttl.in_past"]``, and counted on the
    reviewers' "rejected writes by rule" page under "a reviewer must approve the write before
    it is used". The 422, its decision and the page list ``ttl.in_past`` alone now."""
    past = (timezone.now() - timedelta(hours=1)).isoformat()

    response = api_client.post(URL, body(valid_until=past), format="json")

    assert response.status_code == 422, response.json()
    assert response.json()["rule_codes"] == ["ttl.in_past"]
    decision = AdmissionDecision.objects.get(pk=response.json()["admission_decision_id"])
    assert decision.rule_codes == ["ttl.in_past"]
    user = get_user_model().objects.create_user("rev-audit")
    PortalMembership.objects.create(user=user, tenant=tenant, role="reviewer")
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=user.id)
    groups = {group.rule_code: group.count for group in rejected_by_rule(principal=reviewer)}
    assert not SAID_ADMITTED & set(groups), groups
    assert groups == {"ttl.in_past": 1}


def test_a_pointer_refused_for_its_consent_is_not_said_to_be_stored_as_a_pointer(api_client):
    """Stop 57's audit of admission found a pointer value written by a model's inference
    claiming explicit consent answered 422 with ``["class.pointer",
    "consent.explicit_not_allowed"]`` ("Stored as a pointer to the owning system"), and its
    decision row kept both. Both list the consent's refusal alone now."""
    response = api_client.post(
        URL,
        body(
            content="The user's latest invoice.",
            value={"system": "billing", "reference": "INV-1"},
            source={"type": "model_inference", "conversation_id": "c-1", "message_id": "m-2"},
            consent="explicit",
        ),
        format="json",
    )

    assert response.status_code == 422, response.json()
    assert response.json()["rule_codes"] == ["consent.explicit_not_allowed"]
    decision = AdmissionDecision.objects.get(pk=response.json()["admission_decision_id"])
    assert decision.rule_codes == ["consent.explicit_not_allowed"]
