"""The Django admin is platform work: a staff user sees every tenant's rows (platform mode)."""

import pytest
from django.contrib.auth import get_user_model
from django.utils.timezone import now

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


@pytest.mark.django_db
def test_the_admin_deletes_memories_only_through_deletion_operations(client, tenant):
    from memory_core.models import DeletionOperation, Memory

    subject = SubjectFactory(tenant=tenant)
    memory = MemoryFactory(subject=subject, content="Row the admin wants gone.")
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    # No hard delete (a cascade would skip every derived store), no edit, no add.
    assert client.get(f"/admin/memory_core/memory/{memory.pk}/delete/").status_code == 403
    assert client.get(f"/admin/memory_core/subject/{subject.pk}/delete/").status_code == 403
    assert client.get(f"/admin/memory_core/tenant/{tenant.pk}/delete/").status_code == 403
    assert client.get("/admin/memory_core/memory/add/").status_code == 403
    edit = client.post(f"/admin/memory_core/memory/{memory.pk}/change/", {"content": "edited"})
    assert edit.status_code in (200, 403)
    assert Memory.objects.get(pk=memory.pk).content == "Row the admin wants gone."
    # The action requests an operation: the row is scrubbed at once, the steps follow.
    response = client.post(
        "/admin/memory_core/memory/",
        {"action": "request_deletion", "_selected_action": [str(memory.pk)]},
    )
    assert response.status_code == 302
    operation = DeletionOperation.objects.get(reason_code="admin")
    assert operation.memory_ids == [memory.pk]
    assert Memory.objects.get(pk=memory.pk).status == "deleted"


@pytest.mark.django_db
def test_the_admin_lists_conflicts_with_their_place_and_keeps_an_issuer_able_to_act(client, tenant):
    from memory_core.models import Agent, ReviewItem

    subject = SubjectFactory(tenant=tenant)
    ReviewItem.objects.create(
        tenant=tenant, subject=subject, kind="conflict", memory_key="deploy.region",
        scope_kind="project", scope_ref="lunest", environment="staging",
    )  # fmt: skip
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    body = client.get("/admin/memory_core/reviewitem/").content.decode()
    assert "project:lunest" in body and "staging" in body

    # The admin refuses the issuing of subject tokens to an agent without any_subject.
    agent = Agent.objects.create(tenant=tenant, name="helper", any_subject=False)
    form = client.get(f"/admin/memory_core/agent/{agent.pk}/change/")
    assert form.status_code == 200
    data = {
        "tenant": str(tenant.pk), "name": "helper", "write_types": "", "read_types": "",
        "max_sensitivity": "sensitive", "issues_subject_tokens": "on", "is_active": "on",
        "created_at_0": "2026-12-01", "created_at_1": "10:00:00",
        "api_keys-TOTAL_FORMS": "0", "api_keys-INITIAL_FORMS": "0",
    }  # fmt: skip
    response = client.post(f"/admin/memory_core/agent/{agent.pk}/change/", data)
    assert response.status_code == 200  # the form again, with the error
    assert "An agent that issues subject tokens must act for any subject." in (
        response.content.decode()
    )
    agent.refresh_from_db()
    assert not agent.issues_subject_tokens


@pytest.mark.django_db
@pytest.mark.parametrize(
    "model", ["memoryevent", "admissiondecision", "reviewitem", "retrievaltrace"]
)
def test_the_admin_never_writes_the_audit_trail(client, tenant, model):
    """An admin added a backdated "approved" event, and the memory's history showed it as its
    first. Events, decisions, review items and traces are written by the services alone."""
    from memory_core.models import MemoryEvent

    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    assert client.get(f"/admin/memory_core/{model}/").status_code == 200  # still shown
    assert client.get(f"/admin/memory_core/{model}/add/").status_code == 403
    if model == "memoryevent":
        memory = MemoryFactory(subject=SubjectFactory(tenant=tenant))
        event = MemoryEvent.objects.create(
            tenant_id=tenant.id, memory_id=memory.pk, action="admitted", actor_type="agent"
        )
        change = f"/admin/memory_core/memoryevent/{event.pk}/"
        forged = client.post(f"{change}change/", {"action": "approved", "actor_id": "x"})
        assert forged.status_code in (200, 403)
        assert MemoryEvent.objects.get(pk=event.pk).action == "admitted"
        assert client.get(f"{change}delete/").status_code == 403


