"""Settings, read from the environment. The defaults run the embedded set-up: the checkout's own
PostgreSQL server (dbutils.embedded_server), tasks in-process."""

import json
import os
from decimal import Decimal
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from audit import log_lines
from backoffice.addresses import trusted_networks
from backoffice.api.docs import API_DESCRIPTION
from dbutils import embedded_server
from dbutils.postgresql import urls as database_urls

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG")
# Without SECRET_KEY (and not DEBUG) the setting stays empty: commands that sign nothing
# (verify_round, odds, the benchmarks) still run, and anything that signs (sessions, the web app)
# fails loudly with Django's own "SECRET_KEY must not be empty".
SECRET_KEY = os.environ.get("SECRET_KEY") or ("insecure-development-key" if DEBUG else "")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

# HTTPS only, unless told otherwise: redirect plain HTTP, cookies sent over HTTPS only, and HSTS.
# The development default (DEBUG=1) serves plain HTTP; a production site behind a TLS-terminating
# proxy names the header the proxy sets (SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO).
HTTPS_ONLY = env_bool("HTTPS_ONLY", not DEBUG)
SECURE_SSL_REDIRECT = HTTPS_ONLY
SESSION_COOKIE_SECURE = HTTPS_ONLY
CSRF_COOKIE_SECURE = HTTPS_ONLY
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", 31_536_000 if HTTPS_ONLY else 0))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS_ONLY)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", HTTPS_ONLY)
if os.environ.get("SECURE_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = (os.environ["SECURE_PROXY_SSL_HEADER"], "https")
# The proxies whose X-Forwarded-For is believed (comma-separated CIDRs; "unix" for a proxy on a Unix
# socket): the client is the right-most address not among them; none, the socket's peer
# (backoffice.addresses). Behind them, the SECURE_PROXY_SSL_HEADER of any other peer is ignored.
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES")
trusted_networks(tuple(TRUSTED_PROXIES))  # a value that is not an address or a CIDR stops the start
SESSION_COOKIE_HTTPONLY = True
# A session ends after this many minutes without a request (backoffice.staff_sessions).
STAFF_SESSION_IDLE_MINUTES = float(os.environ.get("STAFF_SESSION_IDLE_MINUTES", "30"))
# A session ends this many hours after log-in, however much it is used; its cookie and row with it.
STAFF_SESSION_HOURS = float(os.environ.get("STAFF_SESSION_HOURS", "12"))
SESSION_COOKIE_AGE = int(STAFF_SESSION_HOURS * 3600)
# The Content-Security-Policy header of every response (backoffice.security_headers; empty: none).
# Scripts, style sheets, fonts and requests only from this site, images also as data: URIs (the
# admin's and Swagger UI's icons); no inline script or style, no plug-in, no <base>, forms sent
# here only, and no framing by any site.
CONTENT_SECURITY_POLICY = os.environ.get(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
# A body larger than this is refused (413) before it is read.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("DATA_UPLOAD_MAX_MEMORY_SIZE", 2_621_440))

INSTALLED_APPS = [
    "baccarat_site.apps.BackOfficeAdminConfig",  # django.contrib.admin on the back-office site
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    # The second factor of staff (backoffice.second_factor): TOTP devices, and recovery codes as static ones.
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "backoffice",
    "audit",
    "apitokens",
    "wallet",
    "games",
    "settlement",
    "approvals",
    "alerts",
    "webhooks",
    "monitoring",
    "benchmarks",
]

MIDDLEWARE = [
    # The client's address, once (request.client_address), for throttles, audit and lock-outs.
    "backoffice.addresses.ClientAddressMiddleware",
    # /-/alive, /-/ready and /metrics, before the HTTPS redirect and the host check (probes come by
    # address, over plain HTTP); then every other request timed and its queries counted.
    "monitoring.middleware.ProbeMiddleware",
    "monitoring.middleware.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # CONTENT_SECURITY_POLICY on every response, the static files' too.
    "backoffice.security_headers.ContentSecurityPolicyMiddleware",
    # Serves the collected static files under gunicorn (admin, API docs, the public page).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Refuses text the database cannot store (NUL) and oversized API bodies before any query.
    "backoffice.middleware.RequestGuardMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # Django's CommonMiddleware; under /api/ a missing trailing slash is a 308 (method and body kept).
    "backoffice.middleware.SlashMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Ends a session idle too long, too old, or opened before its user's role or staff status changed.
    "backoffice.staff_sessions.StaffSessionMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "audit.middleware.AuditRequestMiddleware",
    # After a write, its person reads the primary for a while (read-your-writes; only with replicas).
    "backoffice.replica_reads.RecentWriteMiddleware",
    # A safe request's view plans its statements for their own values (lists with skewed filters).
    "backoffice.read_plans.ReadsPlannedForTheirValuesMiddleware",
]

ROOT_URLCONF = "baccarat_site.urls"
WSGI_APPLICATION = "baccarat_site.wsgi.application"

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

# DATABASE_URL names a PostgreSQL database; unset, the checkout's embedded server (.data/postgres,
# a Unix socket, no TCP port) is used, started by the first connection that finds it stopped.
DATABASE_URL = os.environ.get("DATABASE_URL", "")
DATABASES = {"default": database_urls.parse(
    DATABASE_URL or embedded_server.database_url(embedded_server.default_data_dir(), "baccarat"))}
if not DATABASE_URL:
    DATABASES["default"]["EMBEDDED_DATA_DIR"] = str(embedded_server.default_data_dir())
# Persistent connections: each web or worker process keeps its connection between requests
# (opening one costs more than a bet), checked before it is reused after an idle request, so a
# restarted database costs a reconnect, not an error. 0 opens one per request.
DATABASES["default"]["CONN_MAX_AGE"] = int(os.environ.get("DATABASE_CONN_MAX_AGE", "600"))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Parameters bound on the server, and a statement run PREPARE_THRESHOLD times on a connection
# prepared: PostgreSQL then plans the hot statements (a bet's, a token's) once per connection
# instead of once per request, half of what a bet cost it. 0 binds on the client, Django's
# default, for a connection pooler that cannot keep prepared statements.
DATABASE_PREPARE_THRESHOLD = int(os.environ.get("DATABASE_PREPARE_THRESHOLD", "5"))
if DATABASE_PREPARE_THRESHOLD:
    DATABASES["default"]["OPTIONS"].update(
        {"server_side_binding": True, "prepare_threshold": DATABASE_PREPARE_THRESHOLD})
# A persistent connection's check before a request's first query: on, an idle connection whose socket
# has nothing to read is taken as healthy without a round trip (dbutils/postgresql/base.py); off,
# Django's SELECT 1 every time.
DATABASE_QUIET_HEALTH_CHECK = env_bool("DATABASE_QUIET_HEALTH_CHECK", True)
# Behind a connection pooler (docs/operations/scaling.md). DATABASE_POOLER=transaction: DATABASE_URL is
# a PgBouncer in transaction mode, where each transaction may run on another server connection, so
# nothing may outlive one: no statement is prepared (unless DATABASE_POOLER_PREPARED_STATEMENTS=1, for
# PgBouncer 1.21 or later with max_prepared_statements), no server-side cursor (iterator() holds one
# across transactions), and the token rows' change notices are heard on a direct connection of their
# own, DATABASE_LISTEN_URL (unset: no token row is kept), which also holds Celery beat's lock. Empty:
# a direct connection (or a pooler in session mode).
DATABASE_POOLER = os.environ.get("DATABASE_POOLER", "").strip().lower()
if DATABASE_POOLER not in {"", "session", "transaction"}:
    raise ImproperlyConfigured("DATABASE_POOLER must be empty, 'session' or 'transaction'")
DATABASE_POOLER_PREPARED_STATEMENTS = env_bool("DATABASE_POOLER_PREPARED_STATEMENTS")
DATABASE_LISTEN_URL = os.environ.get("DATABASE_LISTEN_URL", "")
if DATABASE_POOLER == "transaction":
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
    if not DATABASE_POOLER_PREPARED_STATEMENTS:
        DATABASES["default"]["OPTIONS"].pop("prepare_threshold", None)

# Read replicas (docs/operations/replicas.md, dbutils.replicas, backoffice.replica_reads).
# REPLICA_DATABASE_URL: one or more hot standbys of DATABASE_URL, comma-separated (the aliases "replica",
# "replica_2", …); unset, everything reads the primary. Lists, details, reports, exports, round recall
# and the public pages read a replica at most REPLICA_MAX_LAG_SECONDS behind (default 5); money, writes
# and whatever is read inside a transaction never do. A person who wrote reads the primary for
# REPLICA_READ_YOUR_WRITES_SECONDS (default 15; more than the lag allowed plus REPLICA_LAG_CACHE_SECONDS,
# the time a process keeps a measured lag, default 2). A replica that does not connect within
# REPLICA_CONNECT_TIMEOUT_SECONDS (default 2) is set aside for REPLICA_RETRY_SECONDS (default 30).
REPLICA_MAX_LAG_SECONDS = float(os.environ.get("REPLICA_MAX_LAG_SECONDS", "5"))
REPLICA_LAG_CACHE_SECONDS = float(os.environ.get("REPLICA_LAG_CACHE_SECONDS", "2"))
REPLICA_READ_YOUR_WRITES_SECONDS = float(os.environ.get("REPLICA_READ_YOUR_WRITES_SECONDS", "15"))
REPLICA_CONNECT_TIMEOUT_SECONDS = int(os.environ.get("REPLICA_CONNECT_TIMEOUT_SECONDS", "2"))
REPLICA_RETRY_SECONDS = float(os.environ.get("REPLICA_RETRY_SECONDS", "30"))
if REPLICA_READ_YOUR_WRITES_SECONDS <= REPLICA_MAX_LAG_SECONDS + REPLICA_LAG_CACHE_SECONDS:
    raise ImproperlyConfigured("REPLICA_READ_YOUR_WRITES_SECONDS must exceed REPLICA_MAX_LAG_SECONDS plus "
                               "REPLICA_LAG_CACHE_SECONDS, or a person could read a copy older than their write")
DATABASE_REPLICAS = []
for _number, _url in enumerate(env_list("REPLICA_DATABASE_URL"), start=1):
    _alias = "replica" if _number == 1 else f"replica_{_number}"
    DATABASES[_alias] = {**database_urls.parse(_url), "CONN_MAX_AGE": DATABASES["default"]["CONN_MAX_AGE"],
                         "CONN_HEALTH_CHECKS": True,
                         "DISABLE_SERVER_SIDE_CURSORS": DATABASES["default"].get("DISABLE_SERVER_SIDE_CURSORS", False)}
    DATABASES[_alias]["OPTIONS"] = {**DATABASES["default"]["OPTIONS"], **DATABASES[_alias]["OPTIONS"],
                                    "connect_timeout": REPLICA_CONNECT_TIMEOUT_SECONDS}
    DATABASE_REPLICAS.append(_alias)
# Partition maintenance (audit.partitioning, docs/operations/partitions.md) runs as the tables'
# owner: the daily task that makes the months ahead connects with PARTITIONS_DATABASE_URL when it is
# set (production: the owner's URL), else as the application does. The archive keeps
# RETENTION_MONTHS_ONLINE months online (this one included) unless told --before; nothing is deleted.
# The daily archive task writes the months past them into PARTITIONS_ARCHIVE_DIR, and is off (does
# nothing) while it is empty. The daily compaction builds again, packed, the indexes of each month
# ended PARTITIONS_COMPACT_AFTER_DAYS ago (once a month: its late settlements are in by then).
PARTITIONS_DATABASE = "default"
if os.environ.get("PARTITIONS_DATABASE_URL"):
    PARTITIONS_DATABASE = "partitions"
    DATABASES["partitions"] = {**database_urls.parse(os.environ["PARTITIONS_DATABASE_URL"]), "CONN_MAX_AGE": 0}
RETENTION_MONTHS_ONLINE = int(os.environ.get("RETENTION_MONTHS_ONLINE", "13"))
PARTITIONS_ARCHIVE_DIR = os.environ.get("PARTITIONS_ARCHIVE_DIR", "")
PARTITIONS_COMPACT_AFTER_DAYS = int(os.environ.get("PARTITIONS_COMPACT_AFTER_DAYS", "7"))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# A user name is locked from an address after LOGIN_FAILURE_LIMIT failed log-ins from there, for
# LOGIN_LOCKOUT_SECONDS; after LOGIN_SLOWDOWN_AFTER failures from anywhere, its password is checked
# once every LOGIN_SLOWDOWN_SECONDS from addresses it has not logged in from within
# LOGIN_KNOWN_ADDRESS_DAYS (0: no slow-down) (backoffice.lockout): Django's model backend behind a
# check that a refused attempt checks no password.
AUTHENTICATION_BACKENDS = ["backoffice.lockout.LockoutBackend"]
LOGIN_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "5"))
LOGIN_LOCKOUT_SECONDS = int(os.environ.get("LOGIN_LOCKOUT_SECONDS", "900"))
LOGIN_SLOWDOWN_AFTER = int(os.environ.get("LOGIN_SLOWDOWN_AFTER", "10"))
LOGIN_SLOWDOWN_SECONDS = int(os.environ.get("LOGIN_SLOWDOWN_SECONDS", "10"))
LOGIN_KNOWN_ADDRESS_DAYS = int(os.environ.get("LOGIN_KNOWN_ADDRESS_DAYS", "30"))

