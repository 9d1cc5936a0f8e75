"""Run ``manage.py`` or a snippet in a child process, as an operator or a second server would."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_manage(
    *args: str,
    settings: str = "config.settings.test",
    timeout: int = 120,
    unset: tuple[str, ...] = (),
    **env: str,
) -> subprocess.CompletedProcess:
    """Run ``manage.py *args`` with ``settings``, this environment plus ``env``, minus
    ``unset``; return the finished process (text output captured, never raises on exit)."""
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": settings, **env}
    for name in unset:
        environment.pop(name, None)
    return subprocess.run(  # noqa: S603 - fixed interpreter and script, test-chosen arguments
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_python_json(
    code: str, *, settings: str = "config.settings.test", stdin: str = "", **env: str
):
    """Run ``code`` in a fresh interpreter with ``settings`` and this environment plus ``env``;
    return the JSON its last line of output prints (raises if the process fails)."""
    probe = subprocess.run(  # noqa: S603 - this interpreter, a test's fixed snippet
        [sys.executable, "-c", code],
        input=stdin,
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": settings, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(probe.stdout.strip().splitlines()[-1])


def closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def shell_without_database(code: str, **env: str) -> subprocess.CompletedProcess:
    """Run ``code`` in ``manage.py shell`` with the database unreachable (a closed port)."""
    return run_manage(
        "shell",
        "-c",
        code,
        DATABASE_URL=f"postgres://memledger@127.0.0.1:{closed_port()}/memledger",
        DB_CONNECT_TIMEOUT="2",
        **env,
    )
