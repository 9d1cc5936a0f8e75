"""Two runs of one import at once (transactional: each run commits on its own): they take
turns (``locks.import_lock``; stop 55's audit of imports, failed on the code before), and
the one waiting names the other (stop 70's review). An agent changed by an administrator
while an import runs (stop 70's review)."""

import re
import threading
import time
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from memory_core.locks import import_lock
from memory_core.management.commands import import_memories as import_module
from memory_core.models import Agent, Memory, Subject
from memory_core.rls import platform_scope
from memory_core.services.api_keys import agent_deactivate, agent_grant_set
from tests.factories import AgentFactory, TenantFactory
from tests.memory_core.admission.test_commands import record
from tests.threads import in_thread, someone_waits_for_a_lock

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_runs_of_one_import_at_once_store_each_record_once(tenant, tmp_path, monkeypatch):
    """docs/api.md: "A record already present (same subject, source.conversation_id,
    source.message_id and content hash) is skipped, so re-running an import is safe". A
    run is one transaction of minutes on a large file, and its "already present" is read
    before its own rows commit: a second run started meanwhile (a retry of an import that
    seemed stuck, a deploy script run on two hosts) read none of the first's rows, the
    subjects' locks both take are shared, and no constraint holds the fingerprint, so both
    stored every record: each memory twice, two chains on every key."""
    Subject.objects.create(tenant=tenant, external_id="user-9", display_name="user-9")
    path = tmp_path / "in.jsonl"
    path.write_text(record(tenant))
    stored, go = threading.Event(), threading.Event()
    real_store_many = import_module.memory_store_many

    def store_then_hold(**kwargs):
        rows = real_store_many(**kwargs)
        if threading.current_thread().name == "first":
            stored.set()  # its rows are inserted, its transaction not yet committed
            assert go.wait(60)
        return rows

    monkeypatch.setattr(import_module, "memory_store_many", store_then_hold)

    def run():
        call_command("import_memories", str(path), stdout=StringIO(), stderr=StringIO())

    first = in_thread(run, name="first", released=[stored])
    assert stored.wait(60)
    second = in_thread(run, name="second")
    second.join(5)  # it stores its rows and commits, or waits for the first
    go.set()
    first.outcome()
    second.wait()
    # Refused ("another import is running") or skipped as present: either is safe.
    assert second.error is None or isinstance(second.error, CommandError), second.error

    assert Memory.objects.filter(subject__external_id="user-9").count() == 1


def _hold_the_import_lock(holding, release):
    """Hold the lock imports take turns on until ``release`` is set, as a running import
    holds it until it commits."""
    with transaction.atomic():
        import_lock()
        holding.set()
        assert release.wait(60)


def _import_on_a_thread(path, err, *arguments):
    return in_thread(
        lambda: call_command(
            "import_memories", str(path), *arguments, stdout=StringIO(), stderr=err
        )
    )


def _until_it_waits_or_ends(command) -> None:
    deadline = time.monotonic() + 30
    while not someone_waits_for_a_lock("advisory") and command.is_alive():
        assert time.monotonic() < deadline, "the import neither waited nor ended"
        time.sleep(0.05)


def test_an_import_waiting_for_another_says_so_then_goes_on(tenant, tmp_path):
    """An import waits for another to commit (imports take turns, whatever their file or
    tenant: ``locks.import_lock``), and it waited without a word: run beside a large import,
    it printed nothing for minutes, as one that hangs (stop 68's audit of the commands). It
    says on stderr that it waits for another import, and when it goes on."""
    path = tmp_path / "in.jsonl"
    path.write_text(record(tenant))
    holding, release = threading.Event(), threading.Event()
    holder = in_thread(lambda: _hold_the_import_lock(holding, release), released=[holding])
    assert holding.wait(30)
    err = StringIO()
    command = _import_on_a_thread(path, err)
    try:
        _until_it_waits_or_ends(command)
        said_while_waiting = err.getvalue()
        assert command.is_alive(), f"it did not wait for the other import: {err.getvalue()}"
    finally:
        release.set()
        holder.outcome(30)
    command.outcome(60)
    assert (
        "waiting for another import to end: imports take turns, whatever their file or "
        "tenant, each until it commits\n"
    ) in said_while_waiting
    assert "the other import ended after" in err.getvalue()
    assert "stored 1/1 records" in err.getvalue()
    assert Memory.objects.filter(subject__external_id="user-9").count() == 1


