"""A whole tenant's deletion: everything of the tenant goes, nothing of another tenant does,
and the database takes no new row for the tenant once its request has committed."""

import json
import re
import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from django.utils import timezone

from api.exceptions import exception_handler
from memory_core.deletion.replay import replay_deletions
from memory_core.deletion.runner import deletion_run
from memory_core.deletion.services import tenant_deletion_request
from memory_core.deletion.sweep import deletion_sweep
from memory_core.exports import export_create, export_dir
from memory_core.models import (
    Agent,
    DeletionOperation,
    Export,
    Memory,
    PortalMembership,
    RetrievalTrace,
    ReviewItem,
    Subject,
    Tenant,
)
from memory_core.principals import SystemPrincipal
from memory_core.retrieval.traces import user_id_digest
from memory_core.rls import tenant_scope
from memory_core.services.api_keys import api_key_resolve
from tests.deletion.conftest import journal_line, seed_everywhere, unit_vector
from tests.factories import MemoryFactory, SubjectFactory, TenantFactory
from tests.threads import in_thread

pytestmark = pytest.mark.django_db


@pytest.fixture
def doomed(tenant, owner, memories, agent, api_key):
    """A tenant with something in every store, a trace of an unknown user, a second subject
    with no memory but an export, and portal logins of both roles."""
    seeded = seed_everywhere(owner, memories)
    nameless = RetrievalTrace.objects.create(tenant=tenant, subject=None, mode="task")
    quiet = SubjectFactory(tenant=tenant, display_name="Quiet Person")
    quiet_export = export_create(
        principal=SystemPrincipal(tenant_id=tenant.id), subject_id=quiet.id
    )
    owner.display_name = "Owner Person"
    owner.save()
    users = get_user_model().objects
    end_user = users.create_user("end-user", email="end@example.com")
    reviewer = users.create_user("reviewer", email="rev@example.com")
    staff = users.create_user("staff", is_staff=True)
    PortalMembership.objects.create(user=end_user, tenant=tenant, role="end_user", subject=owner)
    PortalMembership.objects.create(user=reviewer, tenant=tenant, role="reviewer")
    PortalMembership.objects.create(user=staff, tenant=tenant, role="reviewer")
    return {**seeded, "nameless": nameless, "quiet_export": quiet_export, "staff": staff}


@pytest.fixture
def bystander(other_tenant):
    """Another tenant's memory, trace and export: a tenant's deletion must not touch them."""
    subject = SubjectFactory(tenant=other_tenant, display_name="Bystander")
    memory = MemoryFactory(subject=subject, embedding=unit_vector(9), embedding_model="test")
    trace = RetrievalTrace.objects.create(
        tenant=other_tenant, subject=subject, mode="task", cited_ids=[memory.id]
    )
    export = export_create(
        principal=SystemPrincipal(tenant_id=other_tenant.id), subject_id=subject.id
    )
    return {"subject": subject, "memory": memory, "trace": trace, "export": export}


def test_a_tenant_deletion_leaves_no_name_in_the_admins_history(tenant, owner, doomed, bystander):
    """The admin logs each add or change with the object's text: a subject's is ``tenant:external
    id`` (the id the agents knew the person by, an email say), a login's its username. Its
    history kept them after the identities step had cleared the rows."""
    from django.contrib.admin.models import CHANGE, LogEntry

    users = get_user_model().objects
    admin = users.create_superuser("root", "root@example.invalid", "pw-12345")
    owner.external_id = "alice@example.com"
    owner.save()
    about = [
        owner,
        PortalMembership.objects.get(user__username="end-user"),
        users.get(username="end-user"),
        doomed["staff"],  # a staff login keeps its user, and its history its name
        bystander["subject"],  # another tenant's
    ]
    for row in about:
        LogEntry.objects.log_actions(admin.pk, [row], CHANGE, "[]", single_object=True)
    named = {str(row.pk): str(row) for row in about}
    assert "alice@example.com" in named[str(owner.pk)]

    operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=operation.id) == "completed"

    step = operation.steps.get(store="identities")
    assert step.evidence["admin_log_naming_subjects"] == 0
    history = dict(LogEntry.objects.values_list("object_id", "object_repr"))
    for row in about[:3]:
        assert history[str(row.pk)] == str(row.pk)
    for row in about[3:]:
        assert history[str(row.pk)] == named[str(row.pk)]
    assert not any("alice@example.com" in text for text in history.values())