@pytest.mark.django_db
def test_an_admin_revokes_keys_and_they_are_refused_at_once(client, agent):
    """Rotation: a new key (create_agent_key), the clients moved to it, the old one revoked
    in the admin (docs/operations.md, "Agents and their keys")."""
    from rest_framework.test import APIClient

    from memory_core.models import ApiKey
    from memory_core.services.api_keys import api_key_create

    old, raw_old = api_key_create(agent=agent, name="old")
    _, raw_new = api_key_create(agent=agent, name="new")
    api = APIClient()
    assert api.get("/api/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {raw_old}").status_code == 200
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    response = client.post(
        "/admin/memory_core/apikey/",
        {"action": "revoke_keys", "_selected_action": [str(old.pk)]},
    )
    assert response.status_code == 302
    assert ApiKey.objects.get(pk=old.pk).revoked_at is not None
    assert api.get("/api/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {raw_old}").status_code == 401
    assert api.get("/api/v1/whoami", HTTP_AUTHORIZATION=f"Bearer {raw_new}").status_code == 200


@pytest.mark.django_db
def test_a_key_is_revoked_only_by_the_journaled_action(
    client, agent, settings, tmp_path, django_capture_on_commit_callbacks
):
    """Typed into the key's form (or the agent's inline), a revocation was not journaled, so a
    restore from an older backup brought the key back usable; the form could un-revoke too,
    and a key deleted in the admin came back with the backup as well."""
    from memory_core.deletion.ledger import ledger_read
    from memory_core.models import ApiKey
    from memory_core.services.api_keys import api_key_create

    settings.MEMLEDGER_DELETION_LEDGER = str(tmp_path / "journal.jsonl")
    key, _ = api_key_create(agent=agent, name="leaked")
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    change = f"/admin/memory_core/apikey/{key.pk}/change/"
    form = client.get(change).content.decode()
    assert 'name="revoked_at' not in form and 'name="name"' in form
    client.post(change, {"name": "leaked", "revoked_at_0": "2026-12-01", "revoked_at_1": "10:00"})
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None
    inline = client.get(f"/admin/memory_core/agent/{agent.pk}/change/").content.decode()
    assert "api_keys-0-name" in inline and "api_keys-0-revoked_at" not in inline
    assert "api_keys-0-DELETE" not in inline  # a deleted row came back with the backup too
    assert client.post(f"{change}delete/", {"post": "yes"}).status_code == 403
    agent_delete = f"/admin/memory_core/agent/{agent.pk}/delete/"
    assert client.post(agent_delete, {"post": "yes"}).status_code == 403  # deactivated instead

    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            "/admin/memory_core/apikey/",
            {"action": "revoke_keys", "_selected_action": [str(key.pk)]},
        )
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None
    lines = ledger_read(since=now().replace(year=2000))
    assert [line["revoked_key_id"] for line in lines] == [str(key.pk)]


@pytest.mark.django_db
def test_an_admin_retries_dead_lettered_deletions_of_every_tenant(client, tenant, other_tenant):
    """An outage of the cache dead-lettered deletions after their eight runs, and only a
    tenant's reviewer could retry them, one page at a time."""
    from memory_core.models import DeletionOperation

    failed = [
        DeletionOperation.objects.create(
            tenant=owner, target="memory", status="failed", attempts=8, dead_lettered_at=now()
        )
        for owner in (tenant, other_tenant)
    ]
    done = DeletionOperation.objects.create(
        tenant=tenant, target="memory", status="completed", completed_at=now()
    )
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    response = client.post(
        "/admin/memory_core/deletionoperation/",
        {"action": "retry_failed", "_selected_action": [str(op.pk) for op in [*failed, done]]},
    )
    assert response.status_code == 302
    for operation in failed:
        operation.refresh_from_db()
        assert (operation.status, operation.attempts, operation.dead_lettered_at) == (
            "pending",
            0,
            None,
        )
    done.refresh_from_db()
    assert done.status == "completed"


