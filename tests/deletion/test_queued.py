"""A whole-subject deletion the portal cannot make within a request's time budget is queued
for a worker, which makes the same request as the user (``subject_deletion_queue``)."""

import io
import json
import re
from datetime import timedelta
from io import StringIO
from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from memory_core.deletion import runner, services
from memory_core.deletion.services import (
    deletion_request_or_queue,
    queued_subject_deletion_run,
)
from memory_core.deletion.sweep import deletion_sweep
from memory_core.exports import export_create
from memory_core.management.commands import delete_subject as delete_subject_command
from memory_core.models import DeletionOperation, Memory, Subject
from memory_core.principals import SubjectPrincipal
from memory_core.rls import tenant_scope
from tests.celery_worker import wait_for
from tests.deletion.conftest import held_in_another_transaction, until_waiting_or_done
from tests.factories import MemoryFactory, SubjectFactory
from tests.portal.conftest import make_login
from tests.threads import in_thread

NO_TIME = 1e-9


@pytest.fixture
def heavy(owner):
    """An end user whose subject (``owner``) has three memories, logged in."""
    for _ in range(3):
        MemoryFactory(subject=owner)
    return make_login("heavy", tenant=owner.tenant, role="end_user", subject=owner)


def delete_everything(client):
    return client.post(reverse("portal:delete-everything"), {"confirm": "on"}, follow=True)


def active(subject) -> int:
    return Memory.objects.filter(subject=subject, status="active").count()


@pytest.mark.django_db
def test_the_portal_queues_what_it_cannot_delete_in_time_and_the_worker_makes_the_request(
    settings, client, owner, heavy
):
    client.force_login(heavy)
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    page = delete_everything(client)
    assert page.redirect_chain[-1][0] == reverse("portal:deletions")
    body = page.content.decode()
    assert "the deletion of everything is queued" in body
    assert "was queued on" in body  # the deletions page says so until a worker starts it
    subject = Subject.objects.get(pk=owner.pk)
    assert subject.deletion_queued_at is not None and subject.deletion_queued_by == heavy.pk
    assert active(owner) == 3 and not DeletionOperation.objects.filter(subject=owner).exists()

    operation = queued_subject_deletion_run(owner.pk)  # as the worker's task does
    assert (operation.target, operation.requested_by_type) == ("subject", "user")
    assert operation.requested_by_id == str(heavy.pk)
    assert active(owner) == 0 and len(operation.memory_ids) == 3
    assert Subject.objects.get(pk=owner.pk).deletion_queued_at is None
    assert queued_subject_deletion_run(owner.pk) is None  # a second task finds nothing queued
    body = client.get(reverse("portal:deletions")).content.decode()
    assert "was queued on" not in body and str(operation.pk) in body


@pytest.mark.django_db
def test_asking_again_while_queued_keeps_the_first_request(settings, client, owner, heavy):
    client.force_login(heavy)
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    delete_everything(client)
    first = Subject.objects.get(pk=owner.pk).deletion_queued_at
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 60  # would fit now: still not made twice
    again = delete_everything(client).content.decode()
    # Said as already queued, not as queued by this request (stop 60's audit of the portal in
    # a browser).
    assert "was already queued, on " in again and "nothing new was started" in again
    assert "From now on" not in again
    assert Subject.objects.get(pk=owner.pk).deletion_queued_at == first
    assert not DeletionOperation.objects.filter(subject=owner).exists()


@pytest.mark.django_db
def test_delete_everything_queued_on_a_web_host_ahead_says_it_queued_it(
    settings, client, owner, heavy
):
    """Stop 65's audit of the database's clock: ``DeleteEverythingView`` told a queued
    request from one asked again by comparing the web host's ``timezone.now()``, taken as the
    form came in, with the mark's ``requested_at``, the database's clock since stop 65
    (``subject_deletion_queue``): on a web host a second ahead, the person who had just queued
    the deletion was told it "was already queued, on ...; nothing new was started". The
    service says whether the request queued it (``already_requested``)."""
    client.force_login(heavy)
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    true_now = timezone.now
    with mock.patch.object(timezone, "now", lambda: true_now() + timedelta(seconds=1)):
        body = delete_everything(client).content.decode()
    assert "was already queued" not in body, "told its own new request was queued before"
    assert "the deletion of everything is queued" in body


