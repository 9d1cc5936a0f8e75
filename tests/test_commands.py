"""The management commands later issues and outside checks rely on."""

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from memory_core.models import Agent, ApiKey, Memory, PortalMembership, Subject, Tenant
from memory_core.rls import platform_scope
from memory_core.services.api_keys import api_key_resolve

pytestmark = pytest.mark.django_db


def test_create_agent_key_creates_tenant_agent_and_prints_key_last():
    out = StringIO()
    call_command("create_agent_key", "--tenant", "acme", "--agent", "helper", stdout=out)
    raw_key = out.getvalue().strip().splitlines()[-1]
    key = api_key_resolve(raw_key)
    assert key is not None
    assert key.agent.name == "helper" and key.agent.tenant.slug == "acme"
    assert raw_key not in key.hashed_key  # stored hashed
    # A second key for the same agent reuses tenant and agent.
    call_command("create_agent_key", "--tenant", "acme", "--agent", "helper", stdout=StringIO())
    assert Tenant.objects.filter(slug="acme").count() == 1
    assert Agent.objects.filter(name="helper").count() == 1


def test_create_agent_key_may_grant_the_backend_the_issuing_of_subject_tokens():
    out = StringIO()
    arguments = ["--tenant", "acme", "--agent", "backend", "--issues-subject-tokens"]
    call_command("create_agent_key", *arguments, stdout=out)
    assert "It may issue subject tokens." in out.getvalue()
    backend = api_key_resolve(out.getvalue().strip().splitlines()[-1]).agent
    assert backend.issues_subject_tokens
    assert backend.grant_changed_at is not None  # by agent_grant_set: journaled
    call_command("create_agent_key", "--tenant", "acme", "--agent", "bot", stdout=StringIO())
    assert not Agent.objects.get(name="bot").issues_subject_tokens  # never by default

    Agent.objects.filter(name="bot").update(any_subject=False)
    with pytest.raises(CommandError) as refused:
        call_command("create_agent_key", "--tenant", "acme", "--agent", "bot",
                     "--issues-subject-tokens", stdout=StringIO())  # fmt: skip
    assert "cannot issue subject tokens" in str(refused.value)
    assert ApiKey.objects.filter(agent__name="bot").count() == 1  # no key for the refusal


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--tenant", "The tenant slug must be at most 64 characters (300 given)."),
        ("--agent", "The agent name must be at most 100 characters (300 given)."),
        ("--name", "The key's name must be at most 100 characters (300 given)."),
    ],
)
def test_create_agent_key_refuses_a_value_longer_than_its_column(option, message):
    values = {"--tenant": "acme-long", "--agent": "helper", "--name": "ci"} | {option: "x" * 300}
    arguments = [item for pair in values.items() for item in pair]
    with pytest.raises(CommandError) as refused:
        call_command("create_agent_key", *arguments, stdout=StringIO())
    assert str(refused.value) == f"{message} Nothing was created."
    assert not Tenant.objects.filter(slug__in=["acme-long", "x" * 64]).exists()
    assert not Agent.objects.filter(name="helper").exists()


@pytest.mark.parametrize("slug", ["Bad Slug!", "acme/../x", "caf\u00e9"])
def test_create_agent_key_refuses_a_slug_that_is_no_slug(slug):
    with pytest.raises(CommandError, match="may hold only letters, digits"):
        call_command("create_agent_key", "--tenant", slug, "--agent", "bot", stdout=StringIO())
    assert not Tenant.objects.filter(slug=slug).exists()


def test_load_demo_is_idempotent_and_prints_a_working_key():
    first, second = StringIO(), StringIO()
    call_command("load_demo", stdout=first)
    count = Memory.objects.count()
    call_command("load_demo", stdout=second)
    assert count == 19
    assert Memory.objects.count() == count
    assert Memory.objects.get(environment="staging").memory_type == "incident"
    old_key = first.getvalue().strip().splitlines()[-1].split(": ")[-1]
    new_key = second.getvalue().strip().splitlines()[-1].split(": ")[-1]
    assert api_key_resolve(old_key) is None  # the previous demo key is revoked
    assert api_key_resolve(new_key).agent.name == "coder"
    assert PortalMembership.objects.filter(role="end_user").count() == 2
    assert PortalMembership.objects.filter(role="reviewer").count() == 1