@pytest.mark.django_db
def test_an_agent_is_deactivated_only_by_the_journaled_action(
    client, agent, settings, tmp_path, django_capture_on_commit_callbacks
):
    """Unticked in the agent's form, is_active was not journaled, so a restore from an older
    backup brought the agent back working, keys and all."""
    from memory_core.deletion.ledger import ledger_read
    from memory_core.models import Agent, Tenant
    from memory_core.services.api_keys import api_key_create, api_key_resolve

    settings.MEMLEDGER_DELETION_LEDGER = str(tmp_path / "journal.jsonl")
    _, raw_key = api_key_create(agent=agent)
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    change = f"/admin/memory_core/agent/{agent.pk}/change/"
    assert 'name="is_active"' not in client.get(change).content.decode()
    data = {
        "tenant": str(agent.tenant_id), "name": agent.name, "write_types": "", "read_types": "",
        "max_sensitivity": "sensitive", "any_subject": "on",
        "created_at_0": "2026-12-01", "created_at_1": "10:00:00",
        "api_keys-TOTAL_FORMS": "1", "api_keys-INITIAL_FORMS": "1",
        "api_keys-0-id": str(agent.api_keys.get().pk), "api_keys-0-agent": str(agent.pk),
        "api_keys-0-name": "",
    }  # fmt: skip
    assert client.post(change, data).status_code == 302  # saved, is_active left out
    assert Agent.objects.get(pk=agent.pk).is_active

    def act(action):
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                "/admin/memory_core/agent/",
                {"action": action, "_selected_action": [str(agent.pk)]},
            )
        assert response.status_code == 302

    act("deactivate_agents")
    assert not Agent.objects.get(pk=agent.pk).is_active and api_key_resolve(raw_key) is None
    lines = ledger_read(since=now().replace(year=2000))
    assert [line["deactivated_agent_id"] for line in lines] == [str(agent.pk)]

    act("reactivate_agents")
    row = Agent.objects.get(pk=agent.pk)
    assert (row.is_active, row.deactivated_at) == (True, None)
    assert api_key_resolve(raw_key) is not None
    assert len(ledger_read(since=now().replace(year=2000))) == 1  # not journaled

    act("deactivate_agents")
    Tenant.objects.filter(pk=agent.tenant_id).update(deleted_at=now())
    act("reactivate_agents")  # a deleted tenant's agent stays inactive
    assert not Agent.objects.get(pk=agent.pk).is_active


