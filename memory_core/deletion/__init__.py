"""Deletion that reaches derived state (DESIGN.md, "Deletion reaches derived state").

- ``services``: ``deletion_request`` (one transaction: tombstones, operation, steps, rows made
  unretrievable; the task is sent on commit), ``deletion_retry``;
- ``selectors``: ``deletion_get``, ``deletion_list``, ``deletion_dead_letters``;
- ``stores``: the registry of derived stores, each with an idempotent purge and a verification;
- ``runner``: runs an operation's steps under an advisory lock and settles its status;
- ``sweep``: the beat sweep that re-drives stuck operations;
- ``retention``: expiry and per-class retention, deleting through the same operations;
- ``ledger``: the journal outside the database that ``replay_deletions`` replays after a restore;
- ``worker``: starts a real Celery worker process (tests, ``bench_deletion``).
"""
