"""A real gunicorn on a free loopback port against the benchmark database, and a load client.

The server runs the production settings (DEBUG off) with a throwaway secret, no HTTPS
redirect and the per-key rate limit off (the benchmark would otherwise measure 429s). The
client keeps one HTTP/1.1 connection per thread and sends a bounded number of requests for a
bounded time.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    process: subprocess.Popen
    port: int
    log_path: Path

    def worker_pids(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        try:
            return [int(pid) for pid in children.read_text().split()]
        except OSError:
            return []

    def worker_rss_mb(self) -> list[float]:
        sizes = []
        for pid in self.worker_pids():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        sizes.append(round(int(line.split()[1]) / 1024, 1))
            except OSError:
                continue
        return sizes

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def start_gunicorn(
    *,
    database: str,
    workers: int,
    threads: int,
    torch_threads: int,
    log_dir: Path,
    statement_timeout_ms: int = 0,
    extra_args: tuple[str, ...] = (),
) -> Server:
    """Start gunicorn (config.wsgi) on 127.0.0.1:<free port> against ``database``, with
    ``extra_args`` after the benchmark's own flags (a deployment's, in a test)."""
    port = free_port()
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"gunicorn-{port}.log"
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
            "DJANGO_SECURE_SSL_REDIRECT": "false",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "MEMLEDGER_DB_NAME": database,
            "MEMLEDGER_RATE_LIMIT": "",
            "MEMLEDGER_WRITE_QUOTA": "",
            "DJANGO_LOG_LEVEL": "WARNING",
        }
    )
    if statement_timeout_ms > 0:  # libpq passes it to every connection the workers open
        env["PGOPTIONS"] = f"-c statement_timeout={statement_timeout_ms}"
    if torch_threads > 0:  # the embedder's setting, and what torch reads when imported
        env["MEMLEDGER_TORCH_THREADS"] = str(torch_threads)
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(torch_threads)
    worker_class = "gthread" if threads > 1 else "sync"
    command = [
        str(Path(sys.executable).with_name("gunicorn")),
        "config.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--threads",
        str(threads),
        "--worker-class",
        worker_class,
        "--timeout",
        "120",
        "--keep-alive",
        "30",
        *extra_args,
    ]
    log = open(log_path, "w")  # noqa: SIM115 - closed with the process
    process = subprocess.Popen(  # noqa: S603 - fixed argv, loopback only
        command, cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    server = Server(process, port, log_path)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited: see {log_path}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"gunicorn did not listen within 60 s: see {log_path}")


@dataclass
class LoadResult:
    latencies_ms: list[float] = field(default_factory=list)
    # The index in ``requests`` of each answered request, in the order of ``latencies_ms``.
    answered: list[int] = field(default_factory=list)
    errors: dict = field(default_factory=dict)
    seconds: float = 0.0
    sample_response: str = ""
    error_samples: dict = field(default_factory=dict)

    @property
    def rps(self) -> float:
        return round(len(self.latencies_ms) / self.seconds, 2) if self.seconds else 0.0


def run_load(
    *,
    port: int,
    requests: list[tuple[str, dict]],
    concurrency: int,
    max_seconds: float,
    path: str = "/api/v1/retrieve",
) -> LoadResult:
    """POST each (api key, body) in ``requests`` with ``concurrency`` client threads."""
    result = LoadResult()
    lock = threading.Lock()
    cursor = {"next": 0}
    deadline = time.monotonic() + max_seconds

    def worker():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while True:
            with lock:
                index = cursor["next"]
                cursor["next"] += 1
            if index >= len(requests) or time.monotonic() > deadline:
                break
            key, body = requests[index]
            payload = json.dumps(body)
            started = time.perf_counter()
            try:
                conn.request(
                    "POST",
                    path,
                    body=payload,
                    headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
                )
                response = conn.getresponse()
                data = response.read()
                status = response.status
                if response.getheader("Connection", "").lower() == "close":
                    conn.close()
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                with lock:
                    name = type(exc).__name__
                    result.errors[name] = result.errors.get(name, 0) + 1
                continue
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                if status == 200:
                    result.latencies_ms.append(elapsed)
                    result.answered.append(index)
                    if not result.sample_response:
                        result.sample_response = data[:300].decode("utf-8", "replace")
                else:
                    code = str(status)
                    result.errors[code] = result.errors.get(code, 0) + 1
                    if code not in result.error_samples:
                        result.error_samples[code] = data[:300].decode("utf-8", "replace")
        conn.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(concurrency)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.seconds = time.perf_counter() - started
    return result
