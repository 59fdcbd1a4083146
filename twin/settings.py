"""Settings for the fabric twin, read from the environment.

Safe production defaults: DEBUG is off unless asked for, the secret key is never a literal in
the code, and every service address comes from a variable. With nothing set, the embedded
default applies: SQLite in TWIN_DATA_DIR and a Redis on localhost (which `manage.py serve`
starts itself when REDIS_URL is not given).
"""
import os
import secrets
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("TWIN_DATA_DIR", BASE_DIR / "var")).resolve()


def env_bool(name: str, default: bool = False) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def secret_key_from_data_dir() -> str:
    """A per-installation key kept in the data directory, created on first use."""
    key_file = DATA_DIR / "secret_key"
    if not key_file.exists():
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


DEBUG = env_bool("DEBUG")
SECRET_KEY = os.environ.get("SECRET_KEY") or secret_key_from_data_dir()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

# Behind TLS (TWIN_HTTPS=1) cookies are marked secure, HTTP is redirected, and browsers are told
# to use HTTPS only (HSTS) for a year, subdomains included.
if env_bool("TWIN_HTTPS"):
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = int(os.environ.get("TWIN_HSTS_SECONDS", 365 * 24 * 3600))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("TWIN_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("TWIN_HSTS_PRELOAD", True)  # effective only once submitted to the browsers' list
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Scripts come only from our own files: no inline script, handler or eval. Inline styles are
# allowed: the what-if report embeds matplotlib's SVG figures, which style every shape inline,
# and Swagger UI sets styles too; a style runs no code. 'self' covers the page's own websockets.
TWIN_CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
))

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "twin.common",
    "twin.accounts",
    "twin.fabrics",
    "twin.runs",
    "twin.simulations",
    "twin.journal",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "twin.common.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "twin.common.middleware.RequestBodyLimitMiddleware",
    "twin.common.middleware.NulInQueryMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "twin.accounts.middleware.LoginRequiredMiddleware",
    "twin.fabrics.access.FabricAccessMiddleware",
]

ROOT_URLCONF = "twin.urls"
ASGI_APPLICATION = "twin.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "twin" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{DATA_DIR / 'twin.sqlite3'}"),
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "0")),
        # A kept connection the server has dropped (restarted, killed) is replaced at the start
        # of the next request or task instead of failing it.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the worker write to one file: wait for locks instead of failing,
    # and let readers go on while a writer works.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # Tests on a file too: Django's default in-memory test database shares one cache between
    # connections, where a writer locks whole tables and the worker thread of the Celery tests
    # fails at once ("database table is locked") instead of waiting like it does on a file.
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "fabric-list"
LOGOUT_REDIRECT_URL = "login"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
SESSION_ENGINE = "django.contrib.sessions.backends.db"  # pages work while Redis is down
# Failed logins for one user name from one address, within the lockout time, that lock them out
# for that time (twin.accounts.throttle).
TWIN_LOGIN_FAILURES_ALLOWED = int(os.environ.get("TWIN_LOGIN_FAILURES_ALLOWED", 10))
TWIN_LOGIN_LOCKOUT_S = int(os.environ.get("TWIN_LOGIN_LOCKOUT_S", 15 * 60))

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "twin" / "locale"]
TIME_ZONE = "UTC"  # stored and served in UTC; the browser shows the viewer's zone
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(os.environ.get("TWIN_STATIC_ROOT", DATA_DIR / "static"))
STATICFILES_DIRS = [("frontend", BASE_DIR / "frontend" / "dist")]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Largest topology file accepted (a 16k-card dump is a few tens of MB). A request declaring a
# larger body is refused before it is read.
TWIN_MAX_UPLOAD_BYTES = int(os.environ.get("TWIN_MAX_UPLOAD_BYTES", 200 * 1024 * 1024))
# Largest telemetry post (POST /api/fabrics/{id}/telemetry/): the web process parses and checks it
# before handing it to the live worker. 16,384 ports in columns are about 0.8 MB.
TWIN_TELEMETRY_MAX_BYTES = int(os.environ.get("TWIN_TELEMETRY_MAX_BYTES", 32 * 1024 * 1024))
# Uploaded topology files are read in a child process with at most this much address space and
# this many seconds (CPU and wall clock); past either they are refused (twin.fabrics.reading).
TWIN_PARSE_MEMORY_BYTES = int(os.environ.get("TWIN_PARSE_MEMORY_BYTES", 8 * 2**30))
TWIN_PARSE_TIME_LIMIT_S = int(os.environ.get("TWIN_PARSE_TIME_LIMIT_S", 300))
# Uploads over FILE_UPLOAD_MAX_MEMORY_SIZE are spooled to files here, not the system's temporary
# directory: `serve` and `manage.py web` empty it before they start the web server, so that files
# of uploads cut off by a killed server do not pile up. One directory per machine or container
# (docker-compose's web replicas share the data volume, not this directory).
FILE_UPLOAD_TEMP_DIR = Path(os.environ.get("TWIN_UPLOAD_TEMP_DIR", DATA_DIR / "uploads-tmp")).resolve()
FILE_UPLOAD_TEMP_DIR.mkdir(parents=True, exist_ok=True)
# Archives of per-node files (.tar, .tar.gz, .zip; docs/formats/archives.md): at most this many
# entries, unpacking to at most this many bytes in all (each member at most TWIN_MAX_UPLOAD_BYTES),
# each member and the whole at most this many times its compressed size.
TWIN_ARCHIVE_MAX_MEMBERS = int(os.environ.get("TWIN_ARCHIVE_MAX_MEMBERS", 20_000))
TWIN_ARCHIVE_MAX_UNPACKED_BYTES = int(os.environ.get("TWIN_ARCHIVE_MAX_UNPACKED_BYTES", 2 * TWIN_MAX_UPLOAD_BYTES))
TWIN_ARCHIVE_MAX_RATIO = float(os.environ.get("TWIN_ARCHIVE_MAX_RATIO", 200))

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")

