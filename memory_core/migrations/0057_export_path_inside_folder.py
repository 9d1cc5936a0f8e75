"""An export's path is relative to MEMLEDGER_EXPORT_DIR and holds no ``..`` (stop 69).

A restored or edited row naming ``/etc/passwd`` or ``../x`` was served by the portal's
download and unlinked by the retention sweep and a deletion. ``exports.export_file`` refuses
such a path (and a link out of the folder) wherever a row's path is made a file; the table
refuses the first two as well. Only the service writes the rows, each
``<tenant id>/<subject id>/<export id>.json``, so none existing breaks the check.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0056_trace_cites_every_id_cheaper")]

    operations = [
        migrations.AddConstraint(
            model_name="export",
            constraint=models.CheckConstraint(
                condition=~models.Q(path__startswith="/") & ~models.Q(path__contains=".."),
                name="export_path_inside_folder",
            ),
        ),
    ]
