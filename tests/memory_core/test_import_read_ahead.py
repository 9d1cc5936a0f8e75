"""import_memories reads the agents its lines name once a chunk of lines, read ahead of their
validation (``_records``, ``_agents_read``; stop 70's review): what the read-ahead holds, the
lines' numbers and order across it, and the agents it reads."""

import io
import tracemalloc
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_core.management.commands import import_memories as import_module
from tests.factories import AgentFactory
from tests.memory_core.admission.test_commands import record

pytestmark = pytest.mark.django_db

# Each shape is past the read-ahead's cap: 64 lines of a 1,000,000-character content (an
# error), and 256 lines of 40,000 characters each of an array of empty objects (an unknown
# field, an error), which Python holds in ~25 times its characters once parsed.
_SHAPES = {
    "long_contents": lambda tenant: [
        record(tenant, content="x" * 1_000_000, memory_key=f"k{n}") for n in range(64)
    ],
    "parsed_larger_than_read": lambda tenant: [
        record(tenant, memory_key=f"k{n}", pieces=[{}] * 10_000) for n in range(256)
    ],
}


@pytest.mark.parametrize("shape", list(_SHAPES))
def test_the_read_ahead_holds_no_more_than_its_cap_of_characters(tenant, tmp_path, shape):
    """The lines read ahead are at most READ_AHEAD_CHARS characters (and the line past them),
    fewer than CHUNK lines when they are long, so memory holds a bounded part of a file of
    long lines. The read-ahead held each line parsed as well as its text, and a parsed line is
    many times its characters (an array of empty objects ~25 times): 256 lines of 40,000
    characters, a 10 MB file, held ~150 MB where a line at a time held 1 MB (stop 70's
    review of the read-ahead). It holds the lines' text; each is parsed as it is validated."""
    lines = _SHAPES[shape](tenant)
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > import_module.READ_AHEAD_CHARS
    err = StringIO()
    tracemalloc.start()
    try:
        with pytest.raises(CommandError, match=rf"^{len(lines)} error\(s\) in "):
            call_command("import_memories", str(path), "--dry-run", stdout=StringIO(), stderr=err)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * import_module.READ_AHEAD_CHARS, f"{peak / 1e6:.1f} MB"
    # Every line told, by its own number, in the file's order.
    told = [int(line.split(":")[0].removeprefix("line ")) for line in err.getvalue().splitlines()]
    assert told == list(range(1, len(lines) + 1))


def test_the_lines_keep_their_numbers_and_order_across_the_read_ahead(tenant, tmp_path):
    """A chunk of lines is read ahead of its validation: an error is still told on the line
    it is on, in the file's order, whatever the chunk, a blank line, a byte order mark, CRLF
    ends and a last line without an end counted as before."""
    lines = [
        record(
            tenant,
            subject=f"user-{n}",
            memory_key=f"style.k{n}",
            content=f"User prefers option {n}.",
            source={"type": "user_input", "conversation_id": "c", "message_id": str(n)},
        )
        for n in range(600)
    ]
    lines[9] = ""  # line 10: blank, counted, not told
    for number in (5, 256, 257, 300, 513, 600):
        lines[number - 1] = "{not json"
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode())
    err = StringIO()
    with pytest.raises(CommandError, match=r"^6 error\(s\) in "):
        call_command("import_memories", str(path), "--no-screen", stdout=StringIO(), stderr=err)
    assert [line.split(":")[0] for line in err.getvalue().splitlines()] == [
        f"line {number}" for number in (5, 256, 257, 300, 513, 600)
    ]