def test_a_tenant_deletion_removes_everything_of_the_tenant_and_nothing_else(
    tenant, owner, memories, api_key, doomed, bystander
):
    operation = tenant_deletion_request(tenant_id=tenant.id)

    # At once: every memory unretrievable, the keys refused, the tenant marked.
    assert operation.target == DeletionOperation.Target.TENANT
    assert sorted(operation.memory_ids) == sorted(m.id for m in memories)
    assert set(Memory.objects.filter(tenant=tenant).values_list("status", flat=True)) == {"deleted"}
    assert api_key_resolve(api_key) is None
    assert Tenant.objects.get(pk=tenant.pk).deleted_at is not None
    assert "identities" in set(operation.steps.values_list("store", flat=True))

    assert deletion_run(operation_id=operation.id) == "completed"

    steps = {step.store: step for step in operation.steps.all()}
    assert all(step.status == "verified" for step in steps.values())
    assert steps["identities"].evidence["portal_logins"] == 0
    assert not RetrievalTrace.objects.filter(tenant=tenant).exists()  # the nameless one too
    assert not Export.objects.filter(tenant=tenant).exists()
    assert list((export_dir() / str(tenant.id)).rglob("*.json")) == []
    golden = doomed["eval_path"].read_text()
    assert all(str(m.id) not in golden for m in memories)
    for subject in Subject.objects.filter(tenant=tenant):
        assert (subject.display_name, subject.external_id) == ("", str(subject.id))
    assert not PortalMembership.objects.filter(tenant=tenant).exists()
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["staff"]
    assert not Agent.objects.filter(tenant=tenant, is_active=True).exists()

    # The other tenant keeps all it had.
    kept = Memory.objects.get(pk=bystander["memory"].pk)
    assert (kept.status, kept.content) == ("active", bystander["memory"].content)
    assert RetrievalTrace.objects.filter(pk=bystander["trace"].pk).exists()
    assert Export.objects.filter(pk=bystander["export"].pk).exists()
    assert Subject.objects.get(pk=bystander["subject"].pk).display_name == "Bystander"


def test_asking_again_returns_the_operation_under_way(tenant, memories):
    first = tenant_deletion_request(tenant_id=tenant.id)
    again = tenant_deletion_request(tenant_id=tenant.id)
    assert (again.pk, again.already_requested) == (first.pk, True)
    assert DeletionOperation.objects.filter(tenant=tenant, target="tenant").count() == 1


def test_a_deleted_tenant_takes_no_new_rows(tenant, owner, other_tenant):
    tenant_deletion_request(tenant_id=tenant.id)
    for make in (
        lambda: MemoryFactory(subject=owner),
        lambda: SubjectFactory(tenant=tenant),
        lambda: RetrievalTrace.objects.create(tenant=tenant, subject=None, mode="task"),
    ):
        with pytest.raises(IntegrityError, match="tenant_not_deleted"), transaction.atomic():
            make()
    MemoryFactory(subject=SubjectFactory(tenant=other_tenant))  # another tenant writes on


def test_the_api_answers_410_for_a_request_the_database_refused(tenant, owner):
    tenant_deletion_request(tenant_id=tenant.id)
    with pytest.raises(IntegrityError) as refused, transaction.atomic():
        MemoryFactory(subject=owner)
    response = exception_handler(refused.value, {})
    assert response.status_code == 410
    assert response.data["error"]["code"] == "tenant_deleted"


