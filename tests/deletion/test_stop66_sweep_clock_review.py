"""Stop 66's review of its sweep clock fix (4a3d7cfe).

The fix put the deletion sweep's cut-off of the oldest backup kept (``ledger.backups_cutoff``)
on the database's clock. ``prune_deletion_journal``, which drops the journal's lines older than
that backup, still checked its ``--before`` against the command host's clock: the two sides of
one window on two clocks.
"""

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from memory_core.clock import database_now
from memory_core.deletion.ledger import ledger_entry
from memory_core.deletion.services import deletion_request
from tests.deletion.test_stop66_sweep_clock import DAY, host_clock

pytestmark = pytest.mark.django_db


def test_a_prune_on_a_host_two_days_fast_keeps_the_lines_the_oldest_backup_needs(
    owner_principal, memories, journal
):
    """A prune refuses a ``--before`` within the 35 days backups are kept, so that no line a
    restore of the oldest backup replays is dropped. That was the command host's clock: two
    days fast, its ``date -u -d '35 days ago'`` (the daily prune of docs/operations.md) was 33
    days ago by the database's, passed, and the line of a deletion requested half a day after
    the oldest backup kept was dropped (a restore of that backup brought the memory back)."""
    operation = deletion_request(principal=owner_principal, memory_id=memories[0].id)
    entry = ledger_entry(operation)
    entry["requested_at"] = (database_now() - timedelta(days=34, hours=12)).isoformat()
    journal.write_text(json.dumps(entry, sort_keys=True) + "\n")
    kept = journal.read_bytes()

    with host_clock(2 * DAY):
        thirty_five_days_ago = (timezone.now() - timedelta(days=35)).isoformat()
        with pytest.raises(CommandError, match="within the 35 days backups are kept"):
            call_command(
                "prune_deletion_journal", "--before", thirty_five_days_ago, stdout=StringIO()
            )

    assert journal.read_bytes() == kept, "a line the oldest backup's restore needs was dropped"