@pytest.mark.django_db
def test_an_agents_grant_and_a_keys_expiry_saved_in_the_admin_are_journaled(
    client, agent, settings, tmp_path, django_capture_on_commit_callbacks
):
    """Saved with the admin's forms, a grant and an expiry were not journaled: after a
    restore from an older backup a grant narrowed since was wide again, and a key worked past
    the expiry set. The forms save them through agent_grant_set and api_key_expiry_set."""
    from memory_core.deletion.ledger import ledger_read
    from memory_core.models import Agent, ApiKey
    from memory_core.services.api_keys import api_key_create

    settings.MEMLEDGER_DELETION_LEDGER = str(tmp_path / "journal.jsonl")
    key, _ = api_key_create(agent=agent, name="ci")
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    change = f"/admin/memory_core/agent/{agent.pk}/change/"
    form = client.get(change).content.decode()
    assert 'name="grant_changed_at' not in form and 'name="grant_journaled_at' not in form
    data = {
        "tenant": str(agent.tenant_id), "name": "renamed", "write_types": "incident",
        "read_types": "incident,task_state", "max_sensitivity": "personal", "any_subject": "on",
        "created_at_0": "2026-12-01", "created_at_1": "10:00:00",
        "api_keys-TOTAL_FORMS": "1", "api_keys-INITIAL_FORMS": "1",
        "api_keys-0-id": str(key.pk), "api_keys-0-agent": str(agent.pk),
        "api_keys-0-name": "ci", "api_keys-0-expires_at_0": "2027-01-31",
        "api_keys-0-expires_at_1": "12:00:00",
    }  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(change, data).status_code == 302

    row = Agent.objects.get(pk=agent.pk)
    assert (row.name, row.write_types, row.max_sensitivity) == ("renamed", ["incident"], "personal")
    assert row.grant_journaled_at is not None
    key.refresh_from_db()
    assert key.expires_at.isoformat() == "2027-01-31T12:00:00+00:00"
    assert key.expiry_journaled_at is not None
    lines = {line["target"]: line for line in ledger_read(since=now().replace(year=2000))}
    assert sorted(lines) == ["agent_grant_set", "api_key_expiry_set"]
    grant = lines["agent_grant_set"]
    assert (grant["grant_agent_id"], grant["read_types"]) == (
        str(agent.pk),
        ["incident", "task_state"],
    )
    assert lines["api_key_expiry_set"]["expires_at"] == key.expires_at.isoformat()

    # The key's own page.
    key_change = f"/admin/memory_core/apikey/{key.pk}/change/"
    assert 'name="expiry_changed_at' not in client.get(key_change).content.decode()
    data = {"agent": str(agent.pk), "name": "ci", "expires_at_0": "2026-12-02",
            "expires_at_1": "09:00:00"}  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(key_change, data).status_code == 302
    key = ApiKey.objects.get(pk=key.pk)
    assert key.expires_at.isoformat() == "2026-12-02T09:00:00+00:00"
    expiries = [
        line["expires_at"]
        for line in ledger_read(since=now().replace(year=2000))
        if line["target"] == "api_key_expiry_set"
    ]
    assert expiries == ["2027-01-31T12:00:00+00:00", "2026-12-02T09:00:00+00:00"]


def test_the_admin_moves_no_agent_or_key_and_adds_no_key_around_the_journal(
    client, agent, other_tenant
):
    """What the journal does not carry, the admin does not change: an agent moved to another
    tenant, or a key to another agent, after a backup was back where it was after a restore;
    a key's revocation_journaled_at set by hand hid a failed append from the sweep; and a key
    row added on the agent's page had no prefix or hash."""
    from memory_core.models import Agent, ApiKey
    from memory_core.services.api_keys import api_key_create
    from tests.factories import AgentFactory

    key, _ = api_key_create(agent=agent, name="ci")
    narrow = AgentFactory(tenant=agent.tenant)
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    change = f"/admin/memory_core/agent/{agent.pk}/change/"
    form = client.get(change).content.decode()
    assert 'name="tenant"' not in form and 'name="api_keys-__prefix__-name"' not in form
    data = {
        "tenant": str(other_tenant.pk), "name": agent.name, "write_types": "incident",
        "read_types": "incident", "max_sensitivity": "personal", "any_subject": "on",
        "created_at_0": "2026-12-01", "created_at_1": "10:00:00",
        "api_keys-TOTAL_FORMS": "2", "api_keys-INITIAL_FORMS": "1",
        "api_keys-0-id": str(key.pk), "api_keys-0-agent": str(agent.pk), "api_keys-0-name": "ci",
        "api_keys-1-agent": str(agent.pk), "api_keys-1-name": "added",
    }  # fmt: skip
    client.post(change, data)
    assert Agent.objects.get(pk=agent.pk).tenant_id == agent.tenant_id
    assert list(ApiKey.objects.filter(agent=agent).values_list("name", flat=True)) == ["ci"]

    key_change = f"/admin/memory_core/apikey/{key.pk}/change/"
    form = client.get(key_change).content.decode()
    assert 'name="agent"' not in form and 'name="revocation_journaled_at' not in form
    data = {"agent": str(narrow.pk), "name": "ci", "revocation_journaled_at_0": "2026-12-02",
            "revocation_journaled_at_1": "09:00:00"}  # fmt: skip
    assert client.post(key_change, data).status_code == 302
    key.refresh_from_db()
    assert (key.agent_id, key.revocation_journaled_at) == (agent.pk, None)


