"""What the portal's pages say, read as their users read them: the time zone of every time, who
"stated" a memory on a reviewer's page, a queued key deletion named and explained wherever it
shows, what a delete takes with it, and a name for each of the health page's data tables.
"""

import re
from datetime import datetime, timedelta

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils import timezone

from memory_core.admission.codes import INFORMATIONAL, RULE_CODES
from memory_core.deletion.retention import EXPIRED_REASON, memories_expire
from memory_core.deletion.retention import REVOKED as RETENTION_REVOKED
from memory_core.deletion.selectors import queued_deletion
from memory_core.deletion.services import deletion_request
from memory_core.models import Memory, Subject
from memory_core.principals import SystemPrincipal
from memory_core.services.tasks import TASK_CLOSED, task_close
from portal.templatetags.portal_tags import reason_label
from tests.factories import MemoryFactory
from tests.portal.test_review import pending_write

pytestmark = pytest.mark.django_db

KEY = "style.answers"
TIME = re.compile(r"<time [^>]*>([^<]*)</time>")


def times(response) -> list[str]:
    return TIME.findall(response.content.decode())


def test_every_clock_time_names_its_time_zone(alice_client, alice_memory, tenant):
    """The portal renders times in UTC; "14:51" alone reads as the reader's own clock."""
    deletion_request(
        principal=SystemPrincipal(tenant_id=tenant.pk),
        subject_id=alice_memory.subject_id,
        memory_key=alice_memory.memory_key,
    )
    other = MemoryFactory(subject=alice_memory.subject, content="Alice likes short answers.")
    detail = alice_client.get(reverse("portal:memory", args=[other.pk]))
    deletions = alice_client.get(reverse("portal:deletions"))
    shown = times(detail) + times(deletions)
    clock = [text for text in shown if re.search(r"\d\d:\d\d", text)]
    assert len(clock) >= 3, shown
    assert all(text.endswith(" UTC") for text in clock), clock


def test_a_reviewer_is_not_told_they_stated_someone_elses_write(reviewer_client, alice_subject):
    """``explicit_user`` reads "stated by you" to the person the memory is about; on the
    review queue it said the reviewer had stated it."""
    pending_write(alice_subject, "Alice takes blood-pressure medication.")
    page = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    assert "Alice takes blood-pressure medication." in page
    assert "stated by you" not in page
    assert "stated by the user" in page


def queue_key(subject, *, by_agent=None) -> Subject:
    """Mark ``subject``'s deletion of KEY as queued for a worker (what
    ``deletion_request_or_queue`` does for a key too large for a request)."""
    Subject.objects.filter(pk=subject.pk).update(
        deletion_queued_at=timezone.now(),
        deletion_queued_key=KEY,
        deletion_queued_by_agent=by_agent,
        deletion_queued_by=None if by_agent else 1,
    )
    return Subject.objects.get(pk=subject.pk)


def test_an_agents_queued_key_deletion_is_named_and_explained_on_its_page(
    alice_client, alice_subject, agent
):
    operation = queued_deletion(queue_key(alice_subject, by_agent=agent))
    page = alice_client.get(reverse("portal:deletion", args=[operation.pk])).content.decode()
    heading = re.search(r"<h1[^>]*>(.*?)</h1>", page, re.S).group(1)
    # Before: "Deleting the memories on one key", "requested by unknown", "0 of 0 stores".
    assert KEY in heading
    assert "requested by an agent" in page.lower()
    assert "unknown" not in page
    assert "0 of 0 stores" not in page
    assert "waits for a worker" in page
    # A key's fences the key alone: the page does not say all of the user's memories are.
    assert "no agent is given your memories on that key" in page
    assert "any of your memories" not in page


def test_the_deletions_page_names_a_queued_key_and_where_the_memories_stay_listed(
    alice_client, alice_subject, agent
):
    queue_key(alice_subject, by_agent=agent)
    page = alice_client.get(reverse("portal:deletions")).content.decode()
    assert f"An agent's deletion of the memories about you on the key <code>{KEY}</code>" in page
    # The memories are listed on "What is remembered", not on the deletions page ("here").
    assert "stay listed here" not in page
    assert f'listed under <a href="{reverse("portal:home")}">What is remembered</a>' in page
    assert "no agent is given those on the key" in page