def test_load_demo_leaves_the_demo_logins_as_an_administrator_left_them():
    """`make run` loads the demo on every start, and put back every demo login's membership
    as the demo has it: a reviewer an administrator had removed reviewed again, an end user
    moved to another subject was moved back."""
    call_command("load_demo", stdout=StringIO())
    PortalMembership.objects.filter(user__username="reviewer").delete()
    moved = Subject.objects.create(tenant=Tenant.objects.get(slug="tenant-a"), external_id="u-9")
    PortalMembership.objects.filter(user__username="alice").update(subject=moved)
    out = StringIO()
    call_command("load_demo", stdout=out)
    assert not PortalMembership.objects.filter(user__username="reviewer").exists()
    assert PortalMembership.objects.get(user__username="alice").subject == moved
    assert "Demo login reviewer has no portal membership" in out.getvalue()
    assert "Reviewer login:" not in out.getvalue()


def test_load_demo_does_not_bring_back_what_was_deleted():
    """`make run` loads the demo on every start, and it brought back every demo memory its
    users had deleted (a deletion scrubs the row's source ids, which the loader knew a loaded
    memory by): deleted in the portal, active again at the next start."""
    from memory_core.deletion.services import deletion_request
    from memory_core.principals import SystemPrincipal

    call_command("load_demo", stdout=StringIO())
    go = Memory.objects.get(content="This service has migrated to Go.")
    deletion_request(principal=SystemPrincipal(tenant_id=go.tenant_id), memory_id=go.id)
    call_command("delete_subject", "tenant-a", "user-77", "--yes", "--run",
                 stdout=StringIO(), stderr=StringIO())  # fmt: skip
    live = Memory.objects.exclude(status="deleted")
    left = set(live.values_list("id", flat=True))
    assert len(left) == 19 - 3  # the chain of two, and user-77's one
    again = StringIO()
    call_command("load_demo", stdout=again)
    assert set(live.values_list("id", flat=True)) == left
    assert "not loaded again: 3" in again.getvalue()


def test_load_demo_names_the_tool_of_each_tool_output_memory():
    """The demo's tool outputs had an empty ``source.tool``, which an agent's write of a
    verified tool output is refused for (``source.tool_required``)."""
    call_command("load_demo", stdout=StringIO())
    tools = dict(
        Memory.objects.filter(source_type="verified_tool_output").values_list(
            "content", "source_tool"
        )
    )
    assert len(tools) == 6
    assert tools["The backend service runs on Python 3.12."] == "read_file"
    assert all(tool.strip() == tool and 0 < len(tool) <= 200 for tool in tools.values()), tools


def test_load_demo_after_a_demo_tenant_was_deleted_loads_the_rest():
    """`make run` loads the demo on every start: after `delete_tenant tenant-b` (or
    tenant-a) it failed with the trigger's IntegrityError (a deleted tenant takes no new
    subject), so the demo could not start again. A deleted demo tenant is left as it is."""
    call_command("load_demo", stdout=StringIO())
    call_command(
        "delete_tenant", "tenant-b", "--yes", "--run", stdout=StringIO(), stderr=StringIO()
    )
    out = StringIO()
    call_command("load_demo", stdout=out)
    assert "tenant-b was deleted" in out.getvalue()
    assert not Memory.objects.filter(tenant__slug="tenant-b").exclude(status="deleted").exists()
    raw_key = out.getvalue().strip().splitlines()[-1].split(": ")[-1]
    assert api_key_resolve(raw_key).agent.name == "coder"

    call_command(
        "delete_tenant", "tenant-a", "--yes", "--run", stdout=StringIO(), stderr=StringIO()
    )
    out = StringIO()
    call_command("load_demo", stdout=out)
    assert "tenant-a was deleted" in out.getvalue() and "mlk_" not in out.getvalue()
    assert not Memory.objects.exclude(status="deleted").exists()
    assert not PortalMembership.objects.exists()  # the deletion removed them; none come back