# The second factor of every staff user (backoffice.second_factor): a TOTP authenticator app,
# enrolled at first log-in, with single-use recovery codes. No admin page and no session API call
# works before it is entered. Approving, rejecting, adjusting, voiding, changing roles and issuing
# tokens need one entered within STEP_UP_MINUTES (backoffice.step_up). Wrong codes count like wrong
# passwords: LOGIN_FAILURE_LIMIT of them within LOGIN_LOCKOUT_SECONDS lock the person's second
# factor for that long (backoffice.lockout), which replaces django-otp's own per-device delay.
STEP_UP_MINUTES = float(os.environ.get("STEP_UP_MINUTES", "5"))
OTP_TOTP_ISSUER = os.environ.get("OTP_TOTP_ISSUER", "Baccarat back-office")  # shown by the authenticator app
OTP_TOTP_THROTTLE_FACTOR = 0
OTP_STATIC_THROTTLE_FACTOR = 0
# The authentication log (log-ins, lock-outs, refused API tokens, tokens made and deleted) is part of
# the audit trail, whose events are never deleted: AUTH_LOG_DAYS is the minimum promised (New Jersey
# asks 90 days), shown on its page, not a deletion schedule. Past AUTH_LOG_FAILURES_PER_MINUTE failed
# log-ins and refused tokens from one address in a minute, no more are recorded until the minute ends
# (the event at the limit says so; 0: no limit), so a flood cannot grow the never-deleted log at will.
AUTH_LOG_DAYS = int(os.environ.get("AUTH_LOG_DAYS", "90"))
AUTH_LOG_FAILURES_PER_MINUTE = int(os.environ.get("AUTH_LOG_FAILURES_PER_MINUTE", "60"))

