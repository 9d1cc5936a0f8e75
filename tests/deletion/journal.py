"""The deletion journal as the journal tests read it: its lines, and a replay's report."""

import json
from io import StringIO

from django.core.management import call_command


def journal_lines(journal) -> list[dict]:
    """The journal's lines, parsed (none when the file was never written)."""
    if not journal.exists():
        return []
    return [json.loads(line) for line in journal.read_text().splitlines()]


def replay_since(since, *arguments: str) -> tuple[dict, str]:
    """Run ``replay_deletions --since since`` with ``arguments``; return its JSON report and
    its stderr."""
    out, err = StringIO(), StringIO()
    call_command(
        "replay_deletions", "--since", since.isoformat(), *arguments, stdout=out, stderr=err
    )
    return json.loads(out.getvalue()), err.getvalue()