@pytest.mark.parametrize("seconds", ["0", "0.5"])
def test_an_import_told_how_long_to_wait_for_another_stops_after_it(tenant, tmp_path, seconds):
    """``--lock-wait SECONDS`` bounds the wait for another import (0: none): past it the
    import stops with a sentence, nothing imported, where it would have waited as long as
    the other ran."""
    path = tmp_path / "in.jsonl"
    path.write_text(record(tenant))
    holding, release = threading.Event(), threading.Event()
    holder = in_thread(lambda: _hold_the_import_lock(holding, release), released=[holding])
    assert holding.wait(30)
    err = StringIO()
    try:
        started = time.monotonic()
        command = _import_on_a_thread(path, err, "--lock-wait", seconds)
        command.wait(30)  # it ends while the other import still runs
        took = time.monotonic() - started
    finally:
        release.set()
        holder.outcome(30)
    assert isinstance(command.error, CommandError), command.error
    assert str(command.error) == (
        f"Another import still held the import lock after {float(seconds):g} s (--lock-wait): "
        "nothing imported. Run this one again once that import has ended, or give a longer "
        "--lock-wait."
    )
    assert f"each until it commits, at most {float(seconds):g} s (--lock-wait)" in err.getvalue()
    assert took >= float(seconds)
    assert not Memory.objects.exists()
    # Once the other has ended, the same import goes through at once.
    call_command(
        "import_memories", str(path), "--lock-wait", seconds, stdout=StringIO(), stderr=err
    )
    assert Memory.objects.filter(subject__external_id="user-9").count() == 1


def _one_chunk_then_the_agents_lines(tenant, tmp_path, name: str):
    """Write a chunk the import stores first, CHUNK lines, the first naming the agent
    ``name`` and the others shared, then two lines naming the agent; return the path."""
    shared = [
        record(
            tenant,
            agent=name if n == 0 else None,
            subject=f"user-{n}",
            content=f"User prefers option {n}.",
            source={"type": "user_input", "conversation_id": "old-store", "message_id": str(n)},
        )
        for n in range(import_module.CHUNK)
    ]
    owned = [
        record(
            tenant,
            agent=name,
            subject="user-late",
            memory_key=f"style.late{n}",
            content=f"User prefers late option {n}.",
            source={"type": "user_input", "conversation_id": "late", "message_id": str(n)},
        )
        for n in range(2)
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([*shared, *owned]) + "\n")
    return path


def _after_the_first_chunk(monkeypatch, change) -> None:
    """Run ``change()`` on a connection of its own, committed, once the import has stored
    its first chunk (its transaction still open), as an administrator's action then does."""
    real_store_many = import_module.memory_store_many
    calls = []

    def store_then_change(**kwargs):
        rows = real_store_many(**kwargs)
        calls.append(len(kwargs["drafts"]))
        if len(calls) == 1:
            in_thread(change, name="administrator").outcome(30)
        return rows

    monkeypatch.setattr(import_module, "memory_store_many", store_then_change)


def _refusal(code: str) -> str:
    return {
        "agent_deactivated": "The agent 'late' is deactivated: the memory, private to it, "
        "would be given to no agent. Name an active agent, or none (shared). (agent_deactivated)",
        "grant.type_not_readable": "The agent 'late' does not read user_preference memories "
        "(its grant reads: episode): the memory, private to it, would be given to no agent. "
        "Name an agent that reads it, or none (shared). (grant.type_not_readable)",
        "grant.sensitivity_above_max": "The agent 'late' reads memories up to public only, and "
        "this one is personal: the memory, private to it, would be given to no agent. Name an "
        "agent that reads it, or none (shared). (grant.sensitivity_above_max)",
    }[code]


