"""Portal requests that wait for another transaction's locks: a memory's delete confirmed
while a correction of it commits, an export made while its tenant is deleted, an export
clicked twice, a correction of an administrator's memory sent twice at once."""

import json
import re
import threading
import time

import pytest
from django.test import Client
from django.urls import reverse

from memory_core.deletion.services import tenant_deletion_request
from memory_core.embeddings import get_embedder
from memory_core.locks import lock_memory_keys
from memory_core.models import DeletionOperation, Export, Memory, ReviewItem, Status
from memory_core.principals import SubjectPrincipal
from memory_core.services.writes import memory_correct, memory_revoke
from tests.deletion.conftest import (
    held_in_another_transaction,
    private_queue,  # noqa: F401 (a fixture)
    requested_while_held,
)
from tests.deletion.test_concurrency import _until_it_waits
from tests.factories import MemoryFactory
from tests.threads import in_thread, someone_waits_for_a_lock

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_delete_confirmed_while_a_correction_commits_deletes_nothing_until_confirmed_again(
    alice_client,
    alice,
    alice_memory,
    private_queue,  # noqa: F811
):
    """docs/portal.md: a delete page opened before the memory changed "deletes nothing: it is
    shown again as the memory is now". The view compared the page's status with the memory
    read before the deletion waited for the correction (holding the subject's lock): it
    deleted the version the correction had just superseded, and said the memory was no
    longer used while the corrected version stayed in use."""
    get_embedder().embed(["warm the model up outside the held transaction"])
    url = reverse("portal:memory-delete", args=[alice_memory.pk])
    assert 'name="shown_status" value="active"' in alice_client.get(url).content.decode()
    other_tab = SubjectPrincipal(
        tenant_id=alice_memory.tenant_id, subject_id=alice_memory.subject_id, user_id=alice.pk
    )

    def correction():
        memory_correct(
            principal=other_tab,
            memory_id=alice_memory.pk,
            data={"content": "Alice prefers tabs, 4 wide."},
        )

    stale = requested_while_held(
        alice_memory.tenant_id,
        correction,
        lambda: alice_client.post(url, {"confirm": "on", "shown_status": "active"}),
    )

    assert stale.status_code == 200 and not DeletionOperation.objects.exists()
    body = stale.content.decode()
    assert "This memory changed after you opened this page: it is now superseded" in body
    assert 'name="shown_status" value="superseded"' in body
    newer = Memory.objects.get(supersedes=alice_memory)
    assert {m.status for m in (newer, Memory.objects.get(pk=alice_memory.pk))} == {
        Status.ACTIVE,
        Status.SUPERSEDED,
    }


def test_an_export_made_while_its_tenant_is_deleted_is_answered_as_a_deleted_tenants_login(
    client,
    alice,
    alice_memory,
    settings,
    tmp_path,
    private_queue,  # noqa: F811
):
    """The export's row waits for the tenant's deletion and is refused by the trigger
    ``tenant_not_deleted``: an unhandled IntegrityError, the 500 page. It is answered as the
    login is from then on (its tenant's logins act for nobody), and leaves no file."""
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    client.force_login(alice)
    client.raise_request_exception = False
    tenant_id = alice_memory.tenant_id

    with held_in_another_transaction(
        tenant_id, lambda: tenant_deletion_request(tenant_id=tenant_id)
    ):
        export = in_thread(lambda: client.post(reverse("portal:export"), {"shown_deletions": ""}))
        _until_it_waits(export)
    response = export.outcome(30)

    assert response.status_code == 403
    assert "this account is not linked to anyone's memories" in response.content.decode()
    assert client.get(reverse("portal:export")).status_code == 403  # as from then on
    assert not Export.objects.filter(tenant_id=tenant_id).exists()
    assert [path for path in tmp_path.rglob("*") if path.is_file()] == []


def test_an_export_clicked_twice_waits_for_the_first_and_downloads_its_file(
    alice, alice_memory, settings, tmp_path, monkeypatch
):
    """A second click on Download JSON, sent while the first request was writing the file,
    made a second export: two copies of everything remembered about the person kept on our
    side (stop 56's audit of the portal in a browser). It waits for the first request and
    answers with the first's file."""
    import portal.views

    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    first_tab, second_click = Client(), Client()
    for client in (first_tab, second_click):
        client.force_login(alice)
    page = first_tab.get(reverse("portal:export")).content.decode()
    form = {
        "shown_deletions": "",
        "opened": re.search(r'name="opened" value="([^"]*)"', page).group(1),
    }
    writing, go = threading.Event(), threading.Event()
    real = portal.views.export_create

    def held(**kwargs):  # the first request writes the file until the second waits
        writing.set()
        go.wait(30)
        return real(**kwargs)

    monkeypatch.setattr(portal.views, "export_create", held)
    first = in_thread(lambda: first_tab.post(reverse("portal:export"), form))
    assert writing.wait(30)
    second = in_thread(lambda: second_click.post(reverse("portal:export"), form))
    _until_it_waits(second, lambda: someone_waits_for_a_lock("advisory"))
    go.set()

    answers = [first.outcome(30), second.outcome(30)]
    assert [a["Content-Disposition"].startswith("attachment;") for a in answers] == [True] * 2
    assert answers[0].getvalue() == answers[1].getvalue()
    assert Export.objects.filter(subject=alice_memory.subject).count() == 1


def _admins_memory(subject):
    """An administrator's memory of ``subject``, of higher authority than the person's."""
    return MemoryFactory(
        subject=subject,
        memory_key="style.indent",
        content="Alice prefers tabs over spaces.",
        authority="explicit_admin",
        source_type="admin",
    )