# The cache holds login throttling counts only; Redis, so that every web process shares them.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "twin",
        "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
    }
}

# A websocket consumer waits for its next message with a blocking read that Redis answers after
# at most 5 s (channels_redis' brpop_timeout). The client's socket timeout must be longer, or an
# idle read times out first and the socket closes with 1011 (redis-py's default is also 5 s).
CHANNEL_LAYER_SOCKET_TIMEOUT_S = 15
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            "hosts": [{"address": REDIS_URL, "socket_timeout": CHANNEL_LAYER_SOCKET_TIMEOUT_S, "socket_connect_timeout": 2}],
            "capacity": 200,
            "expiry": 30,
        },
    }
}

# Celery: the run's state lives in our database, so no result backend is needed.
CELERY_BROKER_URL = REDIS_URL
CELERY_TASK_IGNORE_RESULT = True
# A task is acknowledged when it is done, not when it is taken: the message of a worker that
# dies stays in Redis and is delivered again. Every task is safe to run twice.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The longest any one task may take (a whole run, or one cell of a fanned-out run): the pool
# stops it past this, and the sweeper then retries or fails it.
TWIN_TASK_TIME_LIMIT_S = int(os.environ.get("TWIN_TASK_TIME_LIMIT_S", 3600))
CELERY_TASK_TIME_LIMIT = TWIN_TASK_TIME_LIMIT_S
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # How long before Redis hands a task whose worker died (unacknowledged) to another worker:
    # longer than the longest task, or a slow one would be delivered twice while it runs. Leases
    # (below) recover a dead worker's run much sooner; this is the broker's own backstop.
    "visibility_timeout": int(os.environ.get("TWIN_TASK_REDELIVERY_S", TWIN_TASK_TIME_LIMIT_S + 300)),
    "socket_connect_timeout": 2,
}
# Publishing fails fast when Redis is down, so the user hears about it at once.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5}
# Two queues, so that heavy work never delays what people watch: the live queue carries the
# replay player, run bookkeeping and the sweeper; the heavy one whole runs and fanned-out cells.
TWIN_QUEUE_LIVE = "twin.live"
TWIN_QUEUE_HEAVY = "twin.heavy"
CELERY_TASK_DEFAULT_QUEUE = TWIN_QUEUE_LIVE
CELERY_TASK_QUEUES = {name: {"exchange": name, "routing_key": name} for name in (TWIN_QUEUE_LIVE, TWIN_QUEUE_HEAVY)}  # a worker without -Q takes both
CELERY_TASK_ROUTES = {"twin.runs.cell": {"queue": TWIN_QUEUE_HEAVY}}  # whole runs choose theirs by kind
# Leases (twin.runs.sweeper): a worker doing a run or a cell writes a heartbeat every quarter
# lease; one silent for a whole lease is taken as dead, and its work is queued again, at most
# TWIN_RUN_MAX_ATTEMPTS times in all, then failed with the reason. The sweeper runs every
# TWIN_SWEEP_INTERVAL_S (celery beat: embedded in `serve`'s live worker, a service of its own
# in docker-compose.yml).
TWIN_RUN_LEASE_S = float(os.environ.get("TWIN_RUN_LEASE_S", 60))
TWIN_RUN_MAX_ATTEMPTS = int(os.environ.get("TWIN_RUN_MAX_ATTEMPTS", 3))
TWIN_SWEEP_INTERVAL_S = float(os.environ.get("TWIN_SWEEP_INTERVAL_S", 5))
CELERY_BEAT_SCHEDULE = {
    "sweep": {"task": "twin.runs.sweep", "schedule": TWIN_SWEEP_INTERVAL_S, "options": {"expires": TWIN_SWEEP_INTERVAL_S}},
}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["twin.accounts.permissions.RolePermission"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "twin.common.api.exception_handler",
    "DEFAULT_PARSER_CLASSES": ["twin.common.api.JSONParser", "rest_framework.parsers.FormParser", "rest_framework.parsers.MultiPartParser"],
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # `?format=` belongs to our endpoints (export json|graphml, diff json|csv), not to DRF negotiation.
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Fabric twin API",
    "DESCRIPTION": "Topology model, uploads and background runs of the super-node fabric twin.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["twin.accounts.permissions.RolePermission"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The health endpoint's two states, for database and Redis alike: one name for both.
    "ENUM_NAME_OVERRIDES": {"ServiceStateEnum": ["ok", "unavailable"]},
    # The error answers every operation can give, from the shared handler and middleware.
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "twin.common.schema.error_responses_documented"],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "filters": {"quiet_housekeeping": {"()": "twin.common.logfilters.QuietHousekeeping"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["quiet_housekeeping"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # fontTools reports every font it subsets while matplotlib writes a report's PDF (40 lines a
    # PDF), matplotlib each categorical axis of growth factors ("1", "2"...) it is given, and that
    # the CJK fallback font has no bold (bold Latin is drawn in DejaVu; the glyph test checks both).
    "loggers": {
        "django.channels.server": {"level": "WARNING"}, "fontTools": {"level": "WARNING"}, "matplotlib": {"level": "WARNING"},
        "matplotlib.font_manager": {"level": "ERROR"},
    },
}