@pytest.mark.django_db
def test_delete_everything_clicked_twice_at_once_says_already_queued(
    settings, client, owner, heavy
):
    """Stop 65's review of the database's clock: a double click on "delete everything" of a
    subject too large for a page: the second
    request reads the subject before the first one's mark commits, then its
    ``deletion_request`` waits for the subject's row, reads the mark and raises
    ``SubjectBeingDeleted``, so the person was told a deletion is running and nothing was
    changed, instead of "already queued" (the API: 503 ``subject_being_deleted``)."""
    client.force_login(heavy)
    # Queued at once: more than MEMLEDGER_DELETION_QUEUE_ABOVE memories (three here, as
    # 50,000 in production), within a page's time budget.
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 60
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2
    original = services._subject_or_none
    other_click = SubjectPrincipal(tenant_id=owner.tenant_id, subject_id=owner.pk, user_id=heavy.pk)

    def read_then_the_other_click_queues(*args, **kwargs):
        stale = original(*args, **kwargs)
        services.subject_deletion_queue(principal=other_click, subject_id=owner.pk)
        return stale

    with mock.patch.object(services, "_subject_or_none", read_then_the_other_click_queues):
        body = delete_everything(client).content.decode()
    assert Subject.objects.get(pk=owner.pk).deletion_queued_at is not None
    assert not DeletionOperation.objects.filter(subject=owner).exists()
    told = re.findall(r"<p class=\"message [^>]*>(.*?)</p>", body, re.S)
    assert "was already queued, on " in body, told


@pytest.mark.parametrize("memory_key", ["", "health.notes"], ids=["whole", "key-control"])
def test_a_request_asked_twice_at_once_gets_the_queued_one_back(settings, owner, memory_key):
    """Stop 65's review of the database's clock: the service, as the API's ``{"subject"}``
    and ``{"subject", "memory_key"}`` call it: the second of two requests at once read the
    subject before the first's mark committed,
    and ``deletion_request`` then met the mark: ``SubjectBeingDeleted`` (503) where
    ``deletion_request_or_queue``'s docstring says the same queued one comes back, flagged
    ``already_requested``."""
    for _ in range(3):
        MemoryFactory(subject=owner, memory_key="health.notes")
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 60
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2
    principal = SubjectPrincipal(tenant_id=owner.tenant_id, subject_id=owner.pk, user_id=1)
    original = services._subject_or_none

    def read_then_the_other_request_queues(*args, **kwargs):
        stale = original(*args, **kwargs)
        services.subject_deletion_queue(
            principal=principal, subject_id=owner.pk, memory_key=memory_key
        )
        return stale

    with mock.patch.object(services, "_subject_or_none", read_then_the_other_request_queues):
        operation = services.deletion_request_or_queue(
            principal=principal, subject_id=owner.pk, memory_key=memory_key
        )
    assert operation.status == "queued" and operation.already_requested


def test_the_sweep_sends_a_queued_deletion_again_once_it_is_stale(owner, heavy):
    Subject.objects.filter(pk=owner.pk).update(
        deletion_queued_at=timezone.now() - timedelta(seconds=30), deletion_queued_by=heavy.pk
    )
    assert f"subject:{owner.pk}" not in deletion_sweep(stale_seconds=60)
    assert f"subject:{owner.pk}" in deletion_sweep(stale_seconds=10)


@pytest.mark.django_db
def test_a_queued_deletion_names_who_asked(owner):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError, match="subject_deletion_queued_by_someone"):
        with transaction.atomic():
            Subject.objects.filter(pk=owner.pk).update(deletion_queued_at=timezone.now())


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_makes_the_queued_request_and_runs_it_to_completed(
    settings, celery_worker, client, owner, heavy
):
    client.force_login(heavy)
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    delete_everything(client)

    def completed():
        operation = DeletionOperation.objects.filter(subject=owner, target="subject").first()
        return operation is not None and operation.status == "completed"

    wait_for(completed, timeout=90, interval=0.1, message="the queued deletion to complete")
    assert active(owner) == 0
    assert Subject.objects.get(pk=owner.pk).deletion_queued_at is None


@pytest.mark.django_db
def test_a_tenant_deletion_settles_the_queued_requests_of_its_subjects(tenant, owner, heavy):
    from memory_core.deletion.services import tenant_deletion_request

    Subject.objects.filter(pk=owner.pk).update(
        deletion_queued_at=timezone.now() - timedelta(hours=1), deletion_queued_by=heavy.pk
    )
    tenant_deletion_request(tenant_id=tenant.pk)
    assert Subject.objects.get(pk=owner.pk).deletion_queued_at is None
    assert f"subject:{owner.pk}" not in deletion_sweep(stale_seconds=0)
    assert queued_subject_deletion_run(owner.pk) is None