# The cache holds the lock-out counts and the API's throttle windows: Redis (CACHE_URL) shares them
# between web processes; the default, per process, suits one development server.
CACHES = {
    "default": {"BACKEND": "dbutils.redis_cache.RedisCache", "LOCATION": os.environ["CACHE_URL"]}
    if os.environ.get("CACHE_URL") else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
FORMAT_MODULE_PATH = ["backoffice.formats"]  # dates to the second with their zone, on every page

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apitokens.authentication.TokenAuthentication",
        # The admin's session, once its second factor is verified (a session without it: 401).
        "backoffice.api.session_authentication.VerifiedSessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON only, in and out; the parser names the field that held a NaN or Infinity literal.
    "DEFAULT_PARSER_CLASSES": ["backoffice.api.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    # Newest first by id; a cursor never counts the table.
    "DEFAULT_PAGINATION_CLASS": "backoffice.api.pagination.CursorPagination",
    "PAGE_SIZE": 50,
    "COERCE_DECIMAL_TO_STRING": True,
    # Services' ValidationError -> 400 and Conflict -> 409, both as {field: [reason]}.
    "EXCEPTION_HANDLER": "backoffice.api.exceptions.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Per token, at its role's rate (backoffice.api.throttling): 429 with Retry-After beyond it.
    "DEFAULT_THROTTLE_CLASSES": ["backoffice.api.throttling.RoleRateThrottle"],
}
# "N/second|minute|hour|day", or "none". A game server (integration) must never be held back at its
# peak of thousands of bets per second: its ceiling only stops a runaway client. People's tokens
# (operators, support, administrators) are held to what a person or a support script needs.
API_THROTTLE_RATES = {
    "integration": os.environ.get("API_THROTTLE_INTEGRATION", "50000/second"),
    "operator": os.environ.get("API_THROTTLE_OPERATOR", "1200/minute"),
    "support": os.environ.get("API_THROTTLE_SUPPORT", "1200/minute"),
    "admin": os.environ.get("API_THROTTLE_ADMIN", "1200/minute"),
    "regulator": os.environ.get("API_THROTTLE_REGULATOR", "1200/minute"),
    "anonymous": os.environ.get("API_THROTTLE_ANONYMOUS", "60/minute"),
}
# A rate of at least API_THROTTLE_BATCH_FROM requests a window is counted API_THROTTLE_BATCH
# requests at a time by each process (one round trip to the cache a batch); smaller ones exactly.
API_THROTTLE_BATCH_FROM = int(os.environ.get("API_THROTTLE_BATCH_FROM", "10000"))
API_THROTTLE_BATCH = int(os.environ.get("API_THROTTLE_BATCH", "32"))
# Token rows each web process's PostgreSQL connection keeps between requests, emptied as soon as the
# database notifies a change to tokens, users, groups or permissions (backoffice.api.token_rows), and
# read again after API_TOKEN_CACHE_SECONDS regardless. 0 (or less) keeps none: required behind a pooler in
# transaction mode, where notices cannot reach the connection that listens.
API_TOKEN_CACHE_SIZE = int(os.environ.get("API_TOKEN_CACHE_SIZE", "1000"))
API_TOKEN_CACHE_SECONDS = float(os.environ.get("API_TOKEN_CACHE_SECONDS", "60"))
# API tokens (apitokens): the database keeps only an HMAC-SHA256 digest of each, keyed by a pepper
# from the environment. API_TOKEN_PEPPERS is comma-separated, the current pepper first; tokens made
# under an earlier one still work (and are re-digested under the current one at first use) while it
# stays in the list. Required unless DEBUG (a development pepper then): a web server without one
# refuses to start (baccarat_site.wsgi), and making or checking a token fails loudly.
API_TOKEN_PEPPERS = env_list("API_TOKEN_PEPPERS") or (["insecure-development-pepper"] if DEBUG else [])
if any(len(pepper) < 16 for pepper in API_TOKEN_PEPPERS):
    raise ImproperlyConfigured("API_TOKEN_PEPPERS: each pepper needs at least 16 characters")
# Days after which a staff member's new token expires unless another expiry is given (0: none);
# a game server's (integration) tokens do not expire unless asked (docs/operations/api-tokens.md).
STAFF_TOKEN_DAYS = float(os.environ.get("STAFF_TOKEN_DAYS", "90"))
# Hours a rotated token keeps working beside its successor.
API_TOKEN_ROTATION_OVERLAP_HOURS = float(os.environ.get("API_TOKEN_ROTATION_OVERLAP_HOURS", "24"))
# A game server's plain single bet answered around DRF's dispatch by the same pieces called directly
# (backoffice/api/plain.py); off, every request goes through DRF's dispatch.
API_PLAIN_REQUESTS = env_bool("API_PLAIN_REQUESTS", True)
SPECTACULAR_SETTINGS = {
    "TITLE": "Baccarat back-office API",
    "DESCRIPTION": API_DESCRIPTION,  # roles, tokens, idempotency keys, errors, PF-1: above the operations
    "VERSION": "1.0.0",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Requests and responses apart (read-only fields are not in a request), and the exactness of
    # backoffice.api.schema (statuses, forbidden unknown properties, links).
    "COMPONENT_SPLIT_REQUEST": True,
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums", "backoffice.api.schema.exact_schema",
    ],
    "ENUM_NAME_OVERRIDES": {
        "GameStatusEnum": "games.choices.GameStatus",
        "RoundStatusEnum": "games.choices.RoundStatus",
        "BetStatusEnum": "games.choices.BetStatus",
        # A round's outcome (PLAYER, BANKER, TIE), every registered bet type, a batch's outcome.
        "PlayerBankerTieEnum": "games.choices.Outcome",
        "BetTypeEnum": "games.choices.BetType",
        "BatchOutcomeEnum": "settlement.models.BatchOutcome",
        "LedgerKindEnum": "wallet.choices.LedgerKind",
        # The audit events' and the authentication log's action (approvals name actions too).
        "AuditActionEnum": "audit.choices.AuditAction",
        # Alerts and the incidents they open each have a status (and alerts a kind, as ledger entries do).
        "AlertKindEnum": "alerts.choices.AlertKind",
        "AlertStatusEnum": "alerts.choices.AlertStatus",
        "IncidentStatusEnum": "alerts.choices.IncidentStatus",
    },
}

