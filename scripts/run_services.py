"""Run the web server, a Celery worker and Celery beat together; Ctrl-C stops all three.

Used by `make run`. Each child gets its own process group, so one Ctrl-C reaches this
supervisor only, which then stops the children in order and waits for them. So does a hang-up
(the terminal closed, an SSH session lost) or SIGQUIT: the children, in sessions of their own,
outlived the supervisor and kept the port for the next `make run`.
"""

import os
import signal
import subprocess
import sys
import time

PYTHON = sys.executable
STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def main() -> int:
    # The demo's settings for all three (Celery's own default is production's, as gunicorn's).
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    print(banner(host, port), flush=True)
    celery = [PYTHON, "-m", "celery", "-A", "config.celery_app"]
    return supervise(
        {
            "worker": [*celery, "worker", "--loglevel=INFO", "--concurrency=2"],
            "beat": [*celery, "beat", "--loglevel=INFO"],
            "web": [PYTHON, "manage.py", "runserver", listen_address(host, port), "--noreload"],
        }
    )


def listen_address(host: str, port: str) -> str:
    """Return runserver's ``addr:port``, an IPv6 address in brackets (``HOST=::`` gave
    ":::8000", which runserver refused)."""
    bare = host.strip("[]")
    return f"[{bare}]:{port}" if ":" in bare else f"{bare}:{port}"


def banner(host: str, port: str) -> str:
    """Return what ``make run`` says as it starts: the pages' addresses, with a host a browser
    can open (``HOST=0.0.0.0`` or ``::`` listens everywhere, and its address opens nothing)."""
    bare = host.strip("[]")
    shown = "127.0.0.1" if bare in ("0.0.0.0", "::") else bare  # noqa: S104 - compared only
    base = f"http://{f'[{shown}]' if ':' in shown else shown}:{port}"
    lines = [
        "",
        "memledger is starting:",
        f"  portal   {base}/portal/   (login at /accounts/login/)",
        f"  admin    {base}/admin/",
        f"  API docs {base}/api/docs/   (schema at /api/schema/)",
        "  Ctrl-C stops the web server, the Celery worker and beat.",
    ]
    if shown != bare:
        lines.append("  From other machines: use this host's name, listed in DJANGO_ALLOWED_HOSTS.")
    return "\n".join([*lines, ""])


def supervise(commands: dict[str, list[str]]) -> int:
    """Start ``commands`` (name: argv), each in a session of its own; when one exits or this
    process is told to stop, stop them all and return the exit code (0 when told to stop)."""
    stopping = False

    def stop(*_):
        nonlocal stopping
        stopping = True

    for signum in STOPPING_SIGNALS:
        signal.signal(signum, stop)
    children: dict[str, subprocess.Popen] = {}
    exit_code = 0
    try:
        for name, command in commands.items():
            children[name] = subprocess.Popen(command, start_new_session=True)  # noqa: S603
            print(f"started {name} (pid {children[name].pid})", flush=True)
        while not stopping:
            for name, child in children.items():
                if child.poll() is not None:
                    print(f"{name} exited with {child.returncode}; stopping the rest.", flush=True)
                    exit_code = child.returncode or 1
                    stopping = True
            time.sleep(0.5)
    finally:  # whatever ended the loop: no child outlives the supervisor
        _stop_all(children.values())
    print("memledger stopped.", flush=True)
    return exit_code


def _stop_all(children) -> None:
    """Send each running child SIGTERM, then wait up to 20 s for all, killing the late."""
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 20
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()


if __name__ == "__main__":
    sys.exit(main())
