"""``migrate`` as the owner role: the application role may not change the schema.

Web and worker processes connect as the application role (no DDL, bound by row-level
security). Schema changes need the owner, so this replaces Django's ``migrate`` with the same
command run over an owner connection (``settings.MEMLEDGER_DB_OWNER``), in platform mode so
data migrations see every tenant's rows.

The whole command runs as the owner, its system checks included: on a fresh server the
application role does not exist until migration 0005 creates it, so a check made over the
application role's connection would stop the very migration that creates it.
"""

from django.core.management.base import CommandError
from django.core.management.commands.migrate import Command as DjangoMigrateCommand
from django.db import DEFAULT_DB_ALIAS, ProgrammingError, connections
from psycopg.errors import InsufficientPrivilege

from memory_core.rls import PLATFORM_SETTING, owner_connection


class Command(DjangoMigrateCommand):
    help = DjangoMigrateCommand.help + " Runs as the database owner role (memledger)."

    def execute(self, *args, **options):
        alias = options.get("database") or DEFAULT_DB_ALIAS
        with owner_connection(alias):
            conn = connections[alias]
            conn.ensure_connection()
            with conn.cursor() as cursor:
                cursor.execute("SELECT set_config(%s, 'on', false)", [PLATFORM_SETTING])
            try:
                return super().execute(*args, **options)
            except ProgrammingError as exc:
                if not isinstance(exc.__cause__, InsufficientPrivilege):
                    raise
                # The tables are another role's: a restore made with ``pg_restore --no-owner``
                # as a superuser gives them to the superuser. A traceback until stop 67's
                # audit of backups (docs/operations.md named the error and no way out).
                reason = str(exc).strip().splitlines()[0]
                raise CommandError(
                    f"The owner role {conn.settings_dict['USER']!r} may not change this "
                    f"database: {reason}. Its tables belong to another role, as after "
                    "`pg_restore --no-owner` run as a superuser: restore the backup again as "
                    'docs/operations.md says ("Restore procedure": as the superuser without '
                    "--no-owner, into a database the owner role owns), then migrate."
                ) from exc