def test_create_agent_key_refuses_a_deleted_tenant_instead_of_printing_a_dead_key():
    """A deleted tenant's keys are refused (api_key_resolve), so a key made for it would
    never work: the command says so and creates nothing (no agent, no key)."""
    call_command("create_agent_key", "--tenant", "gone", "--agent", "helper", stdout=StringIO())
    Tenant.objects.filter(slug="gone").update(deleted_at=timezone.now())
    for agent in ("helper", "newcomer"):
        with pytest.raises(CommandError, match="Tenant 'gone' was deleted"):
            call_command(
                "create_agent_key", "--tenant", "gone", "--agent", agent, stdout=StringIO()
            )
    assert not Agent.objects.filter(name="newcomer").exists()
    assert ApiKey.objects.filter(agent__tenant__slug="gone").count() == 1


def test_create_agent_key_refuses_a_deactivated_agent_instead_of_printing_a_dead_key():
    call_command("create_agent_key", "--tenant", "acme", "--agent", "old", stdout=StringIO())
    Agent.objects.filter(name="old").update(is_active=False)
    with pytest.raises(CommandError, match="Agent 'old' of tenant 'acme' is deactivated"):
        call_command("create_agent_key", "--tenant", "acme", "--agent", "old", stdout=StringIO())
    assert ApiKey.objects.filter(agent__name="old").count() == 1


@pytest.mark.parametrize(
    ("command", "arguments", "message"),
    [
        ("rls_cost", ["--tenants", "0"], "must be at least 1, not 0"),
        ("rls_cost", ["--memories", "5", "--tenants", "10"], "must be at least --tenants"),
        ("leak_hunt", ["--retrievals", "-1"], "must be at least 1, not -1"),
        ("fuzz_api", ["--requests", "0"], "must be at least 1, not 0"),
    ],
)
def test_measuring_commands_refuse_a_count_that_measures_nothing(command, arguments, message):
    """rls_cost --tenants 0 ended in a ZeroDivisionError traceback; leak_hunt and fuzz_api
    with 0 or a negative count printed a clean report of nothing."""
    with pytest.raises(CommandError, match=message):
        call_command(command, *arguments, stdout=StringIO(), stderr=StringIO())


def _rls_cost_tenants():
    with platform_scope("test"):
        return list(Tenant.objects.filter(slug__startswith="rlscost-"))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "arguments",
    [
        ["--tenants", "1", "--memories", "10", "--queries", "6", "--block", "2"],
        ["--tenants", "10", "--memories", "25", "--queries", "4", "--block", "2"],
    ],
    ids=["fewer-memories-than-subjects", "two-per-tenant"],
)
def test_rls_cost_on_a_small_corpus_it_accepts_reports_without_a_traceback(arguments):
    """stop 57's audit of commands found that rls_cost accepted --memories at or above
    --tenants but planted 20 subjects a tenant and gave memories to only the first
    --memories/--tenants of them: a query as a subject with none found no candidate and ended
    in a RuntimeError("no candidates (rls)") traceback. It now plants no subject without a
    memory, reports, and deletes what it planted."""
    out = StringIO()
    call_command("rls_cost", *arguments, stdout=out, stderr=StringIO())
    assert "overhead_p50_ms: " in out.getvalue()
    assert not _rls_cost_tenants()


@pytest.mark.django_db(transaction=True)
def test_rls_cost_reports_the_number_of_memories_it_planted(tmp_path):
    """stop 57's audit of commands found that --tenants 2 --memories 41 planted 41 // 2 = 20
    a tenant, 40 in all, and reported "memories: 41" in its text and its --json. Both now
    report the memories stored."""
    out = StringIO()
    target = tmp_path / "rls.json"
    call_command(
        "rls_cost", "--tenants", "2", "--memories", "41", "--queries", "2", "--block", "1",
        "--keep", "--json", str(target), stdout=out, stderr=StringIO(),
    )  # fmt: skip
    tenants = _rls_cost_tenants()
    with platform_scope("test"):
        planted = Memory.objects.filter(tenant__in=tenants).count()
        Tenant.objects.filter(pk__in=[t.pk for t in tenants]).delete()
    assert planted == 40
    reported = [line for line in out.getvalue().splitlines() if line.startswith("memories:")]
    assert reported == ["memories: 40"]
    assert json.loads(target.read_text())["memories"] == 40