def test_an_import_reads_only_the_agents_its_lines_name(tenant, tmp_path):
    """The agents were read once a chunk, every agent of each tenant the chunk names: for a
    tenant of 5,000 agents, 5,000 rows every 256 lines on each read of the file, a 10,000-line
    file's validation 4 to 5 s instead of 0.7 s (stop 70's review of the read-ahead). A chunk
    reads the agents its lines name, by tenant and name, and none when they name none."""
    AgentFactory.create_batch(300, tenant=tenant)
    AgentFactory(tenant=tenant, name="writer")
    lines = [
        record(
            tenant,
            agent="writer" if n < import_module.CHUNK else None,
            subject=f"user-{n}",
            memory_key=f"style.k{n}",
            content=f"User prefers option {n}.",
            source={"type": "user_input", "conversation_id": "c", "message_id": str(n)},
        )
        for n in range(import_module.CHUNK + 10)
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = StringIO()
    with CaptureQueriesContext(connection) as queries:
        call_command("import_memories", str(path), "--dry-run", "--no-screen", stdout=out)
    assert out.getvalue() == f"{len(lines)} record(s) valid; dry run, nothing imported.\n"
    reads = [q["sql"] for q in queries if 'FROM "memory_core_agent"' in q["sql"]]
    # The first chunk names "writer", the second no agent.
    assert len(reads) == 1, reads
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT name FROM ({reads[0]}) AS read")  # noqa: S608 (our own query)
        assert [name for (name,) in cursor.fetchall()] == ["writer"]


@pytest.mark.parametrize("name", ["late\x00r", "late\ud800", " " * 40 + "x" * 200_000])
def test_a_name_no_agent_can_bear_is_an_unknown_agent(tenant, tmp_path, name):
    """A line's agent is looked up by its name in the database now (``_agents_read``): a name
    PostgreSQL cannot hold (a NUL, a lone surrogate from a JSON escape) or longer than an
    agent's is no agent's, the line's error line as before, not a traceback of the query."""
    AgentFactory(tenant=tenant, name="late")
    path = tmp_path / "in.jsonl"
    path.write_text(record(tenant, agent=name) + "\n" + record(tenant, agent="late") + "\n")
    err = StringIO()
    with pytest.raises(CommandError, match=r"^1 error\(s\) in "):
        call_command("import_memories", str(path), "--no-screen", stdout=StringIO(), stderr=err)
    assert err.getvalue().splitlines() == [
        "line 1: agent: No agent of this name in the tenant. (unknown_agent)"
    ]


def test_a_line_of_megabytes_is_held_in_a_few_times_its_size(tenant, tmp_path):
    """A line is split as a text-mode read splits it (\\n, \\r\\n, \\r) through a StringIO,
    which holds 4 bytes a character: a line of 50 MB peaked at 350 MB, 7 times its size
    (stop 70's review of the read-ahead). A line holding no \\r is one line as it is: its
    bytes, its text and its parsed content, 3 times its size."""
    line = record(tenant, content="x" * 10_000_000)
    path = tmp_path / "in.jsonl"
    path.write_text(line + "\n")
    err = StringIO()
    tracemalloc.start()
    try:
        with pytest.raises(CommandError, match=r"^1 error\(s\) in "):
            call_command("import_memories", str(path), "--dry-run", stdout=StringIO(), stderr=err)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(line), f"{peak / 1e6:.1f} MB"
    assert err.getvalue().startswith("line 1: content: ")


def test_a_byte_that_is_not_utf8_past_a_chunk_is_told_after_the_lines_before_it(tenant, tmp_path):
    """The lines before a byte that is not UTF-8 are read ahead and validated first, their
    errors told in order, then the byte is named by its own line, past the first chunk."""
    lines = [
        record(
            tenant,
            subject=f"user-{n}",
            memory_key=f"style.k{n}",
            source={"type": "user_input", "conversation_id": "c", "message_id": str(n)},
        ).encode()
        for n in range(310)
    ]
    lines[4] = lines[279] = b"{not json"
    lines[299] = lines[299].replace(b"friendly", b"caf\xe9")
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    err = StringIO()
    with pytest.raises(CommandError, match=r"line 300 holds the byte 0xe9\."):
        call_command("import_memories", str(path), "--no-screen", stdout=StringIO(), stderr=err)
    assert [line.split(":")[0] for line in err.getvalue().splitlines()] == ["line 5", "line 280"]


# The characters str.splitlines ends a line at; a text-mode read (universal newlines), which
# the import counts lines as, ends one at the first three only: U+2028 and U+0085 are valid
# inside a JSON string.
_SEPARATORS = [
    "\n",
    "\r\n",
    "\r",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x85",
    "\u2028",
    "\u2029",
]


@pytest.mark.parametrize("separator", _SEPARATORS, ids=ascii)
def test_a_text_is_split_as_a_text_mode_read_splits_it(separator):
    """``_text_lines`` split a text through a StringIO, as a text-mode read splits it; a text
    without \\r became one line as it was (stop 70's review of the read-ahead), a text of two
    \\n-lines too. Each is split as before, at \\n, \\r\\n and \\r only."""
    for text in (
        f"a{separator}b\n",
        f"a{separator}b",
        f"a{separator}",
        separator,
        f"a\n{separator}b\n",
        f"a{separator}\nb",
        "",
    ):
        expected = io.StringIO(text, newline=None).readlines()  # the code until then
        assert import_module._text_lines(text) == expected, ascii(text)


@pytest.mark.parametrize("separator", _SEPARATORS, ids=ascii)
def test_a_line_is_numbered_as_a_text_mode_read_numbers_it(tenant, tmp_path, separator):
    """An error line names the line as a text-mode read counts it, as the import did before
    it split lines without a StringIO: a line holding U+2028, U+0085 or a form feed is one
    line, \\r and \\r\\n end one."""
    text = f"{{bad{separator}1\n" * 3 + f"{record(tenant)}\n{{bad{separator}2"
    path = tmp_path / "in.jsonl"
    path.write_bytes(text.encode())
    expected = [
        f"line {number}"
        for number, line in enumerate(io.StringIO(text, newline=None).readlines(), 1)
        if line.strip() and not line.startswith('{"tenant"')
    ]
    err = StringIO()
    with pytest.raises(CommandError, match=rf"^{len(expected)} error\(s\) in "):
        call_command("import_memories", str(path), "--no-screen", stdout=StringIO(), stderr=err)
    assert [line.split(":")[0] for line in err.getvalue().splitlines()] == expected


def test_a_line_is_judged_against_the_agent_read_for_it(tenant, tmp_path):
    """A chunk reads the agents its lines name, each line parsed for its tenant and agent
    (``_named_agent``) apart from its validation (``_validate_line``): each line is judged as
    the validation reads it, its name trimmed and in NFC, its tenant's slug as written, a key
    named twice or a name of another type an error of its own, never an agent not read."""
    AgentFactory(tenant=tenant, name="late")
    AgentFactory(tenant=tenant, name="early")
    AgentFactory(tenant=tenant, name="Jos\u00e9")
    lines = [
        record(tenant, agent="late"),
        record(tenant, agent="  early\t", subject="user-1"),
        record(tenant, agent="Jose\u0301", subject="user-2"),
        record(tenant, agent="LATE", subject="user-3"),
        record(tenant, agent=7, subject="user-4"),
        record(tenant, agent="late", tenant=[tenant.slug], subject="user-5"),
        record(tenant, agent="late", tenant=tenant.slug.upper(), subject="user-6"),
        record(tenant, agent="gone", subject="user-7")[:-1] + ', "agent": "late"}',
        record(tenant, agent="late", subject="user-8")[:-1],
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")
    err = StringIO()
    with pytest.raises(CommandError, match=r"^6 error\(s\) in "):
        call_command("import_memories", str(path), "--no-screen", stdout=StringIO(), stderr=err)
    assert err.getvalue().splitlines() == [
        "line 4: agent: No agent of this name in the tenant. (unknown_agent)",
        "line 5: agent: Must be an agent's name or null, not an integer. (invalid)",
        "line 6: tenant: Must be the slug of an existing tenant. (unknown_tenant)",
        "line 7: tenant: Must be the slug of an existing tenant. (unknown_tenant)",
        "line 8: invalid JSON (the key 'agent' appears twice in one object)",
        "line 9: invalid JSON (Expecting ',' delimiter)",
    ]
