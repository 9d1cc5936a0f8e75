"""``migrate`` as the owner role: the application role may not change the schema.

Web and worker processes connect as the application role (no DDL, bound by row-level
security). Schema changes need the owner, so this replaces Django's ``migrate`` with the same
command run over an owner connection (``settings.MEMLEDGER_DB_OWNER``), in platform mode so
data migrations see every tenant's rows.
"""

from django.core.management.commands.migrate import Command as DjangoMigrateCommand
from django.db import connections

from memory_core.rls import PLATFORM_SETTING, owner_connection


class Command(DjangoMigrateCommand):
    help = DjangoMigrateCommand.help + " Runs as the database owner role (memledger)."

    def handle(self, *args, **options):
        with owner_connection(options["database"]):
            conn = connections[options["database"]]
            conn.ensure_connection()
            with conn.cursor() as cursor:
                cursor.execute("SELECT set_config(%s, 'on', false)", [PLATFORM_SETTING])
            return super().handle(*args, **options)
