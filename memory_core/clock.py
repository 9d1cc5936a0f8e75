"""The database's clock: the one every host of a deployment reads alike."""

from datetime import datetime

from django.db import connection
from django.db.models import DateTimeField, Func


def database_now() -> datetime:
    """Return the database's time (``statement_timestamp()``, what ``Now()`` writes).

    A moment compared with rows other hosts write is taken here, not from this host's
    ``timezone.now()``: the web, worker and command hosts' clocks drift apart, and a worker
    seconds behind the web host kept the traces and exports a whole subject's deletion was to
    remove (stop 65's audit of deletion). The rows it is compared with are written on this
    clock too (``ClockTimestamp``, migration 0054).
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement_timestamp()")
        return cursor.fetchone()[0]


class ClockTimestamp(Func):
    """The database's clock read as each row is made (``clock_timestamp()``): the
    ``created_at`` default of the rows other hosts' moments are compared with.

    Not ``Now()``, the statement's start: every row of one ``bulk_create`` got the same
    moment, and the split-write rule, which joins a subject's newest writes by their
    decisions' ``created_at``, picked among a batch's writes at random (stop 65's review of
    the database's clock). PostgreSQL forms the rows of an ``INSERT ... VALUES`` one at a
    time, in the statement's order, each read of this clock after the row before was stored,
    so a batch's rows rise in its order; ``writes._record`` adds each row's place in the
    batch in microseconds, so that two rows formed within one microsecond (the clock's
    resolution) cannot tie either.
    """

    template = "clock_timestamp()"
    arity = 0
    output_field = DateTimeField()
