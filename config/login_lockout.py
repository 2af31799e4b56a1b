"""The client address django-axes counts admin login failures against (settings ``AXES_*``).

Behind the TLS proxy of the production layout (``TIMELINE_BEHIND_TLS_PROXY``) every request comes
from the proxy, so the address is the last ``X-Forwarded-For`` entry: the one the proxy appended
(``$proxy_add_x_forwarded_for``); entries a client sent itself come before it and are ignored.
Otherwise it is ``REMOTE_ADDR``.
"""

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str | None:
    if getattr(settings, "TIMELINE_BEHIND_TLS_PROXY", False):
        forwarded = str(request.META.get("HTTP_X_FORWARDED_FOR", "")).split(",")[-1].strip()
        if forwarded:
            return forwarded
    address = request.META.get("REMOTE_ADDR")
    return str(address) if address else None