# Celery: with no broker URL, tasks run in-process through the same code (the embedded default).
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
if not CELERY_BROKER_URL:
    CELERY_BROKER_URL = "memory://localhost/"  # with its host named, kombu has nothing to warn about
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Beat runs the periodic tasks stored in the database, and only one beat at a time: a second one
# waits, retrying every CELERY_BEAT_LOCK_RETRY_SECONDS, for the first one's lock (a PostgreSQL
# advisory lock on a direct connection of its own: baccarat_site/beat.py).
CELERY_BEAT_SCHEDULER = "baccarat_site.beat:LockedDatabaseScheduler"
CELERY_BEAT_LOCK_RETRY_SECONDS = float(os.environ.get("CELERY_BEAT_LOCK_RETRY_SECONDS", "5"))
CELERY_TIMEZONE = TIME_ZONE
# A queue per workload, so that one cannot hold back another (a webhook endpoint that hangs, a slow
# report): settlement; the audit sequencer and heads; webhook deliveries; the partitions' maintenance
# (minutes of index builds and detaches, as the tables' owner: never before the sequencer); alerts,
# approvals' expiry and anything not routed ("reports"). A worker started without -Q serves them all
# (development, the tests); `make prod` starts one or more per queue (-Q name), sized as
# docs/operations/scaling.md says. A route's pattern is tried in order: the partitions' before audit's.
CELERY_TASK_QUEUES = [Queue(name, routing_key=name)
                      for name in ("settlement", "audit", "webhooks", "partitions", "reports")]