def test_the_portal_refuses_a_deleted_tenants_login(client, tenant, owner):
    user = get_user_model().objects.create_user("end-user")
    PortalMembership.objects.create(user=user, tenant=tenant, role="end_user", subject=owner)
    client.force_login(user)
    assert client.get("/portal/").status_code == 200
    tenant_deletion_request(tenant_id=tenant.id)
    assert client.get("/portal/").status_code == 403


def test_the_command_asks_first_then_deletes_and_runs_the_steps(tenant, memories, capsys):
    with pytest.raises(CommandError, match="--yes"):
        call_command("delete_tenant", tenant.slug)
    assert json.loads(capsys.readouterr().out)["would_delete"]["memories"] == len(memories)
    assert Tenant.objects.get(pk=tenant.pk).deleted_at is None
    assert Memory.objects.filter(tenant=tenant, status="active").count() == len(memories)

    call_command("delete_tenant", tenant.slug, "--yes", "--run")
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "completed"
    assert set(report["steps"].values()) == {"verified"}
    with pytest.raises(CommandError, match="No tenant"):
        call_command("delete_tenant", "no-such-tenant")


def test_the_admin_action_asks_for_confirmation(admin_client, tenant, memories):
    url = "/admin/memory_core/tenant/"
    body = {"action": "request_tenant_deletion", "_selected_action": [str(tenant.pk)]}
    page = admin_client.post(url, body)
    assert page.status_code == 200 and b"Yes, delete these tenants" in page.content
    assert Tenant.objects.get(pk=tenant.pk).deleted_at is None

    admin_client.post(url, {**body, "confirmed": "yes"})
    assert Tenant.objects.get(pk=tenant.pk).deleted_at is not None
    assert DeletionOperation.objects.filter(tenant=tenant, target="tenant").exists()


def test_the_admin_action_confirmed_after_select_all_deletes_every_tenant_it_listed(
    admin_client, tenant
):
    """With "Select all 101 tenants" the changelist posts one page's 100 boxes and
    ``select_across``: the confirmation page listed all 101, but its form posted back the 100
    ticked ids, and confirming deleted 100 (the 101st stayed, unsaid)."""
    for _ in range(100):
        TenantFactory()
    url = "/admin/memory_core/tenant/"
    on_page = re.findall(r'name="_selected_action" value="([^"]+)"', admin_client.get(url).text)
    assert len(on_page) == 100  # the list's page size: one tenant is on the next page
    page = admin_client.post(
        url,
        {
            "action": "request_tenant_deletion",
            "select_across": "1",
            "index": "0",
            "_selected_action": on_page,
        },
    )
    listed = {str(t.pk) for t in page.context["tenants"]}
    assert listed == {str(pk) for pk in Tenant.objects.values_list("pk", flat=True)}

    form = page.text.split("Yes, delete these tenants")[0].rsplit("<form", 1)[1]
    data = {}
    for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form):
        data.setdefault(name, []).append(value)
    assert set(data["_selected_action"]) == listed
    admin_client.post(url, data)
    assert not Tenant.objects.filter(deleted_at=None).exists()
    assert DeletionOperation.objects.filter(target="tenant").count() == 101


@pytest.mark.django_db(transaction=True)
def test_a_write_racing_the_request_waits_for_it_and_is_refused(tenant, owner):
    """The trigger must lock the tenant row before it reads ``deleted_at``: reading first
    would see the version from before the request and let the row in once it commits."""

    def write():
        with tenant_scope(tenant.id):  # as a request of the tenant (row-level security)
            MemoryFactory(subject=Subject.objects.get(pk=owner.pk))

    with transaction.atomic():
        # The request's first steps: the tenant row locked and marked, not yet committed.
        Tenant.objects.select_for_update().get(pk=tenant.pk)
        Tenant.objects.filter(pk=tenant.pk).update(deleted_at="2026-12-01T00:00:00Z")
        writer = in_thread(write)
        writer.join(timeout=1)
        assert writer.is_alive(), "the write did not wait for the request"
    with pytest.raises(IntegrityError, match="tenant_not_deleted"):
        writer.outcome(30)
    assert not Memory.objects.filter(tenant=tenant).exists()


