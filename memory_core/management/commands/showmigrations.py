"""``showmigrations`` as the owner role, like ``migrate`` and ``makemigrations``."""

from django.core.management.commands.showmigrations import Command as DjangoShowmigrations

from memory_core.rls import owner_connection


class Command(DjangoShowmigrations):
    def handle(self, *args, **options):
        with owner_connection(options["database"]):
            return super().handle(*args, **options)
