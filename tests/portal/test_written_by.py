"""A person's pages say who wrote each memory about them (the seed's "why it is remembered").

The export names the agent whose write a memory is (``written_by_agent``), and so does the
reviewers' queue; the person's list and memory page said only "Agent": the agent a memory is
private to, or "any agent of your organisation". "Source: your input" never said which agent
recorded it. They now say "Written by": the agent's name, or, told by the event that made
the row, "you" (a correction of theirs in the portal), "an import", "a reviewer", "memledger";
never a login's name. The list reads the writers of its whole page in one query.
"""

import html
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from memory_core.deletion.retention import memories_expire
from memory_core.models import Memory, MemoryEvent, ReviewItem
from memory_core.principals import AgentPrincipal
from memory_core.services.writes import memory_write, memory_write_batch
from tests.factories import AgentFactory, write_body
from tests.memory_core.admission.test_commands import record

pytestmark = pytest.mark.django_db


def meta(page: str, row: str) -> list[str]:
    """Return the texts of every ``row`` of the memory details (``<dt>row</dt><dd>…</dd>``)
    on ``page``, tags left out."""
    found = re.findall(rf"<dt>{re.escape(row)}</dt>\s*<dd>(.*?)</dd>", page, flags=re.S)
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split()) for text in found]


def written_by(page: str) -> list[str]:
    return meta(page, "Written by")


def agent_named(tenant, name: str) -> AgentPrincipal:
    return AgentPrincipal.from_agent(AgentFactory(tenant=tenant, name=name))


def home(client) -> str:
    response = client.get(reverse("portal:home"))
    assert response.status_code == 200
    return response.content.decode()


