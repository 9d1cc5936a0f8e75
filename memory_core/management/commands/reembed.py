"""Re-embed stored memories after a model or precision change.

    python manage.py reembed [--batch-size 256] [--dry-run]

Every memory with content whose vector another model made (``embedding_model`` differs from
the configured embedder's name, e.g. after ``MEMLEDGER_EMBEDDING_PRECISION`` changed) or that
has no vector is embedded again with the configured model, in batches, every tenant's rows.
Safe to run while the service runs and to run again: a deletion committed meanwhile wins,
and a second run finds nothing left.
"""

from django.core.management.base import BaseCommand, CommandError

from memory_core.embeddings import get_embedder
from memory_core.rls import platform_command
from memory_core.services.memories import memories_reembed, memories_stale_for_model


class Command(BaseCommand):
    help = "Re-embed memories whose vectors another model (or precision) made."

    def add_arguments(self, parser):
        parser.add_argument("--batch-size", type=int, default=256)
        parser.add_argument(
            "--dry-run", action="store_true", help="Count what would be re-embedded."
        )

    @platform_command
    def handle(self, *args, batch_size, dry_run, **options):
        if not 1 <= batch_size <= 10_000:
            raise CommandError("--batch-size must be between 1 and 10000.")
        model_name = get_embedder().model_name
        if dry_run:
            count = memories_stale_for_model(model_name).count()
            self.stdout.write(f"{count} memories to re-embed with {model_name}; dry run.")
            return

        def progress(done: int, total: int) -> None:
            self.stderr.write(f"re-embedded {done}/{total}")

        result = memories_reembed(batch_size=batch_size, progress=progress)
        self.stdout.write(
            f"Re-embedded {result.reembedded} of {result.stale} memories with "
            f"{result.model_name}; {result.skipped} skipped (deleted meanwhile)."
        )
