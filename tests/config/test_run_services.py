"""scripts/run_services.py (``make run``): its children never outlive it."""

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.processes import ROOT

SUPERVISE = (
    "import sys; sys.path.insert(0, 'scripts'); import run_services; "
    "sys.exit(run_services.supervise({'a': ['sleep', '60'], 'b': ['sleep', '60']}))"
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT], ids=str)
def test_a_hang_up_or_a_stop_stops_the_children_too(signum):
    """A hang-up (the terminal closed) killed the supervisor alone: the web server, worker
    and beat, each in a session of its own, kept running and kept the port (stop 48's
    audit)."""
    supervisor = subprocess.Popen(  # noqa: S603 - fixed interpreter and code
        [sys.executable, "-c", SUPERVISE], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    pids = [int(supervisor.stdout.readline().split("pid ")[1].rstrip(")\n")) for _ in "ab"]
    assert all(_alive(pid) for pid in pids)
    supervisor.send_signal(signum)
    assert supervisor.wait(timeout=30) == 0
    assert "memledger stopped." in supervisor.stdout.read()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in pids)


def _run_services():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import run_services
    finally:
        sys.path.pop(0)
    return run_services


@pytest.mark.parametrize(
    ("host", "listen", "shown"),
    [
        ("127.0.0.1", "127.0.0.1:8000", "http://127.0.0.1:8000/portal/"),
        # Listening everywhere: the address a browser can open, not 0.0.0.0 (which opened
        # nothing, stop 50's audit), and a word on DJANGO_ALLOWED_HOSTS.
        ("0.0.0.0", "0.0.0.0:8000", "http://127.0.0.1:8000/portal/"),  # noqa: S104
        # IPv6: runserver refused ":::8000".
        ("::", "[::]:8000", "http://127.0.0.1:8000/portal/"),
        ("::1", "[::1]:8000", "http://[::1]:8000/portal/"),
        ("[::1]", "[::1]:8000", "http://[::1]:8000/portal/"),
    ],
)
def test_make_run_listens_and_names_pages_a_browser_can_open(host, listen, shown):
    run_services = _run_services()
    assert run_services.listen_address(host, "8000") == listen
    text = run_services.banner(host, "8000")
    assert f"portal   {shown}" in text
    assert ("DJANGO_ALLOWED_HOSTS" in text) == (host in ("0.0.0.0", "::"))  # noqa: S104
