"""The export page never serves a file outside the export folder (stop 69).

Sent again, the form gave back the file of the export its login made seconds before
(``ExportView.sent_again``), by ``export_dir() / export.path``: a row naming a link out of
the folder served the file the link named (``/etc/passwd``, another tenant's export). Such a
path is refused (``exports.export_file``): the file is not served, and a new export is made,
as when the file is gone. Rows naming ``..`` or an absolute path take the same refusal
(tests/deletion/test_export_path_outside_stop69.py); the table refuses them since 0057.
"""

import pytest
from django.urls import reverse

from memory_core.exports import export_dir
from memory_core.models import Export
from tests.portal.test_end_user import opened_of

pytestmark = pytest.mark.django_db


def test_an_export_sent_again_never_serves_a_file_a_link_leads_out_to(
    alice_client, alice_memory, settings, tmp_path
):
    settings.MEMLEDGER_EXPORT_DIR = str(tmp_path / "exports")
    outside = tmp_path / "outside.json"
    outside.write_text('{"secret": "not yours"}')
    url = reverse("portal:export")
    form = {"shown_deletions": "", "opened": opened_of(alice_client.get(url).content.decode())}
    first = alice_client.post(url, form)
    export = Export.objects.get()
    link = export_dir() / export.path.rsplit("/", 1)[0] / "link.json"
    link.symlink_to(outside)
    Export.objects.filter(pk=export.pk).update(path=str(link.relative_to(export_dir())))

    again = alice_client.post(url, form)

    assert again.status_code == 200 and first.status_code == 200
    assert b"not yours" not in again.getvalue()
    assert again["Content-Disposition"].startswith("attachment;")
    assert Export.objects.count() == 2  # a new export instead
    assert outside.read_text() == '{"secret": "not yours"}'
