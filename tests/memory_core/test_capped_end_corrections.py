"""An end admission capped (``ttl.capped``) is worked out again for a correction, as a
defaulted one is (stop 50's audit).

docs/api.md (supersede): an end admission set is worked out again for the new version, so a
confirmed inference no longer ends on the inference's `inferred_days`; docs/portal.md
(confirm): the new version "ends as the person's own word would". When the inference's writer
had asked for a longer end, admission capped it to `inferred_days` and the confirmation, and
every correction after it, copied that cap.
"""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from memory_core.models import Memory, PortalMembership, Subject

pytestmark = pytest.mark.django_db


def test_a_confirmed_inference_whose_asked_end_was_capped_outlives_the_inference_cap(
    api_client, tenant
):
    asked = timezone.now() + timedelta(days=365)
    response = api_client.post(
        "/api/v1/memories",
        {
            "subject": "user-42",
            "memory_type": "project_constraint",
            "memory_key": "db.engine",
            "scope": "project:atlas",
            "content": "Project atlas stores its data in PostgreSQL.",
            "source": {"type": "model_inference", "conversation_id": "c-1", "message_id": "m-2"},
            "valid_until": asked.isoformat(),
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert "ttl.capped" in response.json()["rule_codes"]
    guessed = Memory.objects.get(pk=response.json()["memory"]["id"])
    # Capped at the inference's retention (inferred_days, 30 by default).
    assert guessed.valid_until < timezone.now() + timedelta(days=31)

    subject = Subject.objects.get(tenant=tenant, external_id="user-42")
    user = get_user_model().objects.create_user("u42", password="pw-12345678")
    PortalMembership.objects.create(user=user, tenant=tenant, role="end_user", subject=subject)
    portal = Client()
    portal.force_login(user)
    assert portal.post(f"/portal/memories/{guessed.id}/confirm/").status_code == 302

    confirmed = Memory.objects.get(supersedes=guessed)
    assert confirmed.authority == "explicit_user"
    # The person's own word is not ended by the guess's inferred_days: a project constraint
    # they state has no retention limit by default, and the writer had asked for a year.
    assert confirmed.valid_until is None or confirmed.valid_until > guessed.valid_until, (
        f"confirmed version ends {confirmed.valid_until}, the inference's cap"
    )


def test_a_correction_of_an_episode_whose_asked_end_was_capped_gets_its_own_retention(
    agent_principal, subject
):
    """An end admission capped is the class's retention counted from the first write, as a
    defaulted one is: a correction re-defaults a defaulted end from its own write, but copies
    a capped one, so asking for a longer life gave the corrected memory a shorter one."""
    from memory_core.services.writes import memory_correct, memory_write

    def episode(**extra):
        return {
            "subject": subject.external_id,
            "memory_type": "incident",
            "memory_key": "incident.deploy_outage",
            "scope": "project:atlas",
            "content": "The Friday deploy of project atlas failed on a missing migration.",
            "source": {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"},
            **extra,
        }

    asked = memory_write(
        principal=agent_principal,
        data=episode(valid_until=(timezone.now() + timedelta(days=365)).isoformat()),
    )
    defaulted = memory_write(
        principal=agent_principal, data=episode(memory_key="incident.other_outage")
    )
    assert "ttl.capped" in asked.rule_codes and "ttl.defaulted" in defaulted.rule_codes
    # Both end at the episodic retention (90 days) from their write.
    Memory.objects.filter(pk__in=[asked.memory.pk, defaulted.memory.pk]).update(
        created_at=timezone.now() - timedelta(days=60),
        valid_from=timezone.now() - timedelta(days=60),
        valid_until=timezone.now() + timedelta(days=30),
    )
    correction = {
        "content": "The Friday deploy of project atlas failed on a missing database migration.",
        "source": {"type": "user_input", "conversation_id": "c-2", "message_id": "m-2"},
    }
    from_defaulted = memory_correct(
        principal=agent_principal, memory_id=defaulted.memory.pk, data=correction
    )
    from_asked = memory_correct(
        principal=agent_principal, memory_id=asked.memory.pk, data=correction
    )
    assert from_defaulted.decision == from_asked.decision == "accepted"
    # The defaulted one's correction lives 90 days from now; the one whose writer asked for
    # a year must not end 60 days sooner.
    assert from_defaulted.memory.valid_until > timezone.now() + timedelta(days=89)
    assert from_asked.memory.valid_until > timezone.now() + timedelta(days=89), (
        f"the correction ends {from_asked.memory.valid_until}: the first write's capped end"
    )