CELERY_TASK_DEFAULT_QUEUE = "reports"
CELERY_TASK_ROUTES = {
    "settlement.*": {"queue": "settlement"},
    "audit.partitions_*": {"queue": "partitions"},
    "audit.*": {"queue": "audit"},
    "webhooks.*": {"queue": "webhooks"},
    "alerts.*": {"queue": "reports"},
    "approvals.*": {"queue": "reports"},
}

# Settlement: the rounds one batch claims, and the failed attempts after which the sweep leaves a
# round to operators (so one bad round cannot block the others).
SETTLEMENT_BATCH_ROUNDS = int(os.environ.get("SETTLEMENT_BATCH_ROUNDS", "200"))
MAX_SETTLEMENT_FAILURES = int(os.environ.get("MAX_SETTLEMENT_FAILURES", "5"))
# A batch's bets in one UPDATE … FROM unnest, 5× the plain path's speed; off, one UPDATE run per bet.
SETTLEMENT_BETS_IN_ONE_STATEMENT = env_bool("SETTLEMENT_BETS_IN_ONE_STATEMENT", True)
# An admin list's row checkboxes written as HTML, not through the form widget's template: a
# quarter of a 100-row list's time (docs/decisions/0010); off, Django's own.
ADMIN_DIRECT_CHECKBOXES = env_bool("ADMIN_DIRECT_CHECKBOXES", True)

