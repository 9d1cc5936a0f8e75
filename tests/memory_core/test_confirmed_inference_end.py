"""A correction does not carry over an end that admission defaulted.

DESIGN.md: "model inference gets low authority, low TTL"; an inference "should decay quickly
unless confirmed" (the seed). A confirmation (or the portal's correction) sends the content
alone, and its new version copied the corrected memory's valid_until: the one admission had
defaulted from ``inferred_days``, so the person's confirmed word ended when the guess would
have. An end its writer asked for is still kept (``tests/portal/test_end_user.py``).
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_core.principals import SubjectPrincipal
from memory_core.services.writes import memory_confirm, memory_correct, memory_write

pytestmark = pytest.mark.django_db


def inference(subject, **overrides) -> dict:
    return {
        "subject": subject.external_id,
        "memory_type": "project_constraint",
        "memory_key": "db.engine",
        "scope": "project:atlas",
        "content": "Project atlas stores its data in PostgreSQL.",
        "source": {"type": "model_inference", "conversation_id": "c-1", "message_id": "m-2"},
        **overrides,
    }


def owner_of(memory) -> SubjectPrincipal:
    return SubjectPrincipal(tenant_id=memory.tenant_id, subject_id=memory.subject_id, user_id=1)


def test_a_confirmed_inference_ends_as_the_persons_own_word(agent_principal, subject):
    guessed = memory_write(principal=agent_principal, data=inference(subject))
    assert "ttl.defaulted" in guessed.rule_codes and guessed.memory.valid_until is not None

    confirmed = memory_confirm(principal=owner_of(guessed.memory), memory_id=guessed.memory.id)

    assert confirmed.decision == "accepted", confirmed.rule_codes
    assert confirmed.memory.authority == "explicit_user"
    # A project constraint the person states has no end by the default policy.
    assert confirmed.memory.valid_until is None


def test_a_confirmation_keeps_an_end_its_writer_asked_for(agent_principal, subject):
    ends = timezone.now() + timedelta(days=10)
    guessed = memory_write(
        principal=agent_principal, data=inference(subject, valid_until=ends.isoformat())
    )
    assert "ttl.defaulted" not in guessed.rule_codes

    confirmed = memory_confirm(principal=owner_of(guessed.memory), memory_id=guessed.memory.id)

    assert confirmed.memory.valid_until == ends


def test_an_agents_correction_of_an_inference_gets_its_own_default_end(agent_principal, subject):
    """Still an inference: admission defaults its end again, from the correction's write."""
    guessed = memory_write(principal=agent_principal, data=inference(subject))
    corrected = memory_correct(
        principal=agent_principal,
        memory_id=guessed.memory.id,
        data={
            "content": "Project atlas stores its data in PostgreSQL 16.",
            "source": {"type": "model_inference", "conversation_id": "c-1", "message_id": "m-3"},
        },
    )
    assert corrected.decision == "accepted", corrected.rule_codes
    assert "ttl.defaulted" in corrected.rule_codes
    assert corrected.memory.valid_until > guessed.memory.valid_until