def test_a_grant_the_service_refuses_is_the_admins_message_and_saves_nothing(
    client, agent, monkeypatch
):
    """The form checked the values, but another change of the row may make them invalid
    together by the time the service locks it: the admin says so and saves nothing of the
    form (its name neither), where it answered 500."""
    from memory_core.exceptions import ValidationFailed
    from memory_core.models import Agent
    from memory_core.services import api_keys

    def refuse(**kwargs):
        raise ValidationFailed("an issuer of subject tokens acts for any subject")

    monkeypatch.setattr(api_keys, "agent_grant_set", refuse)
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    change = f"/admin/memory_core/agent/{agent.pk}/change/"
    data = {
        "name": "renamed", "write_types": "incident", "read_types": "incident",
        "max_sensitivity": "personal", "any_subject": "on",
        "created_at_0": "2026-12-01", "created_at_1": "10:00:00",
        "api_keys-TOTAL_FORMS": "0", "api_keys-INITIAL_FORMS": "0",
    }  # fmt: skip
    response = client.post(change, data, follow=True)
    assert response.status_code == 200
    assert (
        "Not saved: an issuer of subject tokens acts for any subject" in response.content.decode()
    )
    row = Agent.objects.get(pk=agent.pk)
    assert (row.name, row.write_types) == (agent.name, agent.write_types)


@pytest.mark.django_db
def test_a_policy_is_changed_in_the_admin_only_by_publishing_a_new_version(client, tenant):
    """Versions are immutable: the admin edited a version's document in place (the history of
    what was decided under it then lied), and made the active one inactive or removed it (the
    tenant then ran on the defaults, and its next agent key failed on version 1 again)."""
    import json

    from memory_core.models import PolicyVersion
    from memory_core.services.policy import policy_ensure

    first = policy_ensure(tenant=tenant)
    original = json.loads(json.dumps(first.document))
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    change = f"/admin/memory_core/policyversion/{first.pk}/change/"
    assert client.get(change).status_code == 200  # shown, read only
    edited = {"tenant": str(tenant.pk), "document": '{"budget": {"max_items": 1}}',
              "note": "", "version": "1", "created_at_0": "2026-12-01",
              "created_at_1": "10:00:00"}  # is_active left out: unchecked  # fmt: skip
    assert client.post(change, edited).status_code == 403
    delete = f"/admin/memory_core/policyversion/{first.pk}/delete/"
    assert client.get(delete).status_code == 403
    assert client.post(delete, {"post": "yes"}).status_code == 403
    first.refresh_from_db()
    assert first.is_active and first.document == original

    # Adding one publishes the tenant's next version, active at once; the form asks no number.
    form = client.get("/admin/memory_core/policyversion/add/").content.decode()
    assert 'name="document"' in form
    assert 'name="version"' not in form and 'name="is_active"' not in form
    shorter = {"retention": {"episodic_days": 30}}
    response = client.post(
        "/admin/memory_core/policyversion/add/",
        {
            "tenant": str(tenant.pk),
            "document": json.dumps(shorter),
            "note": "shorter",
            "version": "1",
            "is_active": "on",
        },  # fmt: skip
    )
    assert response.status_code == 302, response.content.decode()[:500]
    second = PolicyVersion.objects.get(tenant=tenant, is_active=True)
    assert (second.version, second.document, second.note) == (2, shorter, "shorter")
    page = client.get(response["Location"]).content.decode()
    assert f"{second} was added successfully" in page.replace("“", "").replace("”", "")
    assert PolicyVersion.objects.filter(tenant=tenant).count() == 2

    # An earlier version comes back as the next one, never by switching is_active.
    listing = "/admin/memory_core/policyversion/"
    again = {"action": "publish_again", "_selected_action": [str(first.pk)]}
    assert client.post(listing, again).status_code == 302
    third = PolicyVersion.objects.get(tenant=tenant, is_active=True)
    assert (third.version, third.document) == (3, first.document)
    assert third.note == "version 1 published again"
    both = {"action": "publish_again", "_selected_action": [str(first.pk), str(second.pk)]}
    response = client.post(listing, both, follow=True)
    assert "Select at most one version of each tenant." in response.content.decode()
    assert PolicyVersion.objects.get(tenant=tenant, is_active=True) == third


