"""Production settings: refuse to start without a real secret, secure cookies, HSTS."""

from django.core.exceptions import ImproperlyConfigured

from .base import *

DEBUG = False
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")


def _weak(key: str) -> bool:
    return len(key) < 50 or key.startswith(("local-", "test-", "django-insecure"))


if _weak(SECRET_KEY):
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY must be set to a random value of at least 50 characters in production."
    )
# An old key still signs in: subject tokens and sessions signed with it are accepted.
if any(_weak(key) for key in SECRET_KEY_FALLBACKS):
    raise ImproperlyConfigured(
        "Every key of DJANGO_SECRET_KEY_FALLBACKS must be a random value of at least 50 "
        "characters in production: a weak old key still verifies subject tokens and sessions."
    )
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_flag("DJANGO_SECURE_SSL_REDIRECT", default=True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
SECURE_HSTS_SECONDS = env_int(
    "DJANGO_SECURE_HSTS_SECONDS", default=31_536_000, least=0, most=MAX_HOURS * 3600
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# Static files (portal CSS and script, the admin's) are served by the WSGI application itself
# from STATIC_ROOT, filled by `manage.py collectstatic` at deployment: no web server needs to
# be set up for them. Right after SecurityMiddleware, as WhiteNoise asks. File names carry
# their content's hash (cached for ten years, immutable; gzip precompressed: Brotli only if
# the brotli package were installed, and it is not a dependency); a page rendered before
# collectstatic has run fails on the missing manifest entry, so run it first.
MIDDLEWARE = [
    *MIDDLEWARE[: MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1],
    "whitenoise.middleware.WhiteNoiseMiddleware",
    *MIDDLEWARE[MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1 :],
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
