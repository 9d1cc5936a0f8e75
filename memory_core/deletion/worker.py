"""A real Celery worker as a child process (the test suite's fixture and ``bench_deletion``).

The worker gets its own queue (``MEMLEDGER_CELERY_QUEUE``) and database name
(``MEMLEDGER_DB_NAME``) through the environment, on the broker of ``CELERY_BROKER_URL``. It runs
in its own process group, so stopping it (or SIGKILLing it in a fault test) takes the pool's
children with it; an ``atexit`` hook makes sure no worker outlives the process that started it.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.conf import settings


class WorkerError(RuntimeError):
    """The worker did not start (its log is in the message)."""


class WorkerProcess:
    """One ``celery -A config.celery_app worker`` subprocess on one queue."""

    def __init__(
        self,
        *,
        db_name: str,
        queue: str,
        concurrency: int = 1,
        pool: str = "prefork",
        env: dict | None = None,
        settings_module: str | None = None,
    ):
        self.db_name = db_name
        self.queue = queue
        self.concurrency = concurrency
        self.pool = pool
        self.extra_env = env or {}
        self.settings_module = settings_module or os.environ.get(
            "DJANGO_SETTINGS_MODULE", "config.settings.local"
        )
        self.process: subprocess.Popen | None = None
        handle, name = tempfile.mkstemp(prefix=f"celery-{queue}-", suffix=".log")
        os.close(handle)
        self.log_path = Path(name)

    def environment(self) -> dict:
        env = dict(os.environ)
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": self.settings_module,
                "MEMLEDGER_DB_NAME": self.db_name,
                "MEMLEDGER_CELERY_QUEUE": self.queue,
                "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.update(self.extra_env)
        return env

    def start(self, timeout: float = 90.0) -> WorkerProcess:
        """Start the worker and wait until it consumes its queue."""
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(  # noqa: S603 (our own interpreter and module)
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "config.celery_app",
                    "worker",
                    "-Q",
                    self.queue,
                    "-n",
                    f"{self.queue}@%h",
                    "--pool",
                    self.pool,
                    "--concurrency",
                    str(self.concurrency),
                    "--loglevel",
                    "INFO",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                ],
                cwd=settings.BASE_DIR,
                env=self.environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        atexit.register(self.kill)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise WorkerError(f"worker exited at start:\n{self.log()[-4000:]}")
            with open(self.log_path, "rb") as log:
                log.seek(offset)
                if b" ready." in log.read():
                    return self
            time.sleep(0.1)
        self.kill()
        raise WorkerError(f"worker not ready after {timeout}s:\n{self.log()[-4000:]}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _signal_group(self, signum: int) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        """SIGKILL the worker and its pool children at once (a crash, not a shutdown)."""
        if self.process is None:
            return
        self._signal_group(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self, timeout: float = 15.0) -> None:
        """Stop the worker (warm shutdown), killing it if it does not exit in time."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        # The pool's children too, whatever happened to the parent.
        self._signal_group(signal.SIGKILL)
        self.process.wait(timeout=30)
        atexit.unregister(self.kill)

    def purge(self) -> int:
        """Drop the messages left on this worker's queue (a unique queue nobody else reads)."""
        from celery import current_app as app  # config's, once Django has loaded

        try:
            with app.connection_for_write() as conn:
                return conn.default_channel.queue_purge(self.queue) or 0
        except Exception:  # the broker is gone: nothing left to purge there
            return 0

    def restart(self, timeout: float = 90.0) -> WorkerProcess:
        self.stop()
        return self.start(timeout=timeout)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
