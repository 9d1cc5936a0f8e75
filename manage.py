#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    """Run administrative tasks."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    if sys.argv[1:] in (["embedded_db", "stop"], ["embedded_db", "status"]) and not (
        os.environ.get("DATABASE_URL")
    ):
        # Loading the settings starts the embedded server (and makes a cluster in an empty
        # folder) only for this to stop it, or to report it running: without them, as `make
        # db-stop` does.
        from config.embedded import main as embedded_main

        embedded_main(sys.argv[2:])
        return
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
