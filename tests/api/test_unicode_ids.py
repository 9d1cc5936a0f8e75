"""One id spelt two canonically equivalent ways (NFC and NFD: "José" typed on most systems
and from a macOS client) is one id, on every path; an id holding a bidirectional control is
refused (stop 51's audit of Unicode).

Stored as sent, the two spellings were two subjects (a deletion of one left the other's
memories), two chains on one key (a correction superseded nothing) and two projects (a
retrieval for the NFC project left out what was written under the NFD one). Ids are read in
NFC everywhere now (``memory_core.text.identifier``), and migration 0038 rewrites what was
stored before.
"""

import importlib
import json
import unicodedata
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory_core.models import Agent, Memory, ReviewItem, ScopeKind, Status, Subject
from memory_core.text import identifier
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory, write_body
from tests.rls_support import run_as_a_migration

pytestmark = pytest.mark.django_db

NFC = "José"
NFD = unicodedata.normalize("NFD", NFC)
KEY_NFC = "préférence.café"
KEY_NFD = unicodedata.normalize("NFD", KEY_NFC)
assert NFC != NFD and KEY_NFC != KEY_NFD
SECOND = {"type": "user_input", "conversation_id": "c-2", "message_id": "m-2"}


def write(api_client, **fields):
    return api_client.post("/api/v1/memories", write_body(**fields), format="json")


def test_a_subjects_two_spellings_are_one_subject_and_one_deletion_takes_both(api_client):
    assert (
        write(api_client, subject=NFC, content="User prefers concise answers.").status_code == 201
    )
    second = write(
        api_client, subject=NFD, memory_key="style.language", content="User prefers Spanish.",
        source=SECOND,
    )  # fmt: skip
    assert second.status_code == 201, second.json()
    assert list(Subject.objects.values_list("external_id", flat=True)) == [NFC]
    listed = api_client.get("/api/v1/memories", {"subject": NFD}).json()["results"]
    assert len(listed) == 2 and {m["subject"] for m in listed} == {NFC}
    assert api_client.post("/api/v1/deletions", {"subject": NFD}, format="json").status_code == 202
    assert not Memory.objects.exclude(status=Status.DELETED).exists()


def test_a_write_on_a_keys_other_spelling_supersedes_its_head(api_client):
    first = write(api_client, memory_key=KEY_NFC, content="User drinks espresso.")
    second = write(
        api_client, memory_key=KEY_NFD, content="User drinks filter coffee now.", source=SECOND
    )
    assert second.json()["rule_codes"] == ["supersession.supersedes"], second.json()
    assert second.json()["memory"]["supersedes"] == first.json()["memory"]["id"]
    assert second.json()["memory"]["memory_key"] == KEY_NFC


def test_a_project_written_in_nfd_is_retrieved_for_its_nfc_spelling(api_client):
    written = write(
        api_client, subject="user-9", memory_type="project_constraint",
        memory_key="project.language", scope=f"project:{unicodedata.normalize('NFD', 'café-api')}",
        content="The café-api project is written in Go.",
    )  # fmt: skip
    assert written.status_code == 201, written.json()
    assert written.json()["memory"]["scope"] == "project:café-api"
    answer = api_client.post(
        "/api/v1/retrieve",
        {"query": "Which language is the project written in?",
         "context": {"user_id": "user-9", "project_id": "café-api"}},
        format="json",
    )  # fmt: skip
    assert [item["id"] for item in answer.json()["items"]] == [written.json()["memory"]["id"]]


@pytest.mark.parametrize("field", ["subject", "memory_key", "scope"])
def test_an_id_holding_a_bidirectional_control_is_refused(api_client, field):
    """The reviewer's queue showed the subject "\\u202eecila" as "alice", and the rest of its
    line backwards: its type, key and writing agent."""
    value = {"subject": "\u202eecila", "memory_key": "style.\u2067x", "scope": "project:a\u202eb"}
    answer = write(api_client, **{field: value[field]})
    assert answer.status_code == 400, answer.json()
    assert "bidi" in str(answer.json()["error"]["details"][field])
    listed = api_client.get("/api/v1/memories", {"subject": "\u202eecila"})
    assert listed.status_code == 400
    assert listed.json()["error"]["details"]["subject"][0]["code"] == "bidi_controls_not_allowed"
    assert not Memory.objects.exists()