@pytest.mark.django_db
def test_load_demo_prints_no_key_for_a_deactivated_demo_agent():
    """README: `make run` prints a fresh demo API key for agent coder. Deactivated in the admin,
    the agent got one printed anyway, which the API refused (``create_agent_key`` refuses it:
    "a key printed for it would never work"), and its last key was revoked (stop 52's audit of
    authentication)."""
    from memory_core.services.api_keys import agent_deactivate

    call_command("load_demo", stdout=StringIO())
    agent = Agent.objects.get(tenant__slug="tenant-a", name="coder")
    agent_deactivate(agent=agent)
    live = set(ApiKey.objects.filter(agent=agent, revoked_at=None).values_list("pk", flat=True))
    out = StringIO()
    call_command("load_demo", stdout=out)
    assert "No demo API key: agent coder of tenant-a was deactivated" in out.getvalue()
    assert "Demo agent API key" not in out.getvalue()
    assert (
        set(ApiKey.objects.filter(agent=agent, revoked_at=None).values_list("pk", flat=True))
        == live
    )


def test_load_demo_prints_each_demo_login_as_it_is_not_as_the_demo_made_it():
    """docs/operations.md: "a demo login that exists is left as an administrator left it (its
    password, its membership or none, its role and subject: it makes only the logins that
    are not there)"; docs/security.md "Stop 53": it "names a demo login without a membership
    instead of printing it". ``make run`` runs ``load_demo`` on every start and shows its
    output as the logins to use.

    An administrator moves alice to another subject and changes bob's password; the next
    start printed "End user login: alice / memledger-alice  (tenant-a, user-42)" and "End
    user login: bob / memledger-bob ...": alice's membership was u-9's, and bob's printed
    password no longer logged in (stop 53's end-to-end review)."""
    call_command("load_demo", stdout=StringIO())
    moved = Subject.objects.create(tenant=Tenant.objects.get(slug="tenant-a"), external_id="u-9")
    PortalMembership.objects.filter(user__username="alice").update(subject=moved)
    bob = get_user_model().objects.get(username="bob")
    bob.set_password("changed-by-the-admin-42")
    bob.save()

    out = StringIO()
    call_command("load_demo", stdout=out)
    printed = out.getvalue()

    assert not Client().login(username="bob", password="memledger-bob")  # left as changed
    assert "bob / memledger-bob" not in printed, printed
    assert "(tenant-a, user-42)" not in printed, printed  # alice is u-9's now
    assert "alice / memledger-alice  (tenant-a, u-9)" in printed, printed
    assert "bob / (password changed)" in printed, printed


@pytest.mark.parametrize("name", ["\u200b", "\u200b\u200d", " \u2060 "])
def test_create_agent_key_refuses_an_agent_name_that_shows_nothing(name):
    """The admin's agent form refuses such a name ("An agent's name must show something: keys
    are made for it.", memory_core/admin.py AgentForm.clean_name) and POST
    /api/v1/subject-tokens refuses it as ``agent`` (IdField: invisible_characters_only), so
    the backend can never ask a token for that agent. create_agent_key made the agent (and
    printed a key for it)."""
    with pytest.raises(CommandError):
        call_command(
            "create_agent_key",
            "--tenant",
            "acme-inv",
            "--agent",
            name,
            stdout=StringIO(),
            stderr=StringIO(),
        )
    assert not Agent.objects.filter(tenant__slug="acme-inv").exists()
    assert not ApiKey.objects.filter(agent__tenant__slug="acme-inv").exists()


