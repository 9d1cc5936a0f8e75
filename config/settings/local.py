"""Settings for a developer machine: debug on, a throwaway secret."""

from .base import *

DEBUG = env_flag("DJANGO_DEBUG", default=True)
SECRET_KEY = SECRET_KEY or "local-development-only-not-secret"  # noqa: S105