def _sent_from_two_tabs_at_once(alice, admin, texts):
    """Post a correction of ``admin`` from two tabs of ``alice`` at once, each with its text
    of ``texts``: both wait for the key's lock, held meanwhile by another transaction, so
    both are past the view before either stores anything. Return the two answers, the
    person's memories in use on the key, and the open conflicts' candidates."""
    get_embedder().embed(["warm the model up outside the held transaction"])
    url = reverse("portal:memory-correct", args=[admin.pk])
    tabs = [Client(), Client()]
    for tab in tabs:
        tab.force_login(alice)
    subject = admin.subject

    def hold_the_key():
        lock_memory_keys(admin.tenant_id, [(subject.external_id, admin.memory_key)])

    with held_in_another_transaction(admin.tenant_id, hold_the_key):
        clicks = [
            in_thread(lambda tab=tab, text=text: tab.post(url, {"content": text}))
            for tab, text in zip(tabs, texts, strict=True)
        ]
        deadline = time.monotonic() + 30
        while all(click.is_alive() for click in clicks) and not someone_waits_for_a_lock(
            "advisory", sessions=2
        ):
            assert time.monotonic() < deadline, "the corrections never waited for the key"
            time.sleep(0.02)
    answers = [click.outcome(60) for click in clicks]
    stated = Memory.objects.filter(
        subject=subject, memory_key=admin.memory_key, status=Status.ACTIVE,
        authority="explicit_user",
    )  # fmt: skip
    conflicts = ReviewItem.objects.filter(kind="conflict", state="open")
    return answers, list(stated), [item.candidate_ids for item in conflicts]


def test_the_same_correction_of_an_admins_memory_sent_twice_at_once_is_kept_once(
    alice, alice_subject
):
    """docs/portal.md, correct: a correction of an administrator's memory sent again "is kept
    once", yet stop 57's audit of races found it kept twice when the two were sent at once
    (a double click): the view read "not kept yet" for both before ``memory_correct`` took
    the key's lock, and two identical memories stood beside the administrator's in a
    conflict of three. ``memory_correct`` reads the corrections beside it under that lock
    now: the second answers with the first's, and both clicks land on it."""
    admin = _admins_memory(alice_subject)
    answers, stated, conflicts = _sent_from_two_tabs_at_once(
        alice, admin, ["Alice prefers spaces.", "Alice prefers spaces."]
    )
    assert [answer.status_code for answer in answers] == [302, 302]
    assert [memory.content for memory in stated] == ["Alice prefers spaces."]
    [kept] = stated
    assert {answer["Location"] for answer in answers} == {reverse("portal:memory", args=[kept.pk])}
    assert [sorted(map(str, ids)) for ids in conflicts] == [sorted([str(admin.pk), str(kept.pk)])]


def test_two_corrections_of_an_admins_memory_sent_at_once_leave_one_of_the_persons_beside_it(
    alice, alice_subject
):
    """docs/portal.md, correct: corrected again with another text, "the new correction
    replaces the person's own earlier one beside it ... so one statement of theirs stands
    beside the administrator's", yet stop 57's audit of races found both standing when the
    two were sent at once (two tabs): the view looked for the person's own correction before
    ``memory_correct`` took the key's lock, and found none for either. The second is written
    on the first now, as its next version, and the conflict cites it."""
    admin = _admins_memory(alice_subject)
    texts = ["Alice prefers spaces.", "Alice prefers two spaces."]
    answers, stated, conflicts = _sent_from_two_tabs_at_once(alice, admin, texts)
    assert [answer.status_code for answer in answers] == [302, 302]
    assert len(stated) == 1, [memory.content for memory in stated]
    [newest] = stated
    earlier = Memory.objects.get(pk=newest.supersedes_id)
    assert sorted([earlier.content, newest.content]) == texts
    assert earlier.status == Status.SUPERSEDED
    assert [sorted(map(str, ids)) for ids in conflicts] == [sorted([str(admin.pk), str(newest.pk)])]


def _export_opened(page: str) -> str:
    return re.search(r'name="opened" value="([^"]*)"', page).group(1)


def test_an_export_sent_again_after_a_revoke_that_committed_after_the_first_file_is_made_again(
    alice_client, alice, alice_memory, settings, tmp_path
):
    """Stop 59's audit of races found that an export sent again (a double click) reused the
    first file when a change committed after that file's snapshot but was stamped before the
    page was opened (``ExportView.changed_since`` compared the event's ``created_at``, the
    clock inside its transaction): the second file said "active" about a memory revoked
    before it was asked for. Left open then; stop 60 keeps a digest of what the first file's
    snapshot saw on its row (``Export.state_sha256``) and compares it."""
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path)
    url = reverse("portal:export")
    other_tab = SubjectPrincipal(
        tenant_id=alice_memory.tenant_id, subject_id=alice_memory.subject_id, user_id=alice.pk
    )

    def revoke():
        memory_revoke(principal=other_tab, memory_id=alice_memory.pk, reason="")

    with held_in_another_transaction(alice_memory.tenant_id, revoke):
        # The revoke's event exists (uncommitted); the page is opened, the export made.
        form = {
            "shown_deletions": "",
            "opened": _export_opened(alice_client.get(url).content.decode()),
        }
        first = json.loads(alice_client.post(url, form).getvalue())
    # The revoke has committed now; the form is sent again.
    second = json.loads(alice_client.post(url, form).getvalue())

    assert [m["status"] for m in first["memories"]] == ["active"]
    assert [m["status"] for m in second["memories"]] == ["revoked"]