def test_migration_0038_rewrites_the_ids_stored_in_another_form(tenant):
    rewrite = importlib.import_module("memory_core.migrations.0038_ids_in_nfc").REWRITE
    jose = SubjectFactory(tenant=tenant, external_id=NFD)
    # Two spellings of one id in a tenant: two subjects that cannot be merged here, left.
    twins = [SubjectFactory(tenant=tenant, external_id=s) for s in ("Zoë", "Zoe\u0308")]
    key = MemoryFactory(subject=jose, memory_key=KEY_NFD)
    own = MemoryFactory(subject=jose, scope_kind=ScopeKind.USER, scope_ref=NFD)
    project = MemoryFactory(
        subject=jose, scope_kind=ScopeKind.PROJECT, scope_ref=unicodedata.normalize("NFD", "café")
    )
    gone = MemoryFactory(subject=jose, memory_key=KEY_NFD, status="deleted", content="")
    item = ReviewItem.objects.create(
        tenant=tenant, subject=jose, kind="conflict", memory_key=KEY_NFD,
        scope_kind=ScopeKind.USER, scope_ref=NFD, candidate_ids=[key.id],
    )  # fmt: skip

    run_as_a_migration(rewrite)

    jose.refresh_from_db()
    assert jose.external_id == NFC
    assert [Subject.objects.get(pk=t.pk).external_id for t in twins] == ["Zoë", "Zoe\u0308"]
    rows = {m.pk: m for m in Memory.objects.all()}
    assert rows[key.pk].memory_key == KEY_NFC
    assert rows[own.pk].scope_ref == NFC and rows[project.pk].scope_ref == "café"
    assert rows[gone.pk].memory_key == KEY_NFD  # as its deletion scrubbed it
    item.refresh_from_db()
    assert (item.memory_key, item.scope_ref) == (KEY_NFC, NFC)


def test_delete_subject_names_the_subject_in_either_spelling(api_client, tenant):
    """``delete_subject SLUG José`` from a macOS shell passes NFD: "No subject"."""
    from io import StringIO

    from django.core.management import call_command

    written = write(api_client, subject=NFC, content="User prefers concise answers.")
    assert written.status_code == 201
    call_command("delete_subject", tenant.slug, NFD, "--yes", "--run", stdout=StringIO())
    assert not Memory.objects.exclude(status=Status.DELETED).exists()


def test_issue_subject_token_reads_the_user_as_requests_do(tenant):
    """Run from a macOS shell, ``issue_subject_token --user José`` passes NFD: the token named
    a second subject, and the bound agent's writes about José were refused
    (``tenant.subject_not_granted``); a user holding a bidi control was issued a token where
    the API refuses it (stop 51's review)."""
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    from memory_core.models import Agent
    from tests.clients import client_for

    bound = Agent.objects.create(tenant=tenant, name="assistant", any_subject=False)
    issue = ["issue_subject_token", "--tenant", tenant.slug, "--agent", "assistant", "--user"]
    out = StringIO()
    call_command(*issue, NFD, stdout=out)
    token = out.getvalue().strip().splitlines()[-1]
    answer = client_for(bound, token).post(
        "/api/v1/memories", write_body(subject=NFC), format="json"
    )
    assert answer.status_code == 201, answer.json()
    with pytest.raises(CommandError, match="Bidirectional"):
        call_command(*issue, "\u202eecila", stdout=StringIO())
    assert list(Subject.objects.values_list("external_id", flat=True)) == [NFC]


def test_a_token_signed_for_an_nfd_id_names_the_nfc_subject(tenant, agent):
    """A token issued before stop 51 for an NFD id names the subject migration 0038 rewrote."""
    from django.core import signing

    from memory_core.subject_tokens import SALT, subject_token_verify

    token = signing.dumps({"t": str(tenant.id), "a": str(agent.id), "u": NFD}, salt=SALT)
    assert subject_token_verify(token, tenant_id=tenant.id, agent_id=agent.id) == NFC


def test_a_subject_added_in_the_admin_is_the_one_agents_write_about(
    admin_client, tenant, api_client
):
    """The admin's add form stored the external id as typed: an NFD "José" was a subject the
    API never reached, and its portal login saw nothing agents wrote (stop 51's review)."""
    form = {"tenant": str(tenant.pk), "display_name": "José",
            "created_at_0": "2026-12-01", "created_at_1": "10:00:00"}  # fmt: skip
    url = "/admin/memory_core/subject/add/"
    refused = admin_client.post(url, {**form, "external_id": "\u202eecila"})
    assert refused.status_code == 200 and b"Bidirectional" in refused.content
    assert admin_client.post(url, {**form, "external_id": NFD}).status_code == 302
    assert write(api_client, subject=NFC).status_code == 201
    assert list(Subject.objects.values_list("external_id", flat=True)) == [NFC]