@pytest.mark.django_db
def test_the_admin_keeps_a_subject_and_an_end_users_login_in_their_tenant(
    client, tenant, other_tenant
):
    """A subject moved to another tenant left its memories behind, unreadable by its end user,
    and showed who it is to the other tenant; a login of one tenant could be given another
    tenant's subject."""
    from memory_core.models import PortalMembership, Subject

    subject = SubjectFactory(tenant=tenant, external_id="alice-1")
    MemoryFactory(subject=subject, content="Alice likes tea.")
    admin = get_user_model().objects.create_superuser("root", "root@example.invalid", "pw-12345")
    client.force_login(admin)
    change = f"/admin/memory_core/subject/{subject.pk}/change/"
    assert 'name="tenant"' not in client.get(change).content.decode()
    moved = {"tenant": str(other_tenant.pk), "external_id": "alice-1", "display_name": "Alice",
             "created_at_0": "2026-12-01", "created_at_1": "10:00:00"}  # fmt: skip
    assert client.post(change, moved).status_code == 302
    subject.refresh_from_db()
    assert (subject.tenant_id, subject.display_name) == (tenant.pk, "Alice")

    user = get_user_model().objects.create_user("bob", "bob@example.invalid", "pw-12345")
    theirs = SubjectFactory(tenant=other_tenant)
    add = "/admin/memory_core/portalmembership/add/"
    membership = {"user": str(user.pk), "role": "end_user", "tenant": str(tenant.pk)}
    response = client.post(add, {**membership, "subject": str(theirs.pk)})
    assert response.status_code == 200  # the form again, with the error
    assert "This subject belongs to another tenant." in response.content.decode()
    assert not PortalMembership.objects.filter(user=user).exists()
    assert client.post(add, {**membership, "subject": str(subject.pk)}).status_code == 302
    assert PortalMembership.objects.get(user=user).subject == Subject.objects.get(pk=subject.pk)


@pytest.mark.django_db
def test_a_login_that_decided_a_review_is_deactivated_not_deleted(client, tenant):
    """Deleting a reviewer's login in the admin emptied ``resolved_by`` of every decision it
    had made (SET_NULL): the portal's recent decisions then named nobody."""
    from memory_core.models import ReviewItem

    users = get_user_model().objects
    admin = users.create_superuser("root", "root@example.invalid", "pw-12345")
    reviewer = users.create_user("rev", "rev@example.invalid", "pw-12345")
    leaver = users.create_user("leaver", "leaver@example.invalid", "pw-12345")
    item = ReviewItem.objects.create(
        tenant=tenant, subject=SubjectFactory(tenant=tenant), kind="conflict",
        state="resolved", resolved_by=reviewer, resolved_at=now(),
    )  # fmt: skip
    client.force_login(admin)
    assert client.get(f"/admin/auth/user/{reviewer.pk}/delete/").status_code == 403
    assert client.get(f"/admin/auth/user/{leaver.pk}/delete/").status_code == 200
    bulk = {"action": "delete_selected", "post": "yes",
            "_selected_action": [str(reviewer.pk), str(leaver.pk)]}  # fmt: skip
    assert client.post("/admin/auth/user/", bulk).status_code == 403
    assert users.filter(pk__in=[reviewer.pk, leaver.pk]).count() == 2
    bulk["_selected_action"] = [str(leaver.pk)]
    assert client.post("/admin/auth/user/", bulk).status_code == 302
    assert not users.filter(pk=leaver.pk).exists()
    item.refresh_from_db()
    assert item.resolved_by_id == reviewer.pk
