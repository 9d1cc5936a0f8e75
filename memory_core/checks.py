"""System checks for the configuration the domain depends on."""

from django.conf import settings
from django.core import checks
from django.db import connection
from django.db.utils import DatabaseError

from memory_core.cache_backends import counter_cache_alias
from memory_core.models import EMBEDDING_DIMENSIONS


@checks.register()
def check_embedding_dimensions(app_configs, **kwargs):
    """The configured embedder must produce vectors the embedding column can hold."""
    configured = settings.MEMLEDGER_EMBEDDER.get("DIMENSIONS")
    if configured != EMBEDDING_DIMENSIONS:
        return [
            checks.Error(
                f"MEMLEDGER_EMBEDDER['DIMENSIONS'] is {configured}, but Memory.embedding holds "
                f"{EMBEDDING_DIMENSIONS} dimensions.",
                hint="Configure a model with the same dimension, or migrate the column.",
                id="memory_core.E001",
            )
        ]
    return []


@checks.register(checks.Tags.database)
def check_pgvector_available(app_configs, databases=None, **kwargs):
    """The database must offer the pgvector extension."""
    if not databases:
        return []
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            available = cursor.fetchone() is not None
    except DatabaseError as exc:
        return [checks.Error(f"Could not query the database: {exc}", id="memory_core.E002")]
    if not available:
        return [
            checks.Error(
                "The pgvector extension is not available in this PostgreSQL server.",
                hint="Install pgvector, or unset DATABASE_URL to use the embedded server.",
                id="memory_core.E003",
            )
        ]
    return []


@checks.register()
def check_eval_data_dirs(app_configs, **kwargs):
    """Every folder of MEMLEDGER_EVAL_DATA_DIRS must exist: the deletion step that purges
    them fails (it cannot verify a folder it cannot see) until it does."""
    from memory_core.deletion.stores import eval_dirs_missing

    return [
        checks.Warning(
            f"MEMLEDGER_EVAL_DATA_DIRS names {folder!r}, which is not a folder: every "
            "deletion's evaluation step fails until it exists.",
            hint="Fix the setting (comma-separated folders) or create the folder.",
            id="memory_core.W001",
        )
        for folder in eval_dirs_missing()
    ]


@checks.register(checks.Tags.staticfiles, deploy=True)
def check_static_files_collected(app_configs, **kwargs):
    """With hashed static file names (production), ``collectstatic`` must have run: every
    page that links a static file fails on the missing manifest otherwise."""
    from django.contrib.staticfiles.storage import staticfiles_storage

    manifest = getattr(staticfiles_storage, "manifest_name", None)
    if manifest is None or staticfiles_storage.exists(manifest):
        return []
    return [
        checks.Error(
            f"STATIC_ROOT ({settings.STATIC_ROOT}) holds no {manifest}: static files were not "
            "collected, and every page that links one (the portal, the admin) fails.",
            hint="Run `python manage.py collectstatic --noinput` with these settings.",
            id="memory_core.E004",
        )
    ]


# Caches whose incr is atomic across processes: the per-key rate limits and write quotas
# count in them (api/throttling.py); Django's file and database caches get, add and set
# instead. memledger's locking file cache is atomic across one host's processes (several
# web hosts would each count on their own: they need Redis, docs/security.md).
ATOMIC_COUNTER_CACHES = (
    "django.core.cache.backends.redis.RedisCache",
    "memory_core.cache_backends.LockingFileBasedCache",
)


@checks.register(checks.Tags.security, deploy=True)
def check_throttle_cache(app_configs, **kwargs):
    """A deployment counts rate limits in a cache whose increments do not get lost."""
    alias = counter_cache_alias()
    backend = settings.CACHES[alias]["BACKEND"]
    if backend in ATOMIC_COUNTER_CACHES:
        return []
    return [
        checks.Warning(
            f"The {alias} cache is {backend}: concurrent requests of one API key can lose "
            "counts of the rate limit and write quota there (its incr is a get and a set).",
            hint="Set REDIS_URL, so web processes share a Redis cache.",
            id="memory_core.W002",
        )
    ]


# A hundred years: a longer period is no backup policy, and its cutoff (``timedelta``) would
# overflow.
MAX_BACKUP_RETENTION_DAYS = 36_500


@checks.register()
def check_backup_retention_days(app_configs, **kwargs):
    """The oldest backup's age bounds what the deletion journal must keep: a period below a
    day let ``prune_deletion_journal`` drop the lines a restore's replay needs, and made the
    deletion sweep journal no governance action it had missed (``ledger.backups_cutoff``)."""
    days = settings.MEMLEDGER_BACKUP_RETENTION_DAYS
    if isinstance(days, int) and 1 <= days <= MAX_BACKUP_RETENTION_DAYS:
        return []
    return [
        checks.Error(
            f"MEMLEDGER_BACKUP_RETENTION_DAYS is {days!r}: it must be a whole number of days "
            f"from 1 to {MAX_BACKUP_RETENTION_DAYS:,}, the age of the oldest database backup "
            "kept.",
            hint="Set it to your backups' retention (35 by default).",
            id="memory_core.E005",
        )
    ]