@pytest.mark.django_db(transaction=True)
def test_writes_of_the_subject_go_on_while_its_queued_request_runs(owner, heavy):
    """The queued run holds the subject row for its whole request: with FOR UPDATE it held
    up every write inserting a memory of the subject (a key-share lock) until it was done."""
    from django.db import connection, transaction

    from memory_core.rls import tenant_scope

    Subject.objects.filter(pk=owner.pk).update(
        deletion_queued_at=timezone.now(), deletion_queued_by=heavy.pk
    )
    with held_in_another_transaction(
        owner.tenant_id, lambda: queued_subject_deletion_run(owner.pk)
    ):
        with tenant_scope(owner.tenant_id), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '2s'")
            # Its foreign key's key-share lock on the subject row, taken at commit, would
            # wait for the run and time out.
            MemoryFactory(subject=owner)
        assert f"subject:{owner.pk}" not in deletion_sweep(stale_seconds=0)  # skipped: locked


@pytest.mark.django_db(transaction=True)
def test_a_queued_subject_run_does_not_wait_for_another_subjects_queued_run(
    settings, tenant, owner, owner_principal, private_queue, journal
):
    """Stop 58's audit of deletion found the worker's run of one subject's queued deletion
    waiting for another subject's queued run of the same tenant: the run's
    ``select_for_update(no_key=True)...first()`` ordered by ``Subject``'s Meta ordering
    (tenant, external_id), which joins the tenant row, and FOR NO KEY UPDATE locked it too,
    for the whole run (a policy's publication and the tenant's deletion waited as well). Now
    the run locks the subject's row alone."""
    other = SubjectFactory(tenant=tenant)
    other_principal = SubjectPrincipal(tenant_id=tenant.id, subject_id=other.id, user_id=2)
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 1
    for subject, principal in ((owner, owner_principal), (other, other_principal)):
        for _ in range(2):
            MemoryFactory(subject=subject)
        with tenant_scope(tenant.id):
            queued = deletion_request_or_queue(principal=principal, subject_id=subject.pk)
        assert queued.status == "queued"

    def exporting():  # the owner's export, written and not committed yet
        export_create(principal=owner_principal, subject_id=owner.pk)

    def run(subject):
        def work():
            with tenant_scope(tenant.id):
                return queued_subject_deletion_run(subject.pk)

        return work

    with held_in_another_transaction(tenant.id, exporting):
        owners_run = in_thread(run(owner))
        until_waiting_or_done(owners_run)  # waits for the owner's lock (the export)
        others_run = in_thread(run(other))
        others_run.join(10)
        others_alive = others_run.is_alive()
    owners_run.wait(30)
    others_run.wait(30)
    assert not others_alive, "the other subject's queued run waited for the owner's"
    assert owners_run.error is None and others_run.error is None


@pytest.mark.django_db
def test_delete_subject_makes_a_queued_request_now_as_the_user(settings, client, owner, heavy):
    """An operator need not wait for the worker (or start one): the command makes the queued
    request itself, the user's, with no time limit, instead of refusing the subject."""
    import json

    from django.core.management import call_command

    client.force_login(heavy)
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    delete_everything(client)
    assert Subject.objects.get(pk=owner.pk).deletion_queued_at is not None

    out = io.StringIO()
    call_command("delete_subject", owner.tenant.slug, owner.external_id, "--yes", stdout=out)
    report = json.loads(out.getvalue())
    operation = DeletionOperation.objects.get(pk=report["operation_id"])
    assert (operation.requested_by_type, operation.requested_by_id) == ("user", str(heavy.pk))
    assert report["memories"] == 3 and active(owner) == 0
    assert Subject.objects.get(pk=owner.pk).deletion_queued_at is None


@pytest.mark.django_db
@pytest.mark.parametrize(("above", "queued"), [(2, True), (3, False), (0, False)])
def test_a_subject_of_more_memories_than_the_threshold_is_queued_at_once(
    settings, client, owner, heavy, above, queued
):
    """Without trying within the budget first: the user does not wait it out."""
    client.force_login(heavy)
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = 60  # the request would fit
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = above
    body = delete_everything(client).content.decode()
    assert ("the deletion of everything is queued" in body) is queued
    assert (Subject.objects.get(pk=owner.pk).deletion_queued_at is not None) is queued
    assert DeletionOperation.objects.filter(subject=owner).exists() is not queued
    assert active(owner) == (3 if queued else 0)