def test_the_memory_list_says_a_deletion_is_queued_before_a_change_is_refused(
    alice_client, alice_memory
):
    operation = queued_deletion(queue_key(alice_memory.subject))
    page = alice_client.get(reverse("portal:home")).content.decode()
    assert alice_memory.content in page  # still listed
    notice = re.search(r'<p class="message[^"]*" id="queued-deletion">(.*?)</p>', page, re.S)
    assert notice, "no notice of the queued deletion"
    assert KEY in notice.group(1)
    assert reverse("portal:deletion", args=[operation.pk]) in notice.group(1)
    assert "none of them can be changed" in notice.group(1)
    assert "no agent is given those on the key" in notice.group(1)


def test_a_made_key_deletion_says_how_many_memories_and_that_they_were_one_keys(
    alice_client, alice_subject, tenant
):
    for content in ("short", "very short"):
        MemoryFactory(subject=alice_subject, memory_key=KEY, content=f"Alice wants {content}.")
    deletion_request(
        principal=SystemPrincipal(tenant_id=tenant.pk), subject_id=alice_subject.pk, memory_key=KEY
    )
    page = alice_client.get(reverse("portal:deletions")).content.decode()
    assert "2 memories on one key" in page  # before: "Memory key"


def test_the_delete_page_says_earlier_versions_go_too_and_cancel_goes_back(
    alice_client, alice_memory
):
    newer = MemoryFactory(
        subject=alice_memory.subject,
        memory_key=alice_memory.memory_key,
        content="Alice prefers four spaces.",
        supersedes=alice_memory,
        version=2,
    )
    Memory.objects.filter(pk=alice_memory.pk).update(status="superseded")
    head = alice_client.get(reverse("portal:memory-delete", args=[newer.pk])).content.decode()
    assert "Its earlier versions" in head and "are deleted with it" in head
    assert "A newer version of it is kept" not in head
    memory_page = reverse("portal:memory", args=[newer.pk])
    assert f'<a class="btn btn-quiet" href="{memory_page}">Cancel</a>' in head
    older = alice_client.get(reverse("portal:memory-delete", args=[alice_memory.pk]))
    older = older.content.decode()
    assert "A newer version of it is kept" in older
    assert "Its earlier versions" not in older


def test_each_health_data_table_is_named_for_its_chart(reviewer_client):
    page = reviewer_client.get(reverse("portal:review:health")).content.decode()
    summaries = re.findall(r"<summary>(.*?)</summary>", page, re.S)
    names = [re.sub(r"<[^>]+>", "", summary).strip() for summary in summaries]
    assert len(names) >= 5
    assert len(set(names)) == len(names), names


def test_the_conflict_form_says_what_each_outcome_does_and_the_message_what_was_done(
    reviewer_client, alice_subject
):
    from tests.portal.test_review import conflict

    item = conflict(alice_subject, "deploy.region", "Deploy to eu-west-1.", "Deploy to us-east-1.")
    page = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    help_id = f"outcomes-help-{item.pk}"
    assert f'<fieldset aria-describedby="{help_id}">' in page
    help_text = re.search(rf'id="{help_id}">(.*?)</p>', page, re.S).group(1)
    assert "every other candidate still in use is revoked" in help_text
    response = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {
            "outcome": "choose_winner",
            "winner_id": str(item.candidate_ids[0]),
            "reason": "The team moved in March",
            "candidate_ids": ",".join(str(i) for i in item.candidate_ids),
        },
        follow=True,
    )
    assert (
        "Conflict resolved: choose the winner. The winner stays in use; every other candidate "
        "in use was revoked." in response.content.decode()
    )


def test_a_memorys_events_give_reasons_in_words_and_no_policy_version(alice_client, alice_memory):
    """The events table showed codes (`supersession.supersedes`) and a POLICY column of `v1`."""
    response = alice_client.post(
        reverse("portal:memory-correct", args=[alice_memory.pk]),
        {"content": "Alice prefers four spaces."},
        follow=True,
    )
    page = response.content.decode()
    table = page.split('aria-label="Table of events"', 1)[1].split("</table>", 1)[0]
    headers = re.findall(r'<th scope="col">(.*?)</th>', table)
    assert headers == ["When", "Version", "What", "By", "Reason"]
    reasons = [re.findall(r"<td>(.*?)</td>", row, re.S)[4] for row in table.split("<tr>")[2:]]
    assert reasons, table
    # The code stays in the cell's title; the cell reads words.
    replaced = (
        '<span title="supersession.supersedes">a newer version replaced the one before</span>'
    )
    assert replaced in reasons, reasons
    assert "supersession.supersedes" not in re.sub(r"<[^>]+>", "", table)


