"""The rows a deletion bounds in time take their ``created_at`` from the database's clock.

A whole subject's deletion takes the traces and exports made before its first run and the
refused writes and review items made before its request; those moments were the worker's and
the web host's ``timezone.now()``, and each row's the clock of the host that made it, so a
worker seconds behind kept a trace or an export made just before "delete everything" (stop
64's audit of deletion, fixed at stop 65). Both sides read the database's clock now
(``memory_core.clock``). ``clock_timestamp()``, read per row, not ``Now()``: a batch's
decisions, saved by one statement, would all have had its start, and the split-write rule
orders them by it. A column default only (``SET DEFAULT``): no row is rewritten.
"""

from django.db import migrations, models

from memory_core.clock import ClockTimestamp


def _on_the_database_clock(model_name: str, **options) -> migrations.AlterField:
    return migrations.AlterField(
        model_name=model_name,
        name="created_at",
        field=models.DateTimeField(db_default=ClockTimestamp(), **options),
    )


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0053_trace_unknown_user")]

    operations = [
        _on_the_database_clock("admissiondecision", db_index=True),
        _on_the_database_clock("export"),
        _on_the_database_clock("retrievaltrace", db_index=True),
        _on_the_database_clock("reviewitem"),
    ]
