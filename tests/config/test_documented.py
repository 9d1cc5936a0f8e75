"""Every environment variable the configuration reads is documented."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READS = re.compile(
    r"(?:\.(?:str|bool|int|float|list|db_url)|env_(?:list|int|float|flag|text|path|rate|database_url)"
    r'|environ\.get|getenv)\(\s*"([A-Z][A-Z0-9_]+)"'
)


def _variables_read() -> set[str]:
    sources = [*(ROOT / "config").rglob("*.py"), ROOT / "memory_core" / "embeddings.py"]
    return {name for path in sources for name in READS.findall(path.read_text())}


def test_every_variable_the_configuration_reads_is_documented():
    found = _variables_read()
    assert {"DJANGO_ALLOWED_HOSTS", "MEMLEDGER_DATA_DIR", "MEMLEDGER_EMBEDDED_PGDATA"} <= found
    documents = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    text = "\n".join(path.read_text() for path in documents)
    missing = sorted(name for name in found if not re.search(rf"\b{name}\b", text))
    assert not missing, f"read by config/ but documented nowhere: {missing}"


def test_readme_configuration_table_has_the_web_database_and_model_variables():
    readme = (ROOT / "README.md").read_text()
    for name in (
        "DJANGO_DEBUG",
        "DJANGO_LOG_LEVEL",
        "DB_CONNECT_TIMEOUT",
        "DJANGO_SECURE_SSL_REDIRECT",
        "DJANGO_SECURE_HSTS_SECONDS",
        "MEMLEDGER_DATA_DIR",
        "MEMLEDGER_EMBEDDED_PGDATA",
        "MEMLEDGER_EMBEDDER_BACKEND",
        "MEMLEDGER_EMBEDDING_MODEL_NAME",
    ):
        assert f"| `{name}` |" in readme, name