# The audit log (audit/): in the embedded default the sequencer runs as each audited transaction
# commits; with a broker, Celery beat runs it every second. Tree heads are signed with an Ed25519
# key from the environment (base64 of the 32-byte private key) or a key file (PEM or that base64),
# never from the database, and each head is written to a directory outside the database.
AUDIT_SEQUENCE_ON_COMMIT = env_bool("AUDIT_SEQUENCE_ON_COMMIT", CELERY_TASK_ALWAYS_EAGER)
AUDIT_SIGNING_KEY = os.environ.get("AUDIT_SIGNING_KEY", "")
AUDIT_SIGNING_KEY_FILE = os.environ.get("AUDIT_SIGNING_KEY_FILE") or (
    str(BASE_DIR / "audit-signing-key.pem") if DEBUG else "")
# The public key that checks every head (base64 of the raw 32 bytes, as the public page shows it):
# all audit_verify and the page need. Unset, it is the signing key's; set beside a signing key, the two
# must match. Heads are published to AUDIT_HEAD_SINK_DIR, which audit_verify and the hourly audit
# check read back: the log must still give the root of every head published there.
AUDIT_PUBLIC_KEY = os.environ.get("AUDIT_PUBLIC_KEY", "")
AUDIT_HEAD_SINK_DIR = os.environ.get("AUDIT_HEAD_SINK_DIR", str(BASE_DIR / "audit-heads"))
AUDIT_HEAD_INTERVAL_SECONDS = int(os.environ.get("AUDIT_HEAD_INTERVAL_SECONDS", "60"))

