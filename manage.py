#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    """Run administrative tasks."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    action = _embedded_action(sys.argv)
    if action and not os.environ.get("DATABASE_URL", "").strip():
        # Loading the settings starts the embedded server (and makes a cluster in an empty
        # folder) only for this to stop it, or to report it running: without them, as `make
        # db-stop` does.
        from config.embedded import main as embedded_main

        embedded_main([action])
        return
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


def _embedded_action(argv: list[str]) -> str | None:
    """Return the action of `manage.py embedded_db stop|status` read by the command's own
    parser, so with Django's standard options before or after it (``-v 1``, ``--traceback``,
    ``--settings=...``); None for any other command line, which Django then reports. Only
    exactly `embedded_db status` was recognised until stop 59's audit of the commands: with
    an option the settings loaded and started the server status was to report."""
    if argv[1:2] != ["embedded_db"]:
        return None
    from django.core.management import CommandError

    from memory_core.management.commands.embedded_db import Command

    try:
        return Command().create_parser(argv[0], argv[1]).parse_args(argv[2:]).action
    except CommandError:
        return None


if __name__ == "__main__":
    main()
