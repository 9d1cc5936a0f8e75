"""Start, stop or locate the embedded PostgreSQL server."""

from django.conf import settings
from django.core.management.base import BaseCommand

from config import embedded


class Command(BaseCommand):
    help = "Manage the embedded PostgreSQL server (used when DATABASE_URL is unset)."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["status", "stop"])

    def handle(self, *args, action, **options):
        if action == "stop":
            # Loading the settings started a server that was not running: stopped again, it
            # was not running. `make db-stop` stops it without loading them.
            stopped = embedded.stop_embedded_database(settings.BASE_DIR)
            self.stdout.write("stopped" if stopped and not embedded.started_here else "not running")
            return
        db = settings.DATABASES["default"]
        self.stdout.write(
            f"database {db['NAME']} on {db['HOST'] or 'localhost'}:{db['PORT'] or '-'}"
        )