def test_replay_after_a_restore_deletes_the_tenant_again(tenant, memories, api_key):
    """A backup taken before the request holds the tenant whole: its journal line (which
    lists no tombstones of memories written after it was made) deletes it all again."""
    entry = journal_line(1, tenant_id=tenant.id, target="tenant", reason_code="tenant_deleted")
    result = replay_deletions(entries=[entry])

    assert result["incomplete"] == {}
    assert set(Memory.objects.filter(tenant=tenant).values_list("status", flat=True)) == {"deleted"}
    assert Tenant.objects.get(pk=tenant.pk).deleted_at is not None
    assert api_key_resolve(api_key) is None
    steps = DeletionOperation.objects.get(pk=entry["operation_id"]).steps
    assert "identities" in set(steps.values_list("store", flat=True))


def test_a_tenant_deletion_clears_the_user_ids_digest_a_replay_recorded(
    admin_client, tenant, journal
):
    """Since stop 63's audit of backups a replay records on the operation of a subject whose
    row it made back the digest of the person's user id (``DeletionOperation.user_id_sha256``),
    by which the operation's journal line names them again. A guessable id (an email) is
    found from its digest: the admin does not show it, and the tenant's deletion clears it
    with the subjects' names (the ``identities`` step)."""
    digest = user_id_digest("alice@example.com")
    line = journal_line(1, tenant_id=tenant.id, target="subject", subject_id=uuid.uuid4())
    assert replay_deletions(entries=[{**line, "user_id_sha256": digest}])["incomplete"] == {}
    replayed = DeletionOperation.objects.get(pk=line["operation_id"])
    assert replayed.user_id_sha256 == digest
    page = admin_client.get(f"/admin/memory_core/deletionoperation/{replayed.pk}/change/")
    assert page.status_code == 200 and digest not in page.content.decode()

    operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=operation.id) == "completed"

    replayed.refresh_from_db()
    assert replayed.user_id_sha256 == ""
    assert operation.steps.get(store="identities").evidence["operations_naming_user_ids"] == 0


def test_replaying_a_tenants_deletion_clears_its_subjects_queued_deletions(tenant, owner):
    """Stop 60's audit of backups found that a whole tenant's deletion replayed after a
    restore left its subjects' queued deletions in place: the backup was taken while a
    subject's "delete everything" was queued (``Subject.deletion_queued_at``), and the whole
    tenant was deleted after it, its request clearing the mark. The replay marked the tenant
    deleted, revoked its keys and tombstoned its memories, but left the restored mark: the
    deletion sweep then sent the subject's queued task, and its worker made a new deletion
    operation in the tenant after its deletion, which the service itself never does
    (docs/operations.md, "A whole tenant"). The replay should clear the tenant's queued
    marks in its transaction, as the request does, and the sweep then send nothing for it."""
    MemoryFactory(subject=owner)
    queued_at = timezone.now() - timedelta(hours=1)
    Subject.objects.filter(pk=owner.pk).update(deletion_queued_at=queued_at, deletion_queued_by=1)
    entry = journal_line(1, tenant_id=tenant.id, target="tenant", reason_code="tenant_deleted")

    assert replay_deletions(entries=[entry])["incomplete"] == {}

    assert Subject.objects.get(pk=owner.pk).deletion_queued_at is None
    assert f"subject:{owner.pk}" not in deletion_sweep(stale_seconds=0)