def run_on_a_database_never_migrated(*args: str, scratch: str):
    """Run ``manage.py *args`` on a database made for it and never migrated; return the
    finished process."""
    import psycopg
    from django.db import connection

    from tests.processes import run_manage
    from tests.rls_support import owner_conninfo

    scratch = f"{connection.settings_dict['NAME']}_{scratch}"

    def admin(sql):
        with psycopg.connect(**owner_conninfo(), dbname="postgres", autocommit=True) as conn:
            conn.execute(sql)

    admin(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')
    admin(f'CREATE DATABASE "{scratch}"')
    try:
        return run_manage(*args, MEMLEDGER_DB_NAME=scratch)
    finally:
        admin(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')


def test_a_command_on_a_database_never_migrated_says_to_migrate_it():
    """memory_core/rls.py ``platform_command``: "What an operator can fix ends the command
    with a CommandError saying so, not a traceback: a database that does not exist yet, ...",
    and its hint for it is "run `python manage.py migrate`: it creates the tables". The next
    step of that same hint, a database created and not yet migrated (or the restore
    procedure's ``CREATE DATABASE memledger`` before ``pg_restore`` ran), ended every
    platform command in a ``ProgrammingError: relation ... does not exist`` traceback."""
    result = run_on_a_database_never_migrated(
        "create_agent_key", "--tenant", "acme", "--agent", "bot", scratch="unmigrated"
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "migrate" in result.stderr, result.stderr[-2000:]


def test_issue_subject_token_on_a_database_never_migrated_says_to_migrate_it():
    """``issue_subject_token``, documented beside ``create_agent_key``, was not a platform
    command (``rls.platform_command``), so on a database made and not yet migrated it died in
    ``ProgrammingError: relation "memory_core_agent" does not exist`` instead of the sentence
    naming ``migrate`` that every other operator command ends with (stop 56's audit of the
    commands)."""
    result = run_on_a_database_never_migrated(
        "issue_subject_token", "--tenant", "acme", "--agent", "bot", "--user", "u-1",
        scratch="unmigrated_ist",
    )  # fmt: skip
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "migrate" in result.stderr, result.stderr[-2000:]


def test_import_of_a_file_that_cannot_be_read_is_a_command_error(tenant):
    """An I/O error while reading the file (a failing disk or network mount; here
    /proc/self/mem, which opens and then fails every read with EIO) ended in an ``OSError``
    traceback: ``_lines`` catches an error of ``open`` only, not of the reads."""
    with pytest.raises(CommandError, match="/proc/self/mem"):
        call_command("import_memories", "/proc/self/mem", stdout=StringIO(), stderr=StringIO())


@pytest.mark.django_db(transaction=True)
def test_issue_subject_token_for_a_tenant_deleted_meanwhile_is_a_command_error(tenant):
    """Stop 59's audit of the commands found ``issue_subject_token`` ending in an
    ``IntegrityError`` traceback when the tenant's deletion (``tenant_deletion_request`` holds
    the tenant row ``FOR UPDATE``) committed while the command's insert of a new subject
    waited on it: it reads ``deleted_at`` before, and the trigger ``tenant_not_deleted``
    refused the row. It should be a CommandError saying the tenant was deleted, with no token
    printed and no subject made, as the API answers ``410 tenant_deleted``."""
    import threading
    import time

    from django.db import transaction

    from tests.factories import AgentFactory
    from tests.threads import in_thread, someone_waits_for_a_lock

    agent = AgentFactory(tenant=tenant, any_subject=False)
    holding, release = threading.Event(), threading.Event()

    def delete_the_tenant():  # as tenant_deletion_request takes the row and marks it
        with platform_scope("test"), transaction.atomic():
            Tenant.objects.select_for_update().get(pk=tenant.pk)
            Tenant.objects.filter(pk=tenant.pk).update(deleted_at=timezone.now())
            holding.set()
            release.wait(20)

    holder = in_thread(delete_the_tenant, released=[holding])
    assert holding.wait(20)
    out = StringIO()

    def issue():
        call_command(
            "issue_subject_token", "--tenant", tenant.slug, "--agent", agent.name,
            "--user", "brand-new-user", stdout=out,
        )  # fmt: skip

    command = in_thread(issue)
    try:
        deadline = time.monotonic() + 20
        while not someone_waits_for_a_lock() and command.is_alive():
            assert time.monotonic() < deadline, "the command neither waited nor ended"
            time.sleep(0.05)
    finally:
        release.set()
        holder.wait(20)
    command.wait(30)
    assert command.error is not None, f"a token was printed for a deleted tenant: {out.getvalue()}"
    assert isinstance(command.error, CommandError), (
        f"a traceback: {type(command.error).__name__}: {command.error}"
    )
    assert "was deleted" in str(command.error)
    with platform_scope("test"):
        assert not Subject.objects.filter(tenant=tenant, external_id="brand-new-user").exists()


def test_rls_cost_stopped_while_planting_leaves_no_tenant(monkeypatch):
    """Stop 59's audit of the commands found ``rls_cost`` cleaning up (its ``finally``) only
    around ``measure``: ``plant`` ran before the ``try``, so a run stopped while it planted
    (Ctrl-C during the minutes a 20,000-memory corpus takes, or any error there) left every
    ``rlscost-*`` tenant planted so far, agents and memories included. No ``rlscost-`` tenant
    should be left after the run ends, however it ends."""
    from memory_core.services import api_keys

    real = api_keys.agent_ensure
    calls = []

    def interrupted_on_the_second_tenant(**kwargs):
        calls.append(kwargs)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the operator's Ctrl-C
        return real(**kwargs)

    monkeypatch.setattr(api_keys, "agent_ensure", interrupted_on_the_second_tenant)
    with pytest.raises(KeyboardInterrupt):
        call_command(
            "rls_cost", "--tenants", "3", "--memories", "30", "--queries", "1",
            stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    with platform_scope("test"):
        left = list(
            Tenant.objects.filter(slug__startswith="rlscost-").values_list("slug", flat=True)
        )
    assert left == [], f"tenants left behind by the interrupted run: {left}"


def test_leak_hunt_reports_progress_while_it_runs(monkeypatch):
    """Stop 64's audit of the commands: ``leak_hunt`` said nothing while it ran. Its default is
    10,000 retrievals, measured at 28 to 290 s, and nothing reached stdout or stderr until the
    last one had run (the hunt had no progress callback, the command printed its summary at
    the end): an evaluator could not tell a hunt that runs from one that hangs (a lock wait,
    a stalled model), where ``import_memories``, ``reembed`` and ``eval_locomo`` report as
    they go. It says the retrievals done and the leaks so far every 5 % now."""
    from memory_core.retrieval import pipeline

    retrievals = 60
    err = StringIO()
    seen_before_last: list[str] = []
    real = pipeline.retrieve
    calls = []

    def watched(**kwargs):
        calls.append(1)
        if len(calls) == retrievals:  # the last retrieval: what has the operator seen so far?
            seen_before_last.append(err.getvalue())
        return real(**kwargs)

    monkeypatch.setattr(pipeline, "retrieve", watched)
    call_command("leak_hunt", "--retrievals", str(retrievals), stdout=StringIO(), stderr=err)
    assert len(calls) == retrievals
    assert "leak hunt: 57/60 retrievals, 0 leaks so far" in seen_before_last[0]


def test_prune_deletion_journal_on_a_database_that_does_not_exist_says_to_create_it(tmp_path):
    """``prune_deletion_journal``, which the backup job runs, was not a platform command
    (``rls.platform_command``): on a database that does not exist (``MEMLEDGER_DB_NAME``
    mistyped in the cron job's environment) it died in an ``OperationalError`` traceback
    instead of the sentence every other operator command ends with (stop 68's audit of the
    commands)."""
    from django.db import connection

    from tests.processes import run_manage

    result = run_manage(
        "prune_deletion_journal", "--before", "2000-01-01T00:00:00Z",
        "--ledger", str(tmp_path / "journal.jsonl"),
        MEMLEDGER_DB_NAME=f"{connection.settings_dict['NAME']}_never_made",
    )  # fmt: skip
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "Create the database first" in result.stderr, result.stderr[-2000:]


def test_import_refuses_screen_and_no_screen_together(tenant, tmp_path):
    """``--screen --no-screen`` imported unscreened without a word (the last one won), where
    a script that meant to screen may have had ``--no-screen`` appended by a wrapper: the
    two contradict each other and are refused, nothing imported (stop 68's audit of the
    commands)."""
    from memory_core.models import Memory

    path = tmp_path / "one.jsonl"
    path.write_text("{}\n")
    with pytest.raises(CommandError, match="not allowed with"):
        call_command(
            "import_memories", str(path), "--screen", "--no-screen",
            stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    assert not Memory.objects.exists()


def test_delete_subject_in_a_deleted_tenant_says_it_was_deleted():
    """``delete_subject`` called a deleted tenant's slug unknown ("No tenant with the slug"),
    where ``delete_tenant`` accepts that slug: an operator retrying a person's deletion after
    the tenant's was told the slug was mistyped (stop 68's audit of the commands)."""
    from django.utils import timezone

    from tests.factories import TenantFactory

    TenantFactory(slug="gone-corp", deleted_at=timezone.now())
    with pytest.raises(CommandError, match="gone-corp' was deleted"):
        call_command(
            "delete_subject", "gone-corp", "u-1",
            stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    with pytest.raises(CommandError, match="No tenant with the slug 'no-such-corp'"):
        call_command(
            "delete_subject", "no-such-corp", "u-1",
            stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip


@pytest.mark.parametrize("command", ["delete_subject", "delete_tenant"])
def test_a_deletion_run_here_reports_each_step_while_it_runs(command, tenant, monkeypatch):
    """``delete_subject --run`` and ``delete_tenant --run`` printed nothing between the
    operation's request and its end ("ran its steps here: completed"), where ``--wait``
    prints how many steps are verified at each change: a large deletion's steps run minutes,
    and the operator could not tell a run under way from one that hangs (stop 68's audit of
    the commands). ``--run`` now prints ``--wait``'s line as each step's verdict is made, the
    step and its time named: one line a step, whatever the deletion's size."""
    from memory_core.deletion import stores
    from memory_core.models import DeletionStep
    from tests.factories import MemoryFactory, SubjectFactory

    owner = SubjectFactory(tenant=tenant)
    for _ in range(3):
        MemoryFactory(subject=owner)
    arguments = [tenant.slug, owner.external_id] if command == "delete_subject" else [tenant.slug]
    target = "subject" if command == "delete_subject" else "tenant"
    names = [store.name for store in stores.active_stores(target)]
    last, total = names[-1], len(names)
    err = StringIO()
    seen_before_last: list[str] = []
    store = stores.REGISTRY[last]
    real_purge = store.purge

    def watched(ctx):  # what had the operator seen when the last step began?
        seen_before_last.append(err.getvalue())
        return real_purge(ctx)

    monkeypatch.setattr(store, "purge", watched)
    call_command(command, *arguments, "--yes", "--run", stdout=StringIO(), stderr=err)
    assert seen_before_last, f"the {last} step did not run"
    assert f"running: {total - 1}/{total} steps verified (left: {last}); " in seen_before_last[0]
    lines = [line for line in err.getvalue().splitlines() if line.startswith("running: ")]
    assert len(lines) == total, lines
    assert lines[-1].startswith(f"running: {total}/{total} steps verified; {last} verified in ")
    assert "ran its steps here: completed" in err.getvalue()
    steps = DeletionStep.objects.filter(operation__tenant=tenant).values_list("store", flat=True)
    assert sorted(steps) == sorted(names)


@pytest.mark.parametrize("seconds", ["-1", "nan", "inf", "2147484"])
def test_import_refuses_a_lock_wait_that_is_no_wait(tenant, tmp_path, seconds):
    """``--lock-wait`` (how long an import waits for another to end, new since stop 68's
    audit of the commands) takes 0 to 2,147,483 seconds, PostgreSQL's ``lock_timeout``
    limit: anything else is refused before the file is read, nothing imported."""
    path = tmp_path / "one.jsonl"
    path.write_text("{}\n")
    with pytest.raises(CommandError, match="--lock-wait takes a number of seconds from 0 to"):
        call_command(
            "import_memories", str(path), "--lock-wait", seconds,
            stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    assert not Memory.objects.exists()


class _PipeClosedAfterOneLine(StringIO):
    """The stderr of ``--run ... 2>&1 | head -1``: its reader gone after the first line,
    every later write fails as a closed pipe's does."""

    def write(self, text: str) -> int:
        if self.getvalue():
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)


@pytest.mark.parametrize("command", ["delete_subject", "delete_tenant"])
def test_a_deletion_run_here_whose_stderr_closes_still_runs_every_step(command, tenant):
    """``--run`` reports each step on stderr as its verdict is made (stop 69), from inside
    the phase's transaction: a stderr that failed there (a pipe whose reader ended, a full
    disk) raised out of the phase, which rolled back, and the run stopped with the operation
    left ``running``, its steps undone, until a worker's sweep ran it again (stop 69's review
    of the commands). A report that cannot be written is the operator's loss, never the
    deletion's: every step runs and the operation completes."""
    import contextlib

    from memory_core.models import DeletionOperation, DeletionStep
    from tests.factories import MemoryFactory, SubjectFactory

    owner = SubjectFactory(tenant=tenant)
    for _ in range(2):
        MemoryFactory(subject=owner)
    arguments = [tenant.slug, owner.external_id] if command == "delete_subject" else [tenant.slug]
    stderr = _PipeClosedAfterOneLine()
    with contextlib.suppress(BrokenPipeError):  # what the command says after the run is lost
        call_command(command, *arguments, "--yes", "--run", stdout=StringIO(), stderr=stderr)
    operation = DeletionOperation.objects.get(tenant=tenant)
    assert operation.status == DeletionOperation.State.COMPLETED, operation.last_error
    steps = DeletionStep.objects.filter(operation=operation).values_list("status", flat=True)
    assert set(steps) == {DeletionStep.State.VERIFIED}
    assert not Memory.objects.filter(subject=owner).exclude(content="").exists()


def test_a_deletion_run_here_says_why_a_step_failed_and_that_its_phase_rolled_back(
    tenant, monkeypatch, settings
):
    """``--run``'s line for a step that failed said ``<step> failed`` and no more, and a
    database error rolls back its whole phase: each step of it was told ``failed`` in turn,
    the first ones after a ``verified`` line, with nothing saying that their purges were
    undone, nor why (the run ended "partial", the reason in the steps' ``last_error``
    alone; stop 69's review of the commands). A failed step's line now says why, and a step
    of a rolled-back phase says that its phase rolled back: at most two lines a step."""
    from django.db import connection

    from memory_core.deletion import stores
    from tests.factories import MemoryFactory, SubjectFactory

    owner = SubjectFactory(tenant=tenant)
    MemoryFactory(subject=owner)
    names = [store.name for store in stores.active_stores("subject")]
    phase = [name for name in names if stores.REGISTRY[name].phase == "database"]
    failing = stores.REGISTRY["full_text"]
    assert failing.phase == "database" and phase.index("full_text") > 0

    def purge_that_fails(ctx):  # a database error inside the phase's transaction
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 / 0")

    monkeypatch.setattr(failing, "purge", purge_that_fails)
    settings.MEMLEDGER_DELETION_FAULTS = "exports=fail:1"  # a Python error: recorded, run on
    err = StringIO()
    with pytest.raises(CommandError, match="is partial, not completed"):
        call_command(
            "delete_subject", tenant.slug, owner.external_id, "--yes", "--run",
            stdout=StringIO(), stderr=err,
        )  # fmt: skip
    lines = [line for line in err.getvalue().splitlines() if line.startswith("running: ")]
    assert len(lines) <= 2 * len(names), lines
    undone = [line.split("; ", 1)[1] for line in lines if "rolled back" in line]
    assert undone == [
        f"{name} failed: its phase rolled back (DataError: division by zero)" for name in phase
    ], lines
    exports = [line.split("; ", 1)[1] for line in lines if "; exports " in line]
    assert len(exports) == 1 and exports[0].startswith("exports failed in "), lines
    assert exports[0].endswith(": RuntimeError: injected failure of step exports (attempt 1)")
    assert "ran its steps here: partial" in err.getvalue()
