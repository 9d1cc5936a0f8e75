"""The database's clock: the one every host of a deployment reads alike."""

from datetime import datetime

from django.db import connection


def database_now() -> datetime:
    """Return the database's time (``statement_timestamp()``, what ``Now()`` writes).

    A moment compared with rows other hosts write is taken here, not from this host's
    ``timezone.now()``: the web, worker and command hosts' clocks drift apart, and a worker
    seconds behind the web host kept the traces and exports a whole subject's deletion was to
    remove (stop 65's audit of deletion). The rows it is compared with are written on this
    clock too (``db_default=Now()``, migration 0054).
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement_timestamp()")
        return cursor.fetchone()[0]