# The administrator's actions that change what an agent is given, by the code of the error
# line a line in use naming it is then refused with.
_CHANGES = {
    "agent_deactivated": lambda agent: agent_deactivate(agent=agent),
    "grant.type_not_readable": lambda agent: agent_grant_set(agent=agent, read_types=["episode"]),
    "grant.sensitivity_above_max": lambda agent: agent_grant_set(
        agent=agent, max_sensitivity="public"
    ),
}


@pytest.mark.parametrize("code", list(_CHANGES))
def test_an_agent_changed_between_two_chunks_fails_the_import(tenant, tmp_path, monkeypatch, code):
    """docs/api.md: a line in use naming an agent that is deactivated, or whose grant does
    not read its type or sensitivity, is an error line, and nothing is imported if any line
    is wrong. The import read the agents once, as it started: one deactivated, or its grant
    narrowed, while a large file was stored (minutes) still owned the lines after that
    moment, private memories given to no agent (stop 70's review). The first line after the
    change is told with the error line an import started then gives, and the import fails,
    all or nothing: the records stored before it are rolled back with the rest (stop 70's
    review made it commit them and leave the later lines out; the lead's decision)."""
    agent = AgentFactory(tenant=tenant, name="late")
    path = _one_chunk_then_the_agents_lines(tenant, tmp_path, "late")
    _after_the_first_chunk(monkeypatch, lambda: _CHANGES[code](agent))
    err = StringIO()
    with pytest.raises(CommandError) as failed:
        call_command("import_memories", str(path), stdout=StringIO(), stderr=err)
    first = import_module.CHUNK + 1
    assert str(failed.value) == (
        f"{path} changed while it was imported, or an agent its lines name did (deactivated, "
        f"renamed, or its grant narrowed): line {first} is no longer valid (above); nothing "
        "imported. Run the import again once the lines are fixed: it names every wrong line "
        "before it imports any."
    )
    lines = err.getvalue().splitlines()
    assert f"line {first}: agent: {_refusal(code)}" in lines
    assert not [line for line in lines if line.startswith(f"line {first + 1}:")]
    # Nothing stays stored, the chunk stored before the change neither.
    assert not Memory.objects.exists()
    assert not Subject.objects.filter(tenant=tenant).exists()


def test_an_import_waiting_for_another_names_the_one_it_waits_for(tenant, tmp_path, monkeypatch):
    """An import waiting for another said only that it waited "for another import" (stop
    68's audit of the commands): which one, since when, an operator could not tell from it,
    a stuck session and a large file alike (stop 70's review). It names the session holding
    the lock as PostgreSQL tells it: its backend's pid, its application_name, which a
    running import sets to its file's name (never its folders), its role and client, and
    since when its transaction, in which it took the lock, is open."""
    folder = tmp_path / "private-folder"
    folder.mkdir()
    first_path, second_path = folder / "first.jsonl", tmp_path / "second.jsonl"
    first_path.write_text(record(tenant))
    second_path.write_text(record(tenant, subject="user-10"))
    stored, go = threading.Event(), threading.Event()
    holder = {}
    real_store_many = import_module.memory_store_many

    def store_then_hold(**kwargs):
        rows = real_store_many(**kwargs)
        if threading.current_thread().name == "first":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                holder["pid"] = cursor.fetchone()[0]
            stored.set()  # it holds the import lock until it commits
            assert go.wait(60)
        return rows

    monkeypatch.setattr(import_module, "memory_store_many", store_then_hold)
    first = in_thread(
        lambda: call_command(
            "import_memories", str(first_path), stdout=StringIO(), stderr=StringIO()
        ),
        name="first",
        released=[stored],
    )
    err = StringIO()
    try:
        assert stored.wait(60)
        second = _import_on_a_thread(second_path, err)
        _until_it_waits_or_ends(second)
        said_while_waiting = err.getvalue()
        assert second.is_alive(), f"it did not wait for the other import: {err.getvalue()}"
    finally:
        go.set()
        first.outcome(60)
    second.outcome(60)
    assert re.search(
        rf"^the import lock is held by PostgreSQL backend pid {holder['pid']} "
        r"\(application_name 'memledger import_memories first\.jsonl', role [^,]+, "
        r"client [^)]+\), its transaction open since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC "
        r"\(\d+ s\)$",
        said_while_waiting,
        re.MULTILINE,
    ), said_while_waiting
    assert "private-folder" not in said_while_waiting
    assert Memory.objects.filter(tenant=tenant).count() == 2


