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
    # The person's own word is not ended by the guess's inferred_days, nor left without the
    # end its writer asked for: a project constraint they state has no retention limit by
    # default, so it ends on the year asked (the stop's review: it was left with no end).
    assert confirmed.valid_until is not None, "the confirmed version has no end at all"
    assert abs(confirmed.valid_until - asked) < timedelta(seconds=1), (
        f"confirmed version ends {confirmed.valid_until}, not on the {asked} asked"
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


def _infer_and_confirm(api_client, tenant, days: int, n: int) -> tuple[Memory, Memory]:
    asked = timezone.now() + timedelta(days=days)
    response = api_client.post(
        "/api/v1/memories",
        {
            "subject": f"user-{n}",
            "memory_type": "project_constraint",
            "memory_key": "travel.city",
            "scope": "project:atlas",
            "content": "The user is working from the Lisbon office this month.",
            "source": {"type": "model_inference", "conversation_id": "c-1", "message_id": f"m-{n}"},
            "valid_until": asked.isoformat(),
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    guessed = Memory.objects.get(pk=response.json()["memory"]["id"])
    subject = Subject.objects.get(tenant=tenant, external_id=f"user-{n}")
    user = get_user_model().objects.create_user(f"u{n}", password="pw-12345678")
    PortalMembership.objects.create(user=user, tenant=tenant, role="end_user", subject=subject)
    portal = Client()
    portal.force_login(user)
    assert portal.post(f"/portal/memories/{guessed.id}/confirm/").status_code == 302
    return guessed, Memory.objects.get(supersedes=guessed)


@pytest.mark.parametrize("days", [29, 31])
def test_a_confirmed_inference_never_outlives_the_end_its_writer_asked_for(
    api_client, tenant, days
):
    """The writer asked the fact to hold ``days`` days (inferred_days is 30 by default). Asked
    29 days (not capped), the confirmation keeps that end; asked 31 (capped to 30), the
    confirmation drops the end altogether and the time-bounded fact is used forever: asking
    for one more day gave an unbounded life."""
    guessed, confirmed = _infer_and_confirm(api_client, tenant, days, days)
    asked = guessed.created_at + timedelta(days=days)
    assert confirmed.valid_until is not None, "the confirmed version has no end at all"
    assert confirmed.valid_until <= asked + timedelta(minutes=1)