# Bulk intake: the most bets one request to /api/v1/rounds/{id}/bets/bulk/ may carry.
BET_BULK_MAX_ITEMS = int(os.environ.get("BET_BULK_MAX_ITEMS", "1000"))
# Shortcuts around the ORM on the write paths where the number of statements is the cost; each off
# runs the plain ORM path, which tests hold to the same rows. A single bet's checks and writes in
# one statement, its own transaction (games/writes.py); off, a transaction that locks the round and
# account, checks in Python and writes through the ORM (measured: 1.5 ms a bet against 7 ms).
BET_IN_ONE_STATEMENT = env_bool("BET_IN_ONE_STATEMENT", True)
# The set-based writes of bulk bets and settlement batches (balances, ledger entries, audit events)
# one statement each, whatever their number (wallet/writes.py, audit.services.audit_record_many);
# off, Django's bulk_create and one UPDATE run per balance (measured: a bulk request of 1,000 bets
# in 0.23 s against 0.65 s).
BULK_WRITES_IN_ONE_STATEMENT = env_bool("BULK_WRITES_IN_ONE_STATEMENT", True)

# Four eyes: the actions that need a second person (game.update of a game that has taken bets,
# game.create of an active game and the activation of a game, account.adjust from the threshold's
# absolute amount over the window, round.void of a DEALT round), and how long a request waits
# before it expires.
APPROVAL_ACTIONS = env_list("APPROVAL_ACTIONS", "game.update,game.create,account.adjust,round.void")
APPROVAL_ADJUSTMENT_THRESHOLD = Decimal(os.environ.get("APPROVAL_ADJUSTMENT_THRESHOLD", "10000.00"))
# Hours back over which an account's applied adjustments add up (absolute amounts) towards the threshold.
APPROVAL_ADJUSTMENT_WINDOW_HOURS = float(os.environ.get("APPROVAL_ADJUSTMENT_WINDOW_HOURS", "24"))
APPROVAL_EXPIRY_HOURS = float(os.environ.get("APPROVAL_EXPIRY_HOURS", "24"))
# The highest exact return to player (1.00 = 100 %) any bet type of any game may have, whatever its RTP policy.
MAX_GAME_RTP = Decimal(os.environ.get("MAX_GAME_RTP", "1.00"))
# Currencies besides ISO 4217's (whose places core.currencies knows: JPY 0, USD 2, KWD 3) that games
# and accounts may hold, with their decimal places, 0 to 8: a JSON object, e.g. {"BTC": 8, "USDT": 6}.
# Set before a game of the currency takes a bet: its payouts round down to that unit from then on.
CURRENCY_MINOR_UNITS = json.loads(os.environ.get("CURRENCY_MINOR_UNITS", "{}"))

