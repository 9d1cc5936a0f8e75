"""Every admin action names the permission it needs (stop 52's audit of the admin).

Django offers an action to anyone who may see the list unless the action names
``allowed_permissions``; none of memledger's did, so a staff login that could only view
tenants deleted one, and one that could only view agents reactivated a deactivated agent."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from memory_core.models import Agent, Tenant
from memory_core.services.api_keys import agent_deactivate
from tests.factories import MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db

# (the list, its action, the view permission, the permission the action needs; None: a
# superuser's only)
ACTIONS = [
    ("tenant", "request_tenant_deletion", "view_tenant", None),
    ("subject", "request_subject_deletion", "view_subject", "delete_subject"),
    ("agent", "deactivate_agents", "view_agent", "change_agent"),
    ("agent", "reactivate_agents", "view_agent", "change_agent"),
    ("apikey", "revoke_keys", "view_apikey", "change_apikey"),
    ("memory", "request_deletion", "view_memory", "delete_memory"),
    ("policyversion", "publish_again", "view_policyversion", "add_policyversion"),
    ("deletionoperation", "retry_failed", "view_deletionoperation", "change_deletionoperation"),
]


def _staff(client, *codenames):
    staff = get_user_model().objects.create_user("operator", password="pw-12345", is_staff=True)
    staff.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client.force_login(staff)


def _offered(client, model) -> set:
    page = client.get(f"/admin/memory_core/{model}/")
    assert page.status_code == 200
    form = page.context["action_form"]  # None: no action at all
    return {name for name, _ in form.fields["action"].choices if name} if form else set()


@pytest.mark.parametrize(("model", "action", "view", "needed"), ACTIONS)
def test_a_login_that_may_only_view_is_offered_no_action(client, model, action, view, needed):
    _staff(client, view)
    assert action not in _offered(client, model)
    if needed is not None:
        client.logout()
        get_user_model().objects.filter(username="operator").delete()
        _staff(client, view, needed)
        assert action in _offered(client, model)


def test_a_view_only_login_cannot_delete_a_whole_tenant(client, tenant):
    MemoryFactory(subject=SubjectFactory(tenant=tenant))
    _staff(client, "view_tenant", "delete_tenant", "change_tenant")  # still no superuser
    client.post(
        "/admin/memory_core/tenant/",
        {"action": "request_tenant_deletion", "_selected_action": [str(tenant.pk)]}
        | {"confirmed": "yes"},
    )
    assert Tenant.objects.get(pk=tenant.pk).deleted_at is None


def test_a_view_only_login_cannot_reactivate_an_agent(client, agent):
    agent_deactivate(agent=agent)
    _staff(client, "view_agent")
    client.post(
        "/admin/memory_core/agent/",
        {"action": "reactivate_agents", "_selected_action": [str(agent.pk)], "index": "0"},
    )
    assert not Agent.objects.get(pk=agent.pk).is_active