@pytest.mark.parametrize(
    "code",
    [
        *sorted(INFORMATIONAL),
        "admitted",
        "import",
        "correction",
        "review.approved",
        "review.rejected",
        "revoked",
        "consent_withdrawn",
        "conflict_lost",
        "unresolved_high_impact_conflict",
        "choose_winner",
        "keep_both_scoped",
        "ask_user",
        TASK_CLOSED,
        EXPIRED_REASON,
        "requested",
        "admin",
        "tenant_deleted",
        RETENTION_REVOKED,
        "retention:working",
        "retention:episodic",
        "retention:preference",
        "retention:inferred",
        "retention:rejected",
    ],
)
def test_every_reason_a_person_meets_has_words(code):
    """The codes memory_core records on a subject's memories and deletions read as words."""
    words = reason_label(code)
    assert words and words != code and not re.search(r"\w[._:]\w", words), words


def test_an_unknown_reason_reads_as_words_too():
    assert reason_label("fields.content_too_long") == RULE_CODES["fields.content_too_long"][1]
    assert reason_label("retention:custom_rule") == "retention custom rule"
    assert reason_label("") == ""


def test_a_memorys_events_say_who_acted_in_the_readers_words(alice_client, alice_memory):
    response = alice_client.post(
        reverse("portal:memory-correct", args=[alice_memory.pk]),
        {"content": "Alice prefers four spaces."},
        follow=True,
    )
    page = response.content.decode()
    assert "Saved version 2" in page
    cells = re.findall(r"<tr>\s*<td><time.*?</tr>", page, re.S)
    by = {re.findall(r"<td>(.*?)</td>", row, re.S)[3] for row in cells}
    assert "you" in by, by
    assert "user" not in by, by


def meta(page: str) -> dict[str, str]:
    """Return a memory page's provenance list as {term: description}, tags stripped."""
    block = page.split('<dl class="meta">', 1)[1].split("</dl>", 1)[0]
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", block, re.S)
    return {term: re.sub(r"<[^>]+>", "", text) for term, text in pairs}


@pytest.mark.parametrize(
    ("status", "said"),
    [
        ("revoked", "Revoked on "),
        ("expired", "Expired on "),
        ("superseded", "Replaced by a newer version on "),
        ("rejected", "Refused by a reviewer on "),
    ],
)
def test_a_memory_not_in_use_says_so_instead_of_when_it_expires(
    alice_client, alice_subject, status, said
):
    """A revoked memory's page said "Expires: when you revoke it"."""
    memory = MemoryFactory(subject=alice_subject, content="Alice likes tea.", status=status)
    page = alice_client.get(reverse("portal:memory", args=[memory.pk])).content.decode()
    terms = meta(page)
    assert "Expires" not in terms, terms
    assert terms["Not in use"].startswith(said), terms
    assert terms["Not in use"].endswith("UTC; no agent is given it"), terms
    assert "when you revoke it" not in page


def test_an_expiry_says_what_happens_when_there_is_none(alice_client, alice_subject):
    # "when you revoke it" on every memory without an end, though only a preference in use
    # can be revoked; every memory in use can be corrected or deleted. (An incident has an
    # end: its class's retention, test_end_user.py::test_a_memory_says_when_the_retention_...)
    memory = MemoryFactory(subject=alice_subject, content="Prefers tea.", valid_until=None)
    page = alice_client.get(reverse("portal:memory", args=[memory.pk])).content.decode()
    assert meta(page)["Expires"] == "no end date: used until you correct or delete it"
    past = timezone.now() - timedelta(days=1)
    Memory.objects.filter(pk=memory.pk).update(
        valid_from=past - timedelta(days=1), valid_until=past
    )
    page = alice_client.get(reverse("portal:memory", args=[memory.pk])).content.decode()
    # Past its end, not swept yet: expired, as the list of memories not in use says.
    assert meta(page)["Not in use"].startswith("Expired on "), meta(page)


def expired_on(client, memory) -> datetime:
    """Return the moment a memory's page says it expired ("Expired on <time>")."""
    page = client.get(reverse("portal:memory", args=[memory.pk])).content.decode()
    said = re.search(r'Expired on <time datetime="([^"]+)"', page)
    assert said, meta(page)
    return datetime.fromisoformat(said.group(1))