def test_asking_again_after_a_failed_operation_finishes_its_memories(
    tenant, owner, memories, settings
):
    """Every memory of the tenant is in the failed operation's ledger: a new operation would
    hold none of them, complete at once and leave the files the failed one did not clean."""
    seeded = seed_everywhere(owner, memories)
    configured = settings.MEMLEDGER_EVAL_DATA_DIRS
    settings.MEMLEDGER_DELETION_MAX_ATTEMPTS = 1
    settings.MEMLEDGER_EVAL_DATA_DIRS = ["/nonexistent/memledger-eval"]  # a misspelt setting
    first = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=first.id) == "failed"

    settings.MEMLEDGER_EVAL_DATA_DIRS = configured  # fixed; the operator asks again
    again = tenant_deletion_request(tenant_id=tenant.id)
    assert (again.pk, again.already_requested) == (first.pk, True)  # re-driven
    assert deletion_run(operation_id=again.id) == "completed"

    golden = seeded["eval_path"].read_text()
    assert all(str(m.id) not in golden for m in memories)


def test_a_tenant_deletion_re_drives_a_failed_deletion_of_one_memory(
    tenant, memories, failed_memory_deletion
):
    """No reviewer of a deleted tenant can log in to retry it, and the tenant's operation
    holds none of its memories (they are in its ledger)."""
    one, seeded = failed_memory_deletion
    whole = tenant_deletion_request(tenant_id=tenant.id)
    one.refresh_from_db()
    assert one.status == DeletionOperation.State.PENDING  # re-driven
    assert deletion_run(operation_id=whole.id) == "completed"
    assert deletion_run(operation_id=one.id) == "completed"
    golden = seeded["eval_path"].read_text()
    assert all(str(m.id) not in golden for m in memories)


def test_a_tenant_deletion_leaves_no_review_item_naming_a_key(tenant, owner, memories):
    """A conflict item has no memory of its own: its key ("health.notes") outlived the
    memories it was about, as the key deletion's operation no longer does."""
    conflict = ReviewItem.objects.create(
        tenant=tenant,
        subject=owner,
        kind="conflict",
        memory_key="health.notes",
        scope_kind="user",
        scope_ref=owner.external_id,
        environment="clinic-eu",
        candidate_ids=[m.id for m in memories[:2]],
        reason="both say something about the diagnosis",
    )
    operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=operation.id) == "completed"

    conflict.refresh_from_db()
    assert (conflict.memory_key, conflict.reason, conflict.state) == ("", "", "resolved")
    assert (conflict.scope_kind, conflict.scope_ref, conflict.environment) == ("", "", "")
    assert not ReviewItem.objects.filter(tenant=tenant).exclude(memory_key="").exists()


@pytest.mark.django_db(transaction=True)
def test_a_revoke_in_flight_and_the_request_do_not_deadlock(tenant, owner, memories, monkeypatch):
    """A revoke locks its memory row, then inserts its event (whose foreign key takes the
    tenant row's key-share lock). A request that locked the tenant row first and then waits
    for that memory row would close a cycle: one of the two dies of a deadlock."""
    from memory_core.principals import ReviewerPrincipal
    from memory_core.services import writes
    from memory_core.services.writes import memory_revoke

    locked = threading.Event()
    original = writes.event_record

    def slow_event_record(**kwargs):
        locked.set()
        time.sleep(1.5)  # the request meanwhile takes its locks
        return original(**kwargs)

    monkeypatch.setattr(writes, "event_record", slow_event_record)

    def revoke():
        with tenant_scope(tenant.id):
            principal = ReviewerPrincipal(tenant_id=tenant.id, user_id=1)
            memory_revoke(principal=principal, memory_id=memories[0].id, reason="wrong")

    revoker = in_thread(revoke, released=[locked])
    assert locked.wait(timeout=10)
    try:
        operation = tenant_deletion_request(tenant_id=tenant.id)
    finally:
        revoker.outcome(30)  # revoked, before the request or while it waited
    assert sorted(operation.memory_ids) == sorted(m.id for m in memories)