def _changed_while_validated(monkeypatch, change):
    """Run ``change`` from another thread as the file's first read validates its line CHUNK,
    the last of the first chunk: the lines after it are read with their agents afterwards."""
    real_validate = import_module.Command._validate_line
    calls = []

    def change_then_validate(command, number, data, recent):
        if number == import_module.CHUNK:
            calls.append(number)
            if len(calls) == 1:  # its first read, the agent's later lines not read yet
                in_thread(change, name="administrator").outcome(30)
        return real_validate(command, number, data, recent)

    monkeypatch.setattr(import_module.Command, "_validate_line", change_then_validate)


@pytest.mark.parametrize("code", list(_CHANGES))
def test_an_agent_changed_while_the_file_is_validated_fails_the_import(
    tenant, tmp_path, monkeypatch, code
):
    """An agent deactivated, or its grant narrowed, while the file is validated (its first
    read, minutes for a large file) was judged as it stood when the import started: its
    later lines passed (stop 70's review). They are the error lines an import started then
    gives, and nothing of the file is imported, as for any wrong line."""
    agent = AgentFactory(tenant=tenant, name="late")
    path = _one_chunk_then_the_agents_lines(tenant, tmp_path, "late")
    _changed_while_validated(monkeypatch, lambda: _CHANGES[code](agent))
    err = StringIO()
    with pytest.raises(CommandError, match=r"^2 error\(s\) in .*; nothing imported\.$"):
        call_command("import_memories", str(path), stdout=StringIO(), stderr=err)
    first, second = import_module.CHUNK + 1, import_module.CHUNK + 2
    assert err.getvalue().splitlines() == [
        f"line {first}: agent: {_refusal(code)}",
        f"line {second}: agent: {_refusal(code)}",
    ]
    assert not Memory.objects.exists()


def _in_platform_mode(change):
    """Return ``change`` run in platform mode, as the admin's (or a shell's) query runs."""

    def run():
        with platform_scope("an administrator's change"):
            change()

    return run


# What an administrator (or a shell) may do to an agent besides its grant: renamed (the admin's
# form), its row deleted (a cascade), moved to another tenant (a query: the admin keeps it in
# its tenant). An import started after any of them finds no agent of that name in the tenant.
_GONE = {
    "renamed": lambda agent: Agent.objects.filter(pk=agent.pk).update(name="later"),
    "deleted": lambda agent: Agent.objects.filter(pk=agent.pk).delete(),
    "moved": lambda agent: Agent.objects.filter(pk=agent.pk).update(tenant=TenantFactory()),
}


@pytest.mark.parametrize("change", list(_GONE))
def test_an_agent_gone_from_its_name_while_the_file_is_validated_fails_the_import(
    tenant, tmp_path, monkeypatch, change
):
    """The agents were read again by id (stop 70's review): one renamed, moved to another
    tenant or deleted while the file was validated kept the lines naming it, judged against
    the row by that id whatever its name and tenant now (a deleted one as it stood before),
    where an import started then finds no agent of that name in the tenant. Renamed or
    moved, its lines were stored private to it, in another tenant for a moved one; deleted,
    the commit failed on the row gone, a traceback. They are read again by tenant and name:
    the lines after the change are ``unknown_agent`` error lines, nothing imported."""
    agent = AgentFactory(tenant=tenant, name="late")
    path = _one_chunk_then_the_agents_lines(tenant, tmp_path, "late")
    _changed_while_validated(monkeypatch, _in_platform_mode(lambda: _GONE[change](agent)))
    err = StringIO()
    with pytest.raises(CommandError, match=r"^2 error\(s\) in .*; nothing imported\.$"):
        call_command("import_memories", str(path), stdout=StringIO(), stderr=err)
    first, second = import_module.CHUNK + 1, import_module.CHUNK + 2
    unknown = "agent: No agent of this name in the tenant. (unknown_agent)"
    assert err.getvalue().splitlines() == [f"line {first}: {unknown}", f"line {second}: {unknown}"]
    assert not Memory.objects.exists()