def test_an_agents_two_spellings_are_one_agent_on_every_path(tenant, admin_client):
    """Agent names were kept as typed: ``create_agent_key --agent José`` from a macOS shell
    (NFD) made a second agent beside the NFC one, and a subject token asked for the NFC name
    found no agent (stop 51 left it open; closed at stop 53, migration 0040)."""
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    from memory_core.models import Agent
    from tests.clients import client_for

    call_command("create_agent_key", "--tenant", tenant.slug, "--agent", NFD, stdout=StringIO())
    call_command("create_agent_key", "--tenant", tenant.slug, "--agent", NFC, stdout=StringIO())
    assert list(Agent.objects.values_list("name", flat=True)) == [NFC]
    with pytest.raises(CommandError, match="Bidirectional"):
        call_command("create_agent_key", "--tenant", tenant.slug, "--agent", "\u202eedoc",
                     stdout=StringIO())  # fmt: skip

    issuer = Agent.objects.create(tenant=tenant, name="backend", issues_subject_tokens=True)
    asked = client_for(issuer).post(
        "/api/v1/subject-tokens", {"agent": NFD, "subject": "u-1"}, format="json"
    )
    assert asked.status_code == 201, asked.json()
    assert asked.json()["agent"] == NFC

    url = "/admin/memory_core/agent/add/"
    form = {"tenant": str(tenant.pk), "max_sensitivity": "normal",
            "apikey_set-TOTAL_FORMS": "0", "apikey_set-INITIAL_FORMS": "0"}  # fmt: skip
    refused = admin_client.post(url, {**form, "name": "\u202eedoc"})
    assert refused.status_code == 200 and b"Bidirectional" in refused.content
    again = admin_client.post(url, {**form, "name": NFD})
    assert again.status_code == 200 and b"already exists" in again.content  # the NFC one
    assert Agent.objects.filter(tenant=tenant).count() == 2


def test_migration_0040_rewrites_the_agent_names_stored_in_another_form(tenant):
    from memory_core.models import Agent

    rewrite = importlib.import_module("memory_core.migrations.0040_agent_names_in_nfc").REWRITE
    jose = Agent.objects.create(tenant=tenant, name=NFD)
    twins = [Agent.objects.create(tenant=tenant, name=n) for n in ("Zoë", "Zoe\u0308")]

    run_as_a_migration(rewrite)

    assert Agent.objects.get(pk=jose.pk).name == NFC
    assert [Agent.objects.get(pk=t.pk).name for t in twins] == ["Zoë", "Zoe\u0308"]


def test_a_datasets_agent_is_read_as_names_are():
    from memory_core.evaluation.dataset import DatasetError, load_dataset_memories
    from memory_core.models import Agent

    memory = {"id": "m1", "tenant": "t", "subject": "u", "agent": NFD,
              "memory_type": "user_preference", "content": "Prefers tea.",
              "authority": "explicit_user", "scope": "global"}  # fmt: skip
    load_dataset_memories({"dataset": "d", "memories": [memory]})
    assert list(Agent.objects.values_list("name", flat=True)) == [NFC]
    with pytest.raises(DatasetError, match="Bidirectional"):
        load_dataset_memories({"dataset": "e", "memories": [{**memory, "agent": "\u202eedoc"}]})


def _ask_token(issuer, agent_name):
    return client_for(issuer).post(
        "/api/v1/subject-tokens",
        data=json.dumps({"agent": agent_name, "subject": "user-9"}),
        content_type="application/json",
    )


def test_a_subject_tokens_agent_name_with_a_bidi_control_is_refused_as_an_id_is(tenant):
    """Asked for ``backend\\u202e``, the API answers 404 not_found, not the 400 with
    ``agent`` coded ``bidi_controls_not_allowed`` that the docs promise."""
    issuer = AgentFactory(tenant=tenant, issues_subject_tokens=True, any_subject=True)
    response = _ask_token(issuer, "serving\u202e")
    assert response.status_code == 400, response.json()
    codes = [e["code"] for e in response.json()["error"]["details"].get("agent", [])]
    assert codes == ["bidi_controls_not_allowed"], response.json()