def test_the_admin_offers_no_deleted_tenant_for_a_new_row(admin_client, tenant):
    """Adding a subject to a deleted tenant is a form error, not the trigger's 500."""
    tenant_deletion_request(tenant_id=tenant.id)
    body = {
        "tenant": str(tenant.pk),
        "external_id": "late-user",
        "display_name": "Late",
        "created_at_0": "2026-12-01",
        "created_at_1": "10:00:00",
    }
    response = admin_client.post("/admin/memory_core/subject/add/", body)
    assert response.status_code == 200
    assert "tenant" in response.context["adminform"].form.errors
    assert not Subject.objects.filter(external_id="late-user").exists()


@pytest.mark.parametrize("wait", ["nan", "-1"])
def test_the_command_refuses_a_wait_that_is_no_number_of_seconds(tenant, wait):
    """``--wait nan`` compared false with everything: the command polled for ever."""
    with pytest.raises(CommandError, match="--wait"):
        call_command("delete_tenant", tenant.slug, "--wait", wait)
    assert Tenant.objects.get(pk=tenant.pk).deleted_at is None


def test_the_admin_shows_the_deletion_record_but_never_changes_it(admin_client, tenant, memories):
    """Operations, steps and tombstones are the evidence that a deletion happened and was
    verified: the admin lists them and may neither edit nor remove them."""
    operation = tenant_deletion_request(tenant_id=tenant.id)
    base = "/admin/memory_core"
    assert admin_client.get(f"{base}/deletionoperation/").status_code == 200
    assert admin_client.get(f"{base}/deletionoperation/{operation.pk}/change/").status_code == 200
    refused = admin_client.post(f"{base}/deletionoperation/{operation.pk}/delete/", {"post": "yes"})
    assert refused.status_code == 403
    edited = admin_client.post(
        f"{base}/deletionoperation/{operation.pk}/change/", {"status": "completed"}
    )
    assert edited.status_code == 403
    assert DeletionOperation.objects.get(pk=operation.pk).status == "pending"
    assert operation.steps.count() > 0
    tombstone = operation.tombstones.first()
    gone = admin_client.post(f"{base}/tombstone/{tombstone.pk}/delete/", {"post": "yes"})
    assert gone.status_code == 403
    assert operation.tombstones.filter(pk=tombstone.pk).exists()


def test_a_tenant_deletion_invalidates_its_caches_once_for_every_subject(
    tenant, owner, memories, bystander
):
    """The cache steps bumped every subject's generation, one at a time: ~45 s a step for a
    tenant of 66,000 subjects, past the task's time limit beyond ~200,000 (stop 48's audit).
    Now the tenant's generation, once; another tenant's entries stay reachable."""
    from django.core.cache import cache

    from memory_core import retrieval_cache

    quiet = SubjectFactory(tenant=tenant)
    places = [(tenant.id, owner.id), (tenant.id, quiet.id), (bystander["subject"].tenant_id,
              bystander["subject"].id)]  # fmt: skip
    for tenant_id, subject_id in places:
        for namespace in ("retrieval", "summary"):
            retrieval_cache.cache_set(
                tenant_id=tenant_id,
                subject_id=subject_id,
                key="k",
                value="cached",
                memory_ids=[],
                namespace=namespace,
            )
    subject_generation = retrieval_cache._generation_key("retrieval", tenant.id, owner.id)
    before = cache.get(subject_generation)

    operation = tenant_deletion_request(tenant_id=tenant.id)
    assert deletion_run(operation_id=operation.id) == "completed"

    steps = {step.store: step for step in operation.steps.all()}
    for store in ("retrieval_cache", "summaries"):
        assert steps[store].status == "verified"
        assert steps[store].evidence["tenant_invalidated_after_request"] is True
    assert cache.get(subject_generation) == before  # no subject was bumped one by one

    def cached(tenant_id, subject_id, namespace):
        with tenant_scope(tenant_id):
            return retrieval_cache.cache_get(
                tenant_id=tenant_id, subject_id=subject_id, key="k", namespace=namespace
            )

    for namespace in ("retrieval", "summary"):
        assert [cached(*place, namespace) for place in places] == [None, None, "cached"]

    # A tenant generation from before the request (a cache restored from a snapshot) fails
    # the verification, as a subject's does for a subject's deletion.
    from memory_core.deletion.runner import operation_context
    from memory_core.deletion.stores import RetrievalCacheStore

    cache.set(retrieval_cache._tenant_generation_key("retrieval", tenant.id), 1, timeout=60)
    verified, evidence = RetrievalCacheStore().verify(operation_context(operation))
    assert not verified and evidence["tenant_invalidated_after_request"] is False


