"""Checks several commands share for their options (a leading underscore: not a command).

Each refuses, before any work is done, what would otherwise end in a traceback or be
ignored without a word.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from django.core.management.base import CommandError
from django.utils import timezone

from memory_core.admission.candidate import bad_text
from memory_core.json_types import json_loads


def check_texts(arguments: dict[str, str | None]) -> None:
    """Refuse an argument (named by its key: ``slug``, ``--agent``) holding a NUL or a byte
    that is not UTF-8, before any query: Python hands such a byte of the command line (an
    operator's Latin-1 terminal typing "café") to the command as a lone surrogate, which
    PostgreSQL cannot take and psycopg refuses with a UnicodeEncodeError traceback."""
    for name, value in arguments.items():
        if value is not None and bad_text(value):
            raise CommandError(
                f"{name} {ascii(value)} must be text without NUL characters or undecodable "
                "bytes (is the terminal's encoding UTF-8?). Nothing was done."
            )


def check_run_or_wait(*, run: bool, wait: float) -> None:
    """Refuse ``--run`` with ``--wait``: the first runs the steps here, the second waits for a
    worker to run them, and one of them was silently dropped."""
    if run and wait:
        raise CommandError(
            "--run and --wait exclude each other: --run runs the steps in this process, "
            "--wait waits for a worker to run them. Give one."
        )


def path_kind(path: Path, *, option: str) -> str:
    """Return what is at ``path``: "file", "folder", "other" or "" (nothing). A path the file
    system cannot look up (a name over 255 bytes, ENAMETOOLONG) is a CommandError naming
    ``option``: pathlib raises the OSError, a traceback (stop 51's fuzzing)."""
    try:
        if path.is_file():
            return "file"
        if path.is_dir():
            return "folder"
        return "other" if path.exists() else ""
    except OSError as exc:
        raise CommandError(f"{option} {path}: {exc.strerror or exc}. Nothing was done.") from exc


def check_output_path(path: str | None, *, option: str = "--json") -> Path | None:
    """Return ``path`` as a Path once its folder exists and can be written, before a long run
    makes what would be written there."""
    if not path:
        return None
    target = Path(path)
    kind = path_kind(target, option=option)
    if kind == "folder":
        raise CommandError(f"{option} {path} is a folder: give the file to write.")
    folder = target.parent if str(target.parent) else Path(".")
    if path_kind(folder, option=option) != "folder":
        raise CommandError(f"{option} {path}: the folder {folder} does not exist.")
    if not os.access(folder, os.W_OK) or (kind and not os.access(target, os.W_OK)):
        raise CommandError(f"{option} {path} cannot be written (permissions).")
    return target


def strict_json(result) -> str:
    """Return ``result`` as JSON text (indented) that strict readers take: a NaN or an
    Infinity in it is a CommandError, where ``json.dumps`` writes a bare ``NaN`` that
    JSON.parse, jq and RFC 8259 refuse."""
    try:
        return json.dumps(result, indent=2, allow_nan=False)
    except ValueError as exc:
        raise CommandError(
            f"The result holds a number JSON cannot hold (NaN or Infinity): {exc}. "
            "Nothing was written."
        ) from exc


def write_output(command, target: Path | None, text: str, *, option: str = "--json") -> None:
    """Write ``text`` to ``target``; a failure (a full disk, the folder removed meanwhile) is
    a CommandError, the result having been printed already."""
    if target is None:
        return
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CommandError(
            f"Could not write {option} {target}: {exc.strerror or exc}. The result is above."
        ) from exc
    command.stderr.write(f"wrote {target}")


def read_text(path: Path, *, what: str) -> str:
    """Return the UTF-8 text of ``path``, without the byte order mark some editors put first
    (RFC 8259 lets a reader ignore it); a missing, unreadable or non-UTF-8 file is a
    CommandError naming it."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except IsADirectoryError as exc:
        raise CommandError(f"{path} is a folder: give the {what} file.") from exc
    except FileNotFoundError as exc:
        raise CommandError(f"No {what} file at {path}.") from exc
    except OSError as exc:
        raise CommandError(f"Cannot read the {what} {path}: {exc.strerror or exc}.") from exc
    except UnicodeDecodeError as exc:
        raise CommandError(
            f"The {what} {path} is not UTF-8 text (byte {exc.object[exc.start]:#04x} at "
            f"offset {exc.start}): save it as UTF-8."
        ) from exc


def read_json(path: Path, *, what: str):
    """Return the JSON document of ``path`` (``read_text``), read as the API reads a body
    (``json_loads(as_api=True)``, as ``import_memories`` reads a line); JSON it cannot read
    is a CommandError naming the file. An object naming a key twice is such JSON: which
    value wins depends on the parser, and the evaluations read the last one (a memory
    written ``"status": "revoked", "status": "active"`` was loaded active and scored as
    required, stop 63's audit of exports); so is a number beyond a float's range."""
    try:
        return json_loads(read_text(path, what=what), as_api=True)
    except json.JSONDecodeError as exc:
        raise CommandError(f"{path} is not JSON: {exc}.") from exc


def parse_moment(value: str, *, option: str) -> datetime:
    """Return the ISO timestamp ``value`` of ``option`` (UTC when it names no zone)."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise CommandError(f"{option} must be an ISO timestamp: {exc}") from exc
    return timezone.make_aware(moment, UTC) if timezone.is_naive(moment) else moment
