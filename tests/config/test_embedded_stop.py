"""Stopping the embedded server that is not running (``make db-stop``, ``manage.py
embedded_db stop``) says so; loading the settings had started it, and stop said "stopped"
(stop 48's operations audit); the command made a cluster in an empty folder to stop it."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.processes import ROOT, run_manage


@pytest.fixture
def pgdata():
    # A folder the server's own user can reach (pytest's tmp_path is root's alone).
    folder = Path(tempfile.mkdtemp(prefix="memledger-stop-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder / "postgres"
    subprocess.run(  # noqa: S603 - fixed interpreter and module
        [sys.executable, "-m", "config.embedded", "stop"],
        cwd=ROOT,
        env={"MEMLEDGER_EMBEDDED_PGDATA": str(folder / "postgres"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        check=False,
    )
    shutil.rmtree(folder, ignore_errors=True)


def test_make_db_stop_neither_creates_nor_starts_a_server(pgdata):
    done = subprocess.run(  # noqa: S603 - fixed interpreter and module
        [sys.executable, "-m", "config.embedded", "stop"],
        cwd=ROOT,
        env={"MEMLEDGER_EMBEDDED_PGDATA": str(pgdata), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "not running"), done.stderr
    assert not pgdata.exists()


def test_the_command_neither_creates_nor_starts_a_server(pgdata):
    done = run_manage(
        "embedded_db", "stop", settings="config.settings.local", unset=("DATABASE_URL",),
        MEMLEDGER_EMBEDDED_PGDATA=str(pgdata),
    )  # fmt: skip
    assert (done.returncode, done.stdout.strip()) == (0, "not running"), done.stderr
    assert not pgdata.exists()  # no cluster made, nor started, only to be stopped


def test_status_neither_creates_nor_starts_a_server(pgdata):
    """``manage.py embedded_db status`` loaded the settings, which made a cluster and started
    the server, then reported it as if it had been running (stop 50's audit)."""
    done = run_manage(
        "embedded_db", "status", settings="config.settings.local", unset=("DATABASE_URL",),
        MEMLEDGER_EMBEDDED_PGDATA=str(pgdata),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not pgdata.exists(), "status made a cluster"
    assert done.stdout.strip() == f"not running ({pgdata})"


@pytest.mark.parametrize(
    "argv",
    [
        ["embedded_db", "status", "-v", "1"],
        ["embedded_db", "--traceback", "status"],
        ["embedded_db", "status", "--settings=config.settings.local"],
    ],
    ids=["verbosity-after", "traceback-before", "settings"],
)
def test_status_with_a_standard_option_neither_creates_nor_starts_a_server(pgdata, argv):
    """Stop 59's audit of the commands found ``manage.py embedded_db status`` bypassing the
    settings only when its command line was exactly that: with a standard option (``-v 1``,
    ``--traceback``, ``--settings=...``) the settings loaded, made a cluster in an empty folder
    and started the server, and status printed ``database memledger on <socket>:-`` without
    saying it had not been running. It should say ``not running (...)`` and leave no cluster,
    as without the option (README)."""
    done = run_manage(
        *argv, settings="config.settings.local", unset=("DATABASE_URL",),
        MEMLEDGER_EMBEDDED_PGDATA=str(pgdata),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"not running ({pgdata})"
    assert not pgdata.exists(), "status made a cluster and started a server"