@pytest.mark.parametrize("change", ["renamed", "moved"])
def test_an_agent_gone_from_its_name_while_the_file_is_stored_fails_the_import(
    tenant, tmp_path, monkeypatch, change
):
    """Renamed, or moved to another tenant, while the file was stored, an agent still owned
    the later lines naming it (read again by id), and they were stored private to it, in
    another tenant for a moved one (stop 70's review): an import started then finds no agent
    of that name in the tenant. The first of them fails the import, nothing imported."""
    agent = AgentFactory(tenant=tenant, name="late")
    path = _one_chunk_then_the_agents_lines(tenant, tmp_path, "late")
    _after_the_first_chunk(monkeypatch, _in_platform_mode(lambda: _GONE[change](agent)))
    err = StringIO()
    first = import_module.CHUNK + 1
    with pytest.raises(CommandError, match=rf"line {first} is no longer valid \(above\); noth"):
        call_command("import_memories", str(path), stdout=StringIO(), stderr=err)
    unknown = "agent: No agent of this name in the tenant. (unknown_agent)"
    assert f"line {first}: {unknown}" in err.getvalue().splitlines()
    assert not Memory.objects.exists()


def test_an_import_reads_the_agents_once_a_chunk_those_of_its_tenants(tenant, tmp_path):
    """Every agent a line had named was read again at every later chunk, by its id in one
    ``IN`` list, to the file's end (a file naming the agents of 10,000 tenants read them all
    every 256 lines), and each on its own the first time: a query a line in a file of many
    tenants' agents (stop 70's review). The agents are read once a chunk, before its lines
    are validated: those the chunk names, by tenant and name, one query."""
    others = [AgentFactory(name="writer") for _ in range(20)]
    AgentFactory(tenant=tenant, name="own")
    lines = [
        record(
            other.tenant,
            agent="writer",
            subject=f"user-{n}",
            content=f"User prefers option {n}.",
            source={"type": "user_input", "conversation_id": "c", "message_id": str(n)},
        )
        for n, other in enumerate(others)
    ] + [
        record(
            tenant,
            agent="own",
            subject=f"user-{n}",
            content=f"User prefers option {n}.",
            source={"type": "user_input", "conversation_id": "c", "message_id": str(n)},
        )
        for n in range(len(others), 8 * import_module.CHUNK)
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with CaptureQueriesContext(connection) as queries:
        call_command("import_memories", str(path), "--dry-run", "--no-screen", stdout=StringIO())
    reads = [q["sql"] for q in queries if 'FROM "memory_core_agent"' in q["sql"]]
    assert len(reads) == 8, reads
    # The first chunk names 21 tenants, each later one the tenant alone.
    assert [read.count("::uuid") for read in reads] == [21] + [1] * 7, reads


def _application_name() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW application_name")
        return cursor.fetchone()[0]


def test_an_import_names_its_session_for_its_transaction_only(tenant, tmp_path):
    """The application_name an import gives its session (its file's name, which a waiting
    import names) is its transaction's alone (``set_config(..., true)``): once it commits,
    or fails, the connection is named as before, in a long-lived process that runs the
    command (``call_command``) as in a test."""
    named = _application_name()
    path = tmp_path / "in.jsonl"
    path.write_text(record(tenant))
    call_command("import_memories", str(path), stdout=StringIO(), stderr=StringIO())
    assert _application_name() == named
    path.write_text(record(tenant, subject="user-10"))
    holding, release = threading.Event(), threading.Event()
    holder = in_thread(lambda: _hold_the_import_lock(holding, release), released=[holding])
    assert holding.wait(30)
    try:
        with pytest.raises(CommandError, match="--lock-wait"):  # on this connection
            call_command("import_memories", str(path), "--lock-wait", "0", stderr=StringIO())
    finally:
        release.set()
        holder.outcome(30)
    assert _application_name() == named
