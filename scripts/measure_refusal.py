"""Time and peak memory of two refused requests, in process (issue 30, defect 4; the figures of
docs/api.md "Limits" and of the commit that made them cheap).

Run against a throwaway database (it migrates it and adds a tenant):
    DATABASE_URL=sqlite:////tmp/refusal.sqlite3 SECRET_KEY=x DEBUG=1 .venv/bin/python scripts/measure_refusal.py meta
    … scripts/measure_refusal.py usage

``meta``: one block whose ``meta`` has 2,000,000 keys (38 MB); ``usage``: a usage report with
2,000,000 junk keys (26 MB). Printed: the status, seconds (one request, untraced) and the peak
of Python allocations during a second request (tracemalloc), which includes the test client's
copy of the body.
"""

from __future__ import annotations

import json
import os
import sys
import time
import tracemalloc

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django

django.setup()
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from timeline_app import tenancy  # noqa: E402
from timeline_app.models import Block  # noqa: E402
from timeline_app.services.api_keys import api_key_create  # noqa: E402
from timeline_app.services.conversations import conversation_create  # noqa: E402

KEYS = 2_000_000


def main(kind: str) -> None:
    call_command("migrate", verbosity=0)
    with tenancy.tenant_scope_all():
        key, raw = api_key_create(tenant_name=f"refusal-{os.getpid()}")
        conversation_create(tenant=key.tenant, public_id="m")
    if kind == "meta":
        meta = "{" + ",".join(f'"key_{i:010d}":0' for i in range(KEYS)) + "}"
        body = ('{"blocks":[{"type":"react.notes","text":"x","meta":' + meta + "}]}").encode()
        url = "/api/v1/conversations/m/blocks/"
    else:
        junk = "{" + ",".join(f'"k{i:07d}":1' for i in range(KEYS)) + "}"
        body = ('{"model":"claude-sonnet-4-5","usage":' + junk + "}").encode()
        url = "/api/v1/conversations/m/renders/rnd_x/usage/"
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    client.post(url, b"{}", content_type="application/json")  # warm: imports, URL resolving
    start = time.perf_counter()
    response = client.post(url, body, content_type="application/json")
    seconds = time.perf_counter() - start
    tracemalloc.start()
    client.post(url, body, content_type="application/json")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(
        json.dumps(
            {
                "kind": kind,
                "body_mb": round(len(body) / 1e6, 1),
                "status": response.status_code,
                "seconds": round(seconds, 2),
                "peak_traced_mb": round(peak / 1e6),
                "stored_blocks": Block.objects.filter(tenant=key.tenant).count(),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "meta")