def test_every_file_under_the_tenants_export_folder_goes(tenant, owner, memories):
    """docs/operations.md: a whole tenant's `exports` step takes any file under the tenant's
    export folder. It read only ``*.json``: an operator's `export-copy.json.bak` kept a copy of
    a memory, and the step verified (stop 55's audit of a tenant's deletion)."""
    folder = export_dir() / str(tenant.id) / str(owner.id)
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / "export-copy.json.bak"
    copy.write_text(json.dumps({"memories": [{"id": str(memories[0].id)}]}))
    try:
        operation = tenant_deletion_request(tenant_id=tenant.id)
        assert deletion_run(operation_id=operation.id) == "completed"
        assert not [p for p in (export_dir() / str(tenant.id)).rglob("*") if p.is_file()]
    finally:
        copy.unlink(missing_ok=True)


@pytest.mark.django_db(transaction=True)
def test_a_login_that_decided_another_tenants_review_no_longer_blocks_the_deletion(
    tenant, other_tenant, admin_client
):
    """A reviewer who decided a review in tenant B, whose membership an administrator moved to
    tenant A since (the membership's admin form lets its tenant be changed). Deleting tenant A
    removed the login: Django's SET_NULL of ``ReviewItem.resolved_by`` ran under tenant A's
    row-level security, B's decision still named the user, the foreign key refused, and the
    phase rolled back at every attempt (partial, then dead-lettered) (stop 55's audit of a
    tenant's deletion). The login is kept, deactivated, without its membership. Run as the
    Celery task runs it (``tenant_scope``, no platform mode), on a thread of its own."""
    from tests.threads import in_thread

    users = get_user_model().objects
    mover = users.create_user("mover2", email="mover2@example.com")
    membership = PortalMembership.objects.create(user=mover, tenant=other_tenant, role="reviewer")
    b_subject = SubjectFactory(tenant=other_tenant)
    b_memory = MemoryFactory(subject=b_subject, status="active")
    decided = ReviewItem.objects.create(
        tenant=other_tenant,
        subject=b_subject,
        kind="sensitive_write",
        memory=b_memory,
        state="approved",
        resolved_by=mover,
    )
    # The platform administrator moves the reviewer to tenant A in the membership's form.
    page = admin_client.post(
        f"/admin/memory_core/portalmembership/{membership.pk}/change/",
        {"user": mover.pk, "role": "reviewer", "tenant": tenant.pk, "subject": ""},
    )
    assert page.status_code == 302, page.content[:2000]
    # A membership changed is the old one removed (journaled) and a new one added.
    membership = PortalMembership.objects.get(user=mover)
    assert membership.tenant_id == tenant.pk
    owner = SubjectFactory(tenant=tenant, display_name="Owner Person")
    MemoryFactory(subject=owner)

    operation = tenant_deletion_request(tenant_id=tenant.id)
    from memory_core.rls import tenant_scope

    def work():
        with tenant_scope(tenant.id):  # as the Celery task runs it (deletion_run_task)
            return deletion_run(operation_id=str(operation.id))

    worker = in_thread(work)
    outcome = worker.outcome(120)
    steps = {
        s.store: (s.status, s.last_error[:300])
        for s in DeletionOperation.objects.get(pk=operation.pk).steps.all()
        if s.status != "verified"
    }
    assert outcome == "completed", steps
    assert not PortalMembership.objects.filter(tenant=tenant).exists()
    decided.refresh_from_db()
    assert decided.resolved_by_id == mover.pk  # B's audit trail unchanged
    mover.refresh_from_db()
    assert not mover.is_active
