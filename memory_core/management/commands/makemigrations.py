"""``makemigrations`` as the owner role (its history check reads ``django_migrations``).

The application role is granted only on databases migrated with row-level security; the
schema commands always connect as the owner (``settings.MEMLEDGER_DB_OWNER``).
"""

from django.core.management.commands.makemigrations import Command as DjangoMakemigrations

from memory_core.rls import owner_connection


class Command(DjangoMakemigrations):
    def handle(self, *args, **options):
        with owner_connection():
            return super().handle(*args, **options)
