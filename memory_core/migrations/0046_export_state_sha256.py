"""An export keeps a digest of its file's records (all it holds but its own id and time), so
a form sent twice is given the first file only while an export made now would hold the same
(``exports.export_holds_now``).

Until now a change was told by its event's stamp, the clock inside its transaction: one begun
before the export page was opened and committed after the first file was read was missed, and
the second download said "active" about a memory revoked before it was asked for. Empty on
every row already there (a constant default: no row is rewritten), and such a row's file is
never given again.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0045_memory_task_closed_replaced")]

    operations = [
        migrations.AddField(
            model_name="export",
            name="state_sha256",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
    ]
