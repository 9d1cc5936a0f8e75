"""Start, stop or locate the embedded PostgreSQL server."""

from django.conf import settings
from django.core.management.base import BaseCommand

from config.embedded import stop_embedded_database


class Command(BaseCommand):
    help = "Manage the embedded PostgreSQL server (used when DATABASE_URL is unset)."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["status", "stop"])

    def handle(self, *args, action, **options):
        if action == "stop":
            stopped = stop_embedded_database(settings.BASE_DIR)
            self.stdout.write("stopped" if stopped else "not running")
            return
        db = settings.DATABASES["default"]
        self.stdout.write(
            f"database {db['NAME']} on {db['HOST'] or 'localhost'}:{db['PORT'] or '-'}"
        )
