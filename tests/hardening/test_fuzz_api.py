"""schemathesis against /api/schema/, in-process, with a real key: a bounded run.

The full run (5,000+ requests) is ``python manage.py fuzz_api --requests 5000``.
"""

import pytest

from api.fuzz import fuzz_run, plant
from config.wsgi import application

REQUESTS = 300


@pytest.mark.django_db
def test_generated_requests_no_5xx_no_schema_violation_no_cross_tenant_success():
    target, _ = plant(prefix="fuzz")
    report = fuzz_run(app=application, target=target, requests=REQUESTS)
    summary = report.as_dict()
    print("fuzz_api:", {k: v for k, v in summary.items() if k != "examples"})
    assert report.requests >= REQUESTS
    assert report.operations >= 5
    assert report.foreign_id_requests > 0
    assert report.server_errors == [], summary["examples"]
    assert report.cross_tenant == [], summary["examples"]
    assert report.schema_violations == [], summary["examples"]