def test_a_task_state_expired_by_its_tasks_close_says_it_expired_at_the_close(
    alice_client, alice_subject, agent_principal
):
    """The page dated it by its valid_until, still ahead: "Expired on <tomorrow>"."""
    state = MemoryFactory(
        subject=alice_subject,
        memory_class="working",
        memory_type="task_state",
        memory_key="task.step",
        task_id="t-7",
        valid_until=timezone.now() + timedelta(hours=20),
    )
    before = timezone.now().replace(microsecond=0)
    closed = task_close(principal=agent_principal, user_id=alice_subject.external_id, task_id="t-7")
    assert closed.expired == [state.pk]
    assert before <= expired_on(alice_client, state) <= timezone.now()


def test_a_memory_expired_at_its_end_says_its_end_swept_or_not(alice_client, alice_subject):
    """The retention sweep marks a memory expired some time after its end: the page still
    dates it by its end, as it does before the sweep."""
    end = (timezone.now() - timedelta(hours=3)).replace(microsecond=0)
    memory = MemoryFactory(
        subject=alice_subject, valid_from=end - timedelta(days=1), valid_until=end
    )
    assert expired_on(alice_client, memory) == end  # not swept yet
    assert memories_expire() == 1
    assert Memory.objects.get(pk=memory.pk).updated_at > end
    assert expired_on(alice_client, memory) == end


def test_a_pending_write_says_it_waits_for_a_reviewer(alice_client, alice_subject):
    memory = MemoryFactory(
        subject=alice_subject, content="Alice's blood type is O-.", status="pending_approval"
    )
    page = alice_client.get(reverse("portal:memory", args=[memory.pk])).content.decode()
    terms = meta(page)
    assert "Expires" not in terms
    assert terms["Not in use yet"] == "no agent is given it until a reviewer approves it"


def test_revoking_says_how_to_state_it_again_as_a_revoked_memory_allows(alice_client, alice_memory):
    """The revoke page said "to state it again later, correct it", but a revoked memory's
    page offers only Delete."""
    url = reverse("portal:memory-revoke", args=[alice_memory.pk])
    explanation = alice_client.get(url).content.decode()
    alice_client.post(url)
    detail = alice_client.get(reverse("portal:memory", args=[alice_memory.pk])).content.decode()
    assert ">Correct</a>" not in detail and ">Delete</a>" in detail
    assert "correct it" not in explanation
    assert "tell an agent again" in explanation and "delete it" in explanation


@pytest.mark.parametrize(
    ("name", "method", "data"),
    [
        ("portal:memory-correct", "get", None),
        ("portal:memory-correct", "post", {"content": "Prefers Rust.", "reason": ""}),
        ("portal:memory-confirm", "post", {}),
    ],
)
def test_the_message_about_a_memory_past_its_end_ends_once(
    alice_client, alice_subject, name, method, data
):
    """``not_in_use`` ends its sentence, and the correction's and the confirmation's messages
    added another full stop: "... tell an agent again.." (stop 54's audit of the portal)."""
    now = timezone.now()
    memory = MemoryFactory(
        subject=alice_subject, memory_key="style.lang", content="Prefers Python.",
        authority="model_inference", source_type="model_inference", confidence=0.6,
        valid_from=now - timedelta(days=10), valid_until=now - timedelta(minutes=1),
    )  # fmt: skip
    url = reverse(name, args=[memory.pk])
    response = alice_client.post(url, data) if method == "post" else alice_client.get(url)
    assert response.status_code == 302
    (message,) = [str(m) for m in get_messages(response.wsgi_request)]
    assert message.startswith("Nothing was changed. This memory is expired")
    assert message.endswith(".") and not message.endswith(".."), message


def test_the_correction_page_of_a_revoked_memory_says_why_ending_once(alice_client, alice_subject):
    memory = MemoryFactory(subject=alice_subject, content="Prefers Python.", status="revoked")
    response = alice_client.get(reverse("portal:memory-correct", args=[memory.pk]))
    assert response.status_code == 302
    (message,) = [str(m) for m in get_messages(response.wsgi_request)]
    assert message.startswith("This memory is revoked, so agents do not use it")
    assert message.endswith(".") and not message.endswith(".."), message