def memory_page(client, memory) -> str:
    response = client.get(reverse("portal:memory", args=[memory.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_a_memory_an_agent_wrote_says_which_agent_on_the_list_and_its_page(
    alice_client, alice_subject
):
    bot = agent_named(alice_subject.tenant, "support-bot")
    written = memory_write(
        principal=bot,
        data=write_body(subject=alice_subject.external_id, content="Alice wants short answers."),
    )
    assert written.memory.status == "active"

    assert written_by(home(alice_client)) == ["support-bot"]
    page = memory_page(alice_client, written.memory)
    assert written_by(page) == ["support-bot"]
    # The agents it is given, under a label of its own: "Agent" read as its writer.
    assert meta(page, "Shared with") == ["any agent of your organisation"]
    assert "<dt>Agent</dt>" not in page


def test_an_import_of_a_memory_private_to_an_agent_names_both_apart(
    alice_client, alice_subject, tmp_path
):
    """An imported memory may be private to one agent: the agent it is shared with is not
    its writer."""
    AgentFactory(tenant=alice_subject.tenant, name="support-bot")
    path = tmp_path / "in.jsonl"
    line = record(alice_subject.tenant, subject=alice_subject.external_id, agent="support-bot")
    path.write_text(line + "\n")
    call_command("import_memories", str(path), stdout=StringIO(), stderr=StringIO())
    imported = Memory.objects.get(subject=alice_subject)
    assert imported.agent.name == "support-bot"

    page = memory_page(alice_client, imported)
    assert written_by(page) == ["an import"]
    assert meta(page, "Shared with") == ["only the agent support-bot"]
    assert written_by(home(alice_client)) == ["an import"]


def test_a_correction_the_person_made_says_written_by_you(alice_client, alice_subject):
    bot = agent_named(alice_subject.tenant, "support-bot")
    first = memory_write(
        principal=bot,
        data=write_body(subject=alice_subject.external_id, content="Alice likes long answers."),
    ).memory
    alice_client.post(
        reverse("portal:memory-correct", args=[first.pk]),
        {"content": "Alice likes short answers.", "reason": ""},
    )
    corrected = Memory.objects.get(supersedes=first)

    assert written_by(memory_page(alice_client, corrected)) == ["you"]
    assert written_by(home(alice_client)) == ["you"]
    # The version it replaced is still the agent's.
    assert written_by(memory_page(alice_client, first)) == ["support-bot"]


def test_a_sensitive_write_a_reviewer_approved_is_still_its_agents(
    alice_client, alice_subject, reviewer
):
    """The reviewer approved it; the agent wrote it. A reviewer's login is never named."""
    bot = agent_named(alice_subject.tenant, "support-bot")
    pending = memory_write(
        principal=bot,
        data=write_body(
            subject=alice_subject.external_id,
            memory_key="health.diet",
            content="Alice has diabetes and avoids sugar.",
        ),
    )
    assert pending.decision == "pending_approval"
    reviewers = Client()
    reviewers.force_login(reviewer)
    item = ReviewItem.objects.get(memory=pending.memory, kind="sensitive_write")
    reviewers.post(reverse("portal:review:approve", args=[item.pk]), {"reason": "checked"})
    pending.memory.refresh_from_db()
    assert pending.memory.status == "active"

    assert written_by(memory_page(alice_client, pending.memory)) == ["support-bot"]


def test_the_writers_are_read_only_in_the_callers_tenant(alice_subject, stranger_subject):
    from memory_core.selectors.writers import memory_writers

    ours = memory_write(
        principal=agent_named(alice_subject.tenant, "support-bot"),
        data=write_body(subject=alice_subject.external_id),
    ).memory
    theirs = memory_write(
        principal=agent_named(stranger_subject.tenant, "their-bot"),
        data=write_body(subject=stranger_subject.external_id),
    ).memory

    writers = memory_writers(tenant_id=alice_subject.tenant_id, memory_ids=[ours.pk, theirs.pk])
    assert list(writers) == [ours.pk]
    assert writers[ours.pk].agent == "support-bot"


def write_many(principal, subject, names: range) -> None:
    results = memory_write_batch(
        principal=principal,
        items=[
            write_body(
                subject=subject.external_id,
                memory_key=f"style.topic_{n}",
                content=f"Alice wants topic number {n} covered in every weekly summary.",
            )
            for n in names
        ],
    )
    assert all(result.memory.status == "active" for result in results)


def test_the_list_reads_its_pages_writers_in_one_query(alice_client, alice_subject):
    """A list of 24 memories by three agents makes as many queries as a list of three by
    one: the writers are read for the whole page at once."""
    tenant = alice_subject.tenant
    bots = [agent_named(tenant, name) for name in ("support-bot", "billing-bot", "travel-bot")]
    write_many(bots[0], alice_subject, range(3))
    with CaptureQueriesContext(connection) as few:
        body = home(alice_client)
    assert written_by(body) == ["support-bot"] * 3

    write_many(bots[0], alice_subject, range(3, 8))
    write_many(bots[1], alice_subject, range(8, 16))
    write_many(bots[2], alice_subject, range(16, 24))
    with CaptureQueriesContext(connection) as many:
        body = home(alice_client)
    assert sorted(written_by(body)) == sorted(
        ["support-bot"] * 8 + ["billing-bot"] * 8 + ["travel-bot"] * 8
    )
    assert len(many) == len(few)


def test_a_correction_withdrawn_by_a_later_one_is_said_so_on_the_list(alice_client, alice_memory):
    """Its page says "replaced by a later correction of yours"; the list's "Not in use" said
    "revoked", as of a memory the person took back."""
    retracted = "Alice takes insulin for diabetes and prefers tabs."
    for content in (retracted, "Alice prefers tabs."):
        alice_client.post(
            reverse("portal:memory-correct", args=[alice_memory.pk]),
            {"content": content, "reason": ""},
        )
    withdrawn = Memory.objects.get(content=retracted)
    assert withdrawn.status == "revoked"

    not_in_use = home(alice_client).split('id="not-in-use-title"', 1)[1]
    line = re.search(rf"{re.escape(retracted)}</a>(.*?)</li>", not_in_use, flags=re.S).group(1)
    assert "replaced by a later correction of yours" in line
    assert "revoked" not in line
    page = memory_page(alice_client, withdrawn)
    assert meta(page, "Not in use")[0].startswith("Replaced by a later correction of yours on ")


def test_an_import_the_expiry_sweep_reached_first_is_still_said_an_imports(
    alice_client, alice_subject, tmp_path
):
    """Stop 68's review: the writer was told by the memory's first event, whatever it was.
    The expiry sweep stamps its ``expired`` events with the moment it read as it began (the
    database's clock) and works for minutes; an import's ``created`` event has its host's
    clock. A record imported past its end while a sweep ran (or from a host whose clock is
    ahead) had its expiry first, and was "Written by: memledger"."""
    path = tmp_path / "in.jsonl"
    line = record(
        alice_subject.tenant,
        subject=alice_subject.external_id,
        valid_until="2025-02-01T00:00:00Z",  # a month after its created_at: past its end
    )
    path.write_text(line + "\n")
    sweep_began = timezone.now()
    call_command("import_memories", str(path), stdout=StringIO(), stderr=StringIO())
    imported = Memory.objects.get(subject=alice_subject)

    assert memories_expire(now=sweep_began) == 1
    first = MemoryEvent.objects.filter(memory_id=imported.pk).order_by("created_at", "id")[0]
    assert (first.action, first.actor_id) == ("expired", "retention")

    assert written_by(memory_page(alice_client, imported)) == ["an import"]
