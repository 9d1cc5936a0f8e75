"""Run the web server, a Celery worker and Celery beat together; Ctrl-C stops all three.

Used by `make run`. Each child gets its own process group, so one Ctrl-C reaches this
supervisor only, which then stops the children in order and waits for them.
"""

import os
import signal
import subprocess
import sys
import time

PYTHON = sys.executable


def main() -> int:
    # The demo's settings for all three (Celery's own default is production's, as gunicorn's).
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    commands = {
        "worker": [
            PYTHON,
            "-m",
            "celery",
            "-A",
            "config.celery_app",
            "worker",
            "--loglevel=INFO",
            "--concurrency=2",
        ],
        "beat": [PYTHON, "-m", "celery", "-A", "config.celery_app", "beat", "--loglevel=INFO"],
        "web": [PYTHON, "manage.py", "runserver", f"{host}:{port}", "--noreload"],
    }
    children = {
        name: subprocess.Popen(command, start_new_session=True)  # noqa: S603
        for name, command in commands.items()
    }
    stopping = False

    def stop(*_):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    exit_code = 0
    while not stopping:
        for name, child in children.items():
            if child.poll() is not None:
                print(f"{name} exited with {child.returncode}; stopping the others.", flush=True)
                exit_code = child.returncode or 1
                stopping = True
        time.sleep(0.5)
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 20
    for child in children.values():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
    print("memledger stopped.", flush=True)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