@pytest.mark.django_db
def test_the_queued_deletion_has_its_page_under_the_id_its_operation_will_have(
    settings, client, owner, heavy
):
    from memory_core.deletion.ledger import queued_operation_id

    client.force_login(heavy)
    settings.MEMLEDGER_DELETION_REQUEST_BUDGET = NO_TIME
    delete_everything(client)
    owner.refresh_from_db()
    operation_id = queued_operation_id(owner.pk, owner.deletion_queued_at)
    page = client.get(reverse("portal:deletion", args=[operation_id]))
    assert page.status_code == 200 and "queued" in page.content.decode()
    status = client.get(reverse("portal:deletion-status", args=[operation_id])).json()
    assert status["status"] == "queued"
    made = queued_subject_deletion_run(owner.pk)
    assert made.pk == operation_id
    status = client.get(reverse("portal:deletion-status", args=[operation_id])).json()
    assert status["status"] == "pending"


def test_delete_subject_run_runs_the_deletions_its_request_set_going(
    settings, tenant, owner, owner_principal, memories, failed_memory_deletion, journal
):
    """``delete_subject --yes --run`` ran its own operation only and said completed (exit 0)
    while the deletions its request set going waited with no worker: the subject's
    dead-lettered memory deletion it re-drove, and a queued key's request it made first
    (stop 54's audit of deletion; ``delete_tenant`` was fixed so at stop 53)."""
    failed, seeded = failed_memory_deletion
    on_key = [MemoryFactory(subject=owner, memory_key="health.notes") for _ in range(3)]
    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2  # the key holds three: queued
    queued = deletion_request_or_queue(
        principal=owner_principal, subject_id=owner.id, memory_key="health.notes"
    )
    assert queued.status == "queued"

    out = StringIO()
    call_command(
        "delete_subject", tenant.slug, owner.external_id, "--yes", "--run",
        stdout=out, stderr=StringIO(),
    )  # fmt: skip
    reported = json.loads(out.getvalue().strip().splitlines()[-1])
    assert (reported["status"], reported["others_unfinished"]) == ("completed", [])
    for pk in (failed.id, queued.id):
        assert DeletionOperation.objects.get(pk=pk).status == "completed"
    dataset = seeded["eval_path"].read_text()
    assert not [m for m in [memories[0], *on_key] if str(m.id) in dataset]


def test_delete_subject_key_run_names_a_dead_lettered_deletion_apart(
    tenant, owner, failed_memory_deletion, journal
):
    """A key's request re-drives nothing, so the subject's dead-lettered memory deletion stays
    failed, which no worker or beat sweep runs: the fix above failed the operator's completed
    key deletion saying "a worker and the beat sweep carry on with them" (stop 54's review).
    It is named apart now, and the command succeeds."""
    failed, _ = failed_memory_deletion
    MemoryFactory(subject=owner, memory_key="health.notes")
    out = StringIO()
    call_command(
        "delete_subject", tenant.slug, owner.external_id, "--key", "health.notes",
        "--yes", "--run", stdout=out, stderr=StringIO(),
    )  # fmt: skip
    reported = json.loads(out.getvalue().strip().splitlines()[-1])
    assert reported["status"] == "completed"
    assert (reported["others_unfinished"], reported["others_dead_lettered"]) == (
        [],
        [str(failed.pk)],
    )


def test_a_redriven_deletion_that_fails_again_during_run_is_reported(
    settings, tenant, owner, failed_memory_deletion, journal, monkeypatch
):
    """A dead-lettered deletion its request re-drove, failing again while the command ran it,
    was named nowhere and the command exited 0 (stop 54's review of the fix above)."""
    failed, _ = failed_memory_deletion
    settings.MEMLEDGER_DELETION_MAX_ATTEMPTS = 1
    configured = settings.MEMLEDGER_EVAL_DATA_DIRS

    def run_other(*, operation_id):
        # The evaluation mount goes down again while the command runs the re-driven one.
        settings.MEMLEDGER_EVAL_DATA_DIRS = ["/nonexistent/memledger-eval"]
        try:
            return runner.deletion_run(operation_id=operation_id)
        finally:
            settings.MEMLEDGER_EVAL_DATA_DIRS = configured

    # Only the loop over the other deletions calls the module's name (the operator's own
    # operation is run by ``follow``).
    monkeypatch.setattr(delete_subject_command, "deletion_run", run_other)
    out = StringIO()
    error = None
    try:
        call_command(
            "delete_subject", tenant.slug, owner.external_id, "--yes", "--run",
            stdout=out, stderr=StringIO(),
        )  # fmt: skip
    except CommandError as raised:
        error = raised
    assert DeletionOperation.objects.get(pk=failed.pk).status == "failed"
    reported = json.loads(out.getvalue().strip().splitlines()[-1])
    # It failed again under the command's own --run: named (unfinished or dead-lettered),
    # and the command does not exit 0 as though everything it set going completed.
    named = reported["others_unfinished"] + reported["others_dead_lettered"]
    assert str(failed.pk) in named, reported
    assert error is not None, "exit 0 while a deletion it re-drove and ran failed"