# Alerts (alerts.checks): thresholds of the periodic checks, the days they look back on, and who is
# emailed when an alert opens. Without EMAIL_HOST, email goes to the console (development).
ALERT_SETTLEMENT_LAG_SECONDS = int(os.environ.get("ALERT_SETTLEMENT_LAG_SECONDS", "120"))
ALERT_AUDIT_PENDING_SECONDS = int(os.environ.get("ALERT_AUDIT_PENDING_SECONDS", "60"))
# A periodic task the audit log or the alerts depend on (alerts.schedules) that has not run for its
# interval plus this long raises an alert (beat records runs every few minutes; only with a broker).
ALERT_PERIODIC_TASK_GRACE_SECONDS = int(os.environ.get("ALERT_PERIODIC_TASK_GRACE_SECONDS", "600"))
ALERT_PAYOUT_THRESHOLD = Decimal(os.environ.get("ALERT_PAYOUT_THRESHOLD", "50000.00"))
ALERT_OUTCOME_P_VALUE = float(os.environ.get("ALERT_OUTCOME_P_VALUE", "0.001"))
ALERT_RTP_BAND_SIGMAS = float(os.environ.get("ALERT_RTP_BAND_SIGMAS", "4"))
ALERT_RTP_MIN_BETS = int(os.environ.get("ALERT_RTP_MIN_BETS", "100"))
ALERT_LOOKBACK_DAYS = int(os.environ.get("ALERT_LOOKBACK_DAYS", "2"))
ALERT_EMAIL_RECIPIENTS = env_list("ALERT_EMAIL_RECIPIENTS")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_BACKEND = ("django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST
                 else "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "back-office@localhost")

# Webhooks: the HTTP timeout of one attempt, the attempts before a delivery is given up, the backoff
# (doubling from WEBHOOK_BACKOFF_SECONDS up to WEBHOOK_BACKOFF_MAX_SECONDS), and how long a rotated
# secret keeps signing next to its successor.
WEBHOOK_TIMEOUT_SECONDS = float(os.environ.get("WEBHOOK_TIMEOUT_SECONDS", "5"))
WEBHOOK_MAX_ATTEMPTS = int(os.environ.get("WEBHOOK_MAX_ATTEMPTS", "8"))
WEBHOOK_BACKOFF_SECONDS = float(os.environ.get("WEBHOOK_BACKOFF_SECONDS", "10"))
WEBHOOK_BACKOFF_MAX_SECONDS = float(os.environ.get("WEBHOOK_BACKOFF_MAX_SECONDS", "3600"))
WEBHOOK_SECRET_OVERLAP_HOURS = float(os.environ.get("WEBHOOK_SECRET_OVERLAP_HOURS", "24"))
# Where webhooks may post (webhooks.validators): plain http only when allowed (development), and
# no private, loopback or link-local destination unless unblocked (a local test receiver).
WEBHOOK_ALLOW_HTTP = env_bool("WEBHOOK_ALLOW_HTTP", DEBUG)
WEBHOOK_BLOCK_PRIVATE = env_bool("WEBHOOK_BLOCK_PRIVATE", not DEBUG)

# Monitoring (monitoring/, docs/operations/monitoring.md). /metrics in Prometheus's text format, when
# METRICS_ENABLED, readable with "Authorization: Bearer $METRICS_TOKEN" or from METRICS_ALLOWED_IPS
# (comma-separated addresses or CIDRs; the client's address as TRUSTED_PROXIES gives it); neither
# set, every scrape is refused (401). Off, nothing is counted and /metrics is a 404. Under gunicorn
# and Celery the processes share PROMETHEUS_MULTIPROC_DIR (read by prometheus_client itself;
# gunicorn.conf.py makes one when unset). The database's figures are read at each scrape, each
# statement cut off after METRICS_QUERY_TIMEOUT_MS.
METRICS_ENABLED = env_bool("METRICS_ENABLED", True)
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
METRICS_ALLOWED_IPS = env_list("METRICS_ALLOWED_IPS")
METRICS_QUERY_TIMEOUT_MS = int(os.environ.get("METRICS_QUERY_TIMEOUT_MS", "2000"))
# The request path's counts (requests, bets) are kept in each process and written every
# METRICS_FLUSH_SECONDS, at a scrape and at exit (docs/decisions/0009); 0 writes each one at once.
METRICS_FLUSH_SECONDS = float(os.environ.get("METRICS_FLUSH_SECONDS", "1"))
# /-/ready: the checks wait at most READINESS_TIMEOUT_SECONDS in all, and an answer is reused for
# READINESS_CACHE_SECONDS (probes faster than that open no more database connections).
READINESS_TIMEOUT_SECONDS = float(os.environ.get("READINESS_TIMEOUT_SECONDS", "2"))
READINESS_CACHE_SECONDS = float(os.environ.get("READINESS_CACHE_SECONDS", "1"))

# Error reports (DEBUG's technical 500 page) show no variable's value: one may be a server seed.
DEFAULT_EXCEPTION_REPORTER_FILTER = "backoffice.errors.ValuelessExceptionReporterFilter"

# Logs (audit.log_lines, docs/operations/logging.md): LOG_FORMAT "plain" (text) or "json" (one JSON
# object a line with time, level, logger, message and, where known, request_id, user, game, round and
# bet; Celery workers and beat then write through it too, baccarat_site.celery). LOG_REQUESTS: one
# line per HTTP request (method, path without its query, status, duration), with that context; on
# with JSON, where it replaces gunicorn's access log (gunicorn.conf.py), off with text by default.
LOG_FORMAT = os.environ.get("LOG_FORMAT", "plain").strip().lower()
LOG_REQUESTS = env_bool("LOG_REQUESTS", LOG_FORMAT == "json")
LOGGING = log_lines.logging_config(LOG_FORMAT, os.environ.get("LOG_LEVEL", "INFO"))
LOGGING_CONFIG = "audit.log_lines.configure"
