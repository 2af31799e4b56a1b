"""Secrets in settings: the development key of the embedded mode, and error pages that never show
a credential (DESIGN §7, issue 12 point 17).

Django's own filter hides settings whose *name* looks secret, but with DEBUG on it shows every
frame's local variables as they are, and ``DATABASE_URL`` (in ``os.environ``, so in the request
META under ``runserver``) or a broker URL carry their password in the *value*. The reporter here
masks every known credential and every ``scheme://user:password@`` in the finished page.
"""

from __future__ import annotations

import html
import os
import re
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from django.utils.safestring import SafeString, mark_safe
from django.views.debug import ExceptionReporter, SafeExceptionReporterFilter

MASK = "********************"
_URL_PASSWORD = re.compile(
    r"(?P<head>[a-z][a-z0-9+.\-]*://[^\s:/@'\"<>]*:)(?P<password>[^\s@/'\"<>]+)(?=@)", re.I
)


def development_secret_key(path: Path) -> str:
    """A random key kept in ``path`` (created once, readable by the owner only): the embedded
    mode's sessions survive restarts, and no two checkouts share a key."""
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(secrets.token_urlsafe(50))
    tmp.chmod(0o600)
    try:
        os.link(tmp, path)  # atomic: a concurrent first start keeps the key that won
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return path.read_text().strip()


def _url_password(url: str) -> str:
    try:
        password = urlsplit(url).password
    except ValueError:
        return ""
    return unquote(password) if password else ""


def known_secrets() -> set[str]:
    """Every credential the running configuration holds, in the forms a page may show it."""
    from django.conf import settings

    raw = {
        settings.SECRET_KEY,
        getattr(settings, "ANTHROPIC_API_KEY", ""),
        getattr(settings, "TIMELINE_METRICS_TOKEN", ""),
        _url_password(os.environ.get("DATABASE_URL", "")),
        _url_password(getattr(settings, "CELERY_BROKER_URL", "")),
        _url_password(getattr(settings, "CELERY_RESULT_BACKEND", "")),
        *(str(db.get("PASSWORD") or "") for db in settings.DATABASES.values()),
    }
    forms: set[str] = set()
    for value in raw:
        if value and len(value) >= 4:  # a one-letter "password" would mask half the page
            forms |= {value, html.escape(value), quote(value, safe=""), html.escape(quote(value, safe=""))}
    return forms


def redact(text: str) -> str:
    """``text`` with every known credential and every password inside a URL masked."""
    for secret in sorted(known_secrets(), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return _URL_PASSWORD.sub(lambda m: m["head"] + MASK, text)


class RedactingExceptionReporterFilter(SafeExceptionReporterFilter):
    """Also hides URL settings and environment entries that embed credentials, and masks
    credentials inside any other value (settings, META, frame variables), DEBUG on or off."""

    hidden_settings = re.compile(
        "API|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|AUTHORIZATION|DATABASE_URL|BROKER_URL|RESULT_BACKEND",
        flags=re.IGNORECASE,
    )

    def cleanse_setting(self, key: Any, value: Any) -> Any:
        cleansed = super().cleanse_setting(key, value)
        return redact(cleansed) if isinstance(cleansed, str) else cleansed

    def get_traceback_frame_variables(self, request: Any, tb_frame: Any) -> Any:
        variables = super().get_traceback_frame_variables(request, tb_frame)
        cleansed = []
        for name, value in variables:
            if isinstance(name, str) and self.hidden_settings.search(name):
                value = self.cleansed_substitute
            elif isinstance(value, str):
                value = redact(value)
            cleansed.append((name, value))
        return cleansed


class RedactingExceptionReporter(ExceptionReporter):
    """The last line of defence: the finished page (HTML or text) goes through :func:`redact`, so a
    credential in an exception message or inside a local object's repr is masked too."""

    def get_traceback_html(self) -> SafeString:
        return mark_safe(redact(super().get_traceback_html()))  # masking keeps the page's escaping

    def get_traceback_text(self) -> SafeString:
        return mark_safe(redact(super().get_traceback_text()))