def test_no_token_is_issued_for_an_agent_name_holding_a_bidi_control(tenant):
    """An agent row named with a bidi control (as one made before stop 53 is: migration 0040
    rewrote names to NFC, it did not remove bidi controls) gets a 201 token: the name is not
    "refused with a bidirectional control" on this path."""
    issuer = AgentFactory(tenant=tenant, issues_subject_tokens=True, any_subject=True)
    Agent.objects.create(tenant=tenant, name="\u202eedoc", any_subject=False)
    response = _ask_token(issuer, "\u202eedoc")
    assert response.status_code == 400, response.json()


def test_issue_subject_token_refuses_an_agent_name_holding_a_bidi_control(tenant):
    """docs/security.md (stop 53, "Agent names are read as ids are"): names are "refused with
    a bidirectional control on every path (`create_agent_key`, `issue_subject_token`, the
    subject-token request, …)". ``issue_subject_token`` checked ``--user`` for bidi controls
    but not ``--agent`` (it only normalized it), and printed a token for the agent
    ``\\u202eedoc`` (stop 53's audit of the docs)."""
    Agent.objects.create(tenant=tenant, name="\u202eedoc", any_subject=False)
    with pytest.raises(CommandError, match="(?i)bidirectional"):
        call_command(
            "issue_subject_token",
            "--tenant",
            tenant.slug,
            "--agent",
            "\u202eedoc",
            "--user",
            "user-9",
            stdout=StringIO(),
        )


def test_migration_0040_does_not_fail_on_a_name_nfc_lengthens(tenant):
    """Migration 0040 rewrote every agent name "stored in another form" with ``SET name =
    normalize(a.name, NFC)``, guarded only against a tenant's other spelling (the review of
    stop 53's changes). NFC lengthens a few texts (a composition
    exclusion such as U+0958 DEVANAGARI LETTER QA becomes two characters; the dataset loader
    says so itself, "NFC lengthens a few texts", and checks the length again). A name of up
    to 100 characters (``Agent.name``'s max_length) that any path stored before this stop,
    which took names as given, grew past varchar(100): the UPDATE raised "value too long",
    and ``manage.py migrate`` failed on existing data. It leaves such a name as it is now, as
    it leaves a name whose NFC spelling another agent has."""
    stored = AgentFactory(tenant=tenant, name="\u0958" * 60)
    assert len(identifier(stored.name)) > Agent._meta.get_field("name").max_length

    run_as_a_migration(
        importlib.import_module("memory_core.migrations.0040_agent_names_in_nfc").REWRITE
    )

    stored.refresh_from_db()


# An 80-character Korean id: 240 code points in NFD, the same id from a macOS client.
LONG_NFC = "각" * 80
LONG_NFD = unicodedata.normalize("NFD", LONG_NFC)
assert len(LONG_NFD) > 200


@pytest.mark.parametrize(
    "field", ["subject", "memory_key", "scope", "message_id", "batch"], ids=str
)
def test_a_long_id_sent_in_nfd_is_measured_as_stored(api_client, field):
    """The write's serializer measured an id's length as sent, before NFC: an 80-character
    Korean subject (or key, project, message id) sent in NFD was a 400 ``max_length``,
    while its NFC spelling was stored and the list read the NFD one (stop 54's audit of
    writes)."""
    if field == "message_id":
        body = write_body()
        body["source"]["message_id"] = LONG_NFD
    elif field == "scope":
        body = write_body(scope=f"project:{LONG_NFD}")
    else:
        body = write_body(**{"subject" if field == "batch" else field: LONG_NFD})
    if field == "batch":
        response = api_client.post("/api/v1/memories/batch", {"items": [body]}, format="json")
        assert response.status_code == 200, response.json()
        assert response.json()["accepted"] == 1
    else:
        response = api_client.post("/api/v1/memories", body, format="json")
        assert response.status_code == 201, response.json()
    memory = Memory.objects.select_related("subject").get()
    stored = {
        "subject": memory.subject.external_id,
        "batch": memory.subject.external_id,
        "memory_key": memory.memory_key,
        "scope": memory.scope_ref,
        "message_id": memory.source_message_id,
    }[field]
    assert stored == LONG_NFC
