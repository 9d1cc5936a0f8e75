"""A policy document's numbers no float holds, and a stored invalid version published again
from the admin (stop 47's audit): an OverflowError failed the checks, the admin form, publishing
and every sweep of the tenant that stored one; the admin's "Publish the selected version
again" answered 500 on a version stored before today's bounds."""

import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from memory_core.exceptions import ValidationFailed
from memory_core.models import MemoryClass, MemoryType, PolicyVersion
from memory_core.policy_check import policy_errors, retention_period
from memory_core.services.policy import policy_publish
from tests.factories import MemoryFactory, SubjectFactory

HUGE = 10**400  # a JSON integer of 401 digits: json.loads gives a Python int, not inf


def test_policy_errors_names_a_huge_integer_retention():
    errors = policy_errors({"retention": {"episodic_days": HUGE}})
    assert "retention.episodic_days" in errors


def test_policy_errors_names_a_huge_integer_elsewhere():
    errors = policy_errors({"budget": {"max_items": HUGE}})
    assert "budget.max_items" in errors


@pytest.mark.django_db
def test_policy_publish_refuses_a_huge_integer_with_validation_failed(tenant):
    active = PolicyVersion.objects.get(tenant=tenant, is_active=True)
    with pytest.raises(ValidationFailed):
        policy_publish(tenant=tenant, document={"retention": {"trace_days": HUGE}})
    assert PolicyVersion.objects.get(tenant=tenant, is_active=True) == active


@pytest.mark.django_db
def test_the_admin_form_refuses_a_huge_integer_document(tenant):
    from memory_core.admin import PolicyVersionForm

    document = '{"retention": {"episodic_days": 1' + "0" * 400 + "}}"
    assert json.loads(document)["retention"]["episodic_days"] == HUGE
    form = PolicyVersionForm(data={"tenant": tenant.pk, "note": "", "document": document})
    assert not form.is_valid()
    assert "retention.episodic_days" in str(form.errors["document"])


def test_retention_period_never_raises_on_a_stored_huge_integer():
    # Documented: "Never raises" -- a stored value past RETENTION_MAX counts as that most.
    assert retention_period({"episodic_days": HUGE}, "episodic_days") == timedelta(days=36_500)


@pytest.mark.django_db
def test_a_stored_huge_integer_neither_fails_the_sweep_nor_deletes(tenant):
    from memory_core.deletion.retention import retention_apply

    owner = SubjectFactory(tenant=tenant)
    created = timezone.now() - timedelta(days=200)
    MemoryFactory(
        subject=owner,
        memory_type=MemoryType.EPISODE,
        memory_class=MemoryClass.EPISODIC,
        created_at=created,
        valid_from=created,
    )
    # Stored as a policy that predates the bounds (not through policy_publish).
    PolicyVersion.objects.filter(tenant=tenant, is_active=True).update(
        document={"retention": {"episodic_days": HUGE}}
    )
    result = retention_apply()
    assert result["tenant_failures"] == []
    assert result["memories_deleted"] == 0


@pytest.mark.django_db
def test_admin_publish_again_of_a_stored_invalid_version_gives_a_message(client, tenant):
    """A version stored before a bound (docs/operations.md: 'A policy stored before these
    bounds') selected for "Publish the selected version again": policy_publish refuses it;
    the admin should say so, not answer 500."""
    first = PolicyVersion.objects.get(tenant=tenant, is_active=True)
    old = PolicyVersion.objects.create(
        tenant=tenant,
        version=first.version + 1,
        document={"retention": {"episodic_days": -5}},
        is_active=False,
        note="stored before the bounds",
    )
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    client.raise_request_exception = False
    response = client.post(
        "/admin/memory_core/policyversion/",
        {"action": "publish_again", "_selected_action": [str(old.pk)]},
        follow=True,
    )
    assert response.status_code == 200
    assert PolicyVersion.objects.get(tenant=tenant, is_active=True) == first
    assert "episodic_days" in response.content.decode()


def test_a_memory_whose_retention_ends_past_any_date_has_no_end():
    """created_at + the class's period past the year 9999 raised OverflowError."""
    from datetime import UTC, datetime
    from types import SimpleNamespace

    from memory_core.policy_check import memory_expiry

    row = SimpleNamespace(
        memory_class=MemoryClass.EPISODIC,
        authority="explicit_user",
        created_at=datetime(9999, 12, 1, tzinfo=UTC),
        valid_until=None,
    )
    expiry = memory_expiry(row, {"episodic_days": 90})
    assert (expiry.at, expiry.by_retention) == (None, False)
    row.valid_until = datetime(9999, 12, 2, tzinfo=UTC)
    assert memory_expiry(row, {"episodic_days": 90}).at == row.valid_until


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "path"), [("get", "/portal/"), ("post", "/portal/export/")])
def test_a_stored_memory_written_near_the_year_9999_does_not_break_the_portal(
    tenant, client, settings, tmp_path, method, path
):
    """Stored by an import before it refused a created_at to come: the person's list and
    export answered 500 (OverflowError in memory_expiry)."""
    from datetime import UTC, datetime

    from memory_core.models import PortalMembership

    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    subject = SubjectFactory(tenant=tenant, external_id="alice-subject")
    written = datetime(9999, 12, 1, tzinfo=UTC)
    MemoryFactory(
        subject=subject,
        content="The nightly deploy of the atlas service failed on a full disk.",
        incident=True,
        created_at=written,
        valid_from=written,
    )
    user = get_user_model().objects.create_user("alice", password="pw-alice-123")
    PortalMembership.objects.create(user=user, tenant=tenant, role="end_user", subject=subject)
    client.force_login(user)
    client.raise_request_exception = False
    response = getattr(client, method)(path)
    assert response.status_code == 200
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert b"full disk" in body


@pytest.mark.django_db
def test_a_class_period_of_0_stored_before_stop_51_is_read_as_1(tenant, api_client):
    """Since stop 51 a class's period of 0 is refused on publication (a write of the class
    ended as it started: a 500 on every one). One stored before is read as the least it may
    say now, 1, and the tenant's writes of the class are answered (stop 51's review)."""
    import copy

    from memory_core.policy_defaults import DEFAULT_POLICY
    from tests.factories import write_body

    assert retention_period({"working_hours": 0}, "working_hours") == timedelta(hours=1)
    assert retention_period({"episodic_days": 0}, "episodic_days") == timedelta(days=1)
    assert retention_period({"trace_days": 0}, "trace_days") == timedelta(0)  # may say 0
    document = copy.deepcopy(DEFAULT_POLICY)
    document["retention"]["working_hours"] = 0
    PolicyVersion.objects.filter(tenant=tenant).update(is_active=False)
    PolicyVersion.objects.create(tenant=tenant, version=2, document=document, is_active=True)
    answer = api_client.post(
        "/api/v1/memories",
        write_body(memory_type="task_state", memory_key="task.step", session_id="s-1",
                   task_id="t-1", content="Step 2 of the migration is done."),
        format="json",
    )  # fmt: skip
    assert answer.status_code == 201, answer.json()
    assert "ttl.defaulted" in answer.json()["rule_codes"]
