"""Liveness and readiness probes: ``GET /healthz`` and ``GET /readyz``, without authentication.

- ``/healthz`` (liveness): the process answers requests. Always 200 ``{"status": "ok"}``; it
  touches nothing else, so a database outage never gets healthy processes restarted.
- ``/readyz`` (readiness): the process can serve (``memory_core.readiness``): 200
  ``{"status": "ready", "checks": {...}}``, or 503 ``{"status": "not_ready", ...}`` with each
  failing check's code (``database_unavailable``, ``migrations_pending``), so a load balancer
  sends it no traffic.

The outermost middleware answers them, before anything else sees the request: a load
balancer's probe comes over plain HTTP with the instance's address as ``Host``, which the
HTTPS redirect (``DJANGO_SECURE_SSL_REDIRECT``) and ``ALLOWED_HOSTS`` would turn away.
``GET`` and ``HEAD`` only; never cached.
"""

from django.http import HttpResponse, JsonResponse

from api.exceptions import error_body
from memory_core.readiness import readiness_check


def _liveness() -> tuple[int, dict]:
    return 200, {"status": "ok"}


def _readiness() -> tuple[int, dict]:
    readiness = readiness_check()
    status = "ready" if readiness.ready else "not_ready"
    return (200 if readiness.ready else 503), {"status": status, "checks": readiness.checks}


PROBES = {"/healthz": _liveness, "/readyz": _readiness}


class HealthProbeMiddleware:
    """Answer the probe paths; hand every other request on untouched."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        probe = PROBES.get(request.path_info)
        if probe is None:
            return self.get_response(request)
        if request.method not in ("GET", "HEAD"):
            message = f"{request.method} is not allowed here; use GET or HEAD."
            response = JsonResponse(error_body("method_not_allowed", message), status=405)
            response["Allow"] = "GET, HEAD"
        else:
            status, body = probe()
            response = JsonResponse(body, status=status)
            if request.method == "HEAD":
                response = HttpResponse(status=status, content_type=response["Content-Type"])
        response["Cache-Control"] = "no-store"
        return response
