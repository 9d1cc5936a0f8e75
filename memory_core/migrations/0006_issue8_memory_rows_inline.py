"""Keep whole memory rows inline: ``toast_tuple_target`` 4080 bytes (issue 8).

After 0004 kept the embedding in the row, a typical memory row is ~2.1 kB: still just over
PostgreSQL's default toast target (~2 kB), so the toaster moved the next largest value, the
generated full-text vector, out of line. Every retrieval reads ``length(search_vector)`` for
each of the subject's eligible rows (BM25's average length) and ``@@`` for each row it scores:
measured at 1M rows on a 13k-row subject, 59k buffer reads for 13k rows, three quarters of
them TOAST index and chunk lookups. With a 4080-byte target a row is only toasted when it is
really long (content over ~2,000 of the 4,000 characters allowed), and at least two rows
fit a page.

Only the catalog changes here (instant, no rewrite): rows written from now on stay inline;
existing rows move when rewritten (``VACUUM FULL memory_core_memory`` or pg_repack, in a
maintenance window; the benchmark corpus is built after it). See docs/performance.md.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0005_issue7_row_level_security")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memory_core_memory SET (toast_tuple_target = 4080)",
            "ALTER TABLE memory_core_memory RESET (toast_tuple_target)",
        )
    ]
