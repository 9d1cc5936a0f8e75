"""``Memory.environment``: the environment a memory holds in, empty for every one (the seed's
hard filter "tied to an environment that no longer matches the active environment";
memory_core/environments.py).

The column has a constant default, which PostgreSQL stores in the catalog: no memory is
rewritten. Its CHECK is added ``NOT VALID`` (no scan under the table's exclusive lock) and
validated in its own transaction, which only takes a lock that lets reads and writes go on.
"""

from django.db import migrations, models

import memory_core.environments

TABLE = "memory_core_memory"
CONSTRAINT = "memory_environment_valid"
CHECK = "(\"environment\"::text ~ '^([a-z0-9][a-z0-9._:/-]*)?$')"


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memory_core", "0015_memory_tenant_newest")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="environment",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                help_text="The environment it holds in (lower case); empty = every environment.",
                max_length=64,
                validators=[memory_core.environments.validate_stored_environment],
            ),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddConstraint(
                    model_name="memory",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("environment__regex", "^([a-z0-9][a-z0-9._:/-]*)?$")),
                        name=CONSTRAINT,
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f"ALTER TABLE {TABLE} ADD CONSTRAINT {CONSTRAINT} CHECK {CHECK} NOT VALID",
                    reverse_sql=f"ALTER TABLE {TABLE} DROP CONSTRAINT {CONSTRAINT}",
                ),
                migrations.RunSQL(
                    f"ALTER TABLE {TABLE} VALIDATE CONSTRAINT {CONSTRAINT}",
                    reverse_sql=migrations.RunSQL.noop,
                ),
            ],
        ),
    ]
