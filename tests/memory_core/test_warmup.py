"""A web process loads the model and the admission indexes as it starts, not on a request."""

import pytest
from django.test.utils import override_settings

from memory_core import warmup
from memory_core.admission import guards
from memory_core.embeddings import get_embedder
from tests.processes import run_python_json

PROBE = (
    "import json, config.wsgi\n"
    "from memory_core.admission import guards\n"
    "from memory_core.embeddings import get_embedder\n"
    "print(json.dumps({'indexes': len(guards._INDEXES),"
    " 'model': get_embedder().loaded}))\n"
)


def test_warm_up_loads_the_model_and_builds_the_guards_indexes(monkeypatch):
    monkeypatch.setattr(guards, "_INDEXES", {})
    timings = warmup.warm_up()
    assert set(timings) == {"embedder_ms", "admission_ms", "urls_ms"}
    assert get_embedder().loaded
    for rules in (guards.INJECTION_RULES, guards.CLASS_RULES):
        assert guards._INDEXES[id(rules)][0] is rules


def test_a_model_that_fails_to_load_does_not_stop_the_warm_up(monkeypatch, caplog):
    monkeypatch.setattr(guards, "_INDEXES", {})
    backend = "tests.memory_core.retrieval.test_pipeline.FailingEmbedder"
    with override_settings(MEMLEDGER_EMBEDDER={"BACKEND": backend, "DIMENSIONS": 384}):
        warmup.warm_up()
    assert "the embedding model did not load: model weights unreadable" in caplog.text
    assert len(guards._INDEXES) == 2  # the rest of the warm-up still ran


@pytest.mark.parametrize("warm", [True, False])
def test_a_web_process_warms_up_when_it_imports_the_application(warm):
    loaded = run_python_json(
        PROBE,
        settings="config.settings.production",
        DJANGO_SECRET_KEY="warm-up-probe-" + "x" * 50,
        MEMLEDGER_WARM_UP=str(warm).lower(),
    )
    assert loaded == ({"indexes": 2, "model": True} if warm else {"indexes": 0, "model": False})
