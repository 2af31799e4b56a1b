"""The API's one JSON renderer: sorted keys and UTF-8 kept as is, so the same stored blocks render
to the same bytes (DESIGN §4 "byte-stable"; ``rendering.formats.stable_json`` is the same rule)."""

from __future__ import annotations

import json
from typing import Any

from rest_framework.renderers import JSONRenderer


class StableJSONRenderer(JSONRenderer):
    ensure_ascii = False

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        if data is None:
            return b""
        return self.text(data).encode()

    def text(self, data: Any) -> str:
        """``data`` as the body's JSON text: the streamed export writes its parts with this."""
        text = json.dumps(
            data,
            cls=self.encoder_class,
            sort_keys=True,
            ensure_ascii=False,
            allow_nan=not self.strict,
            separators=(",", ":"),
        )
        # Like DRF's renderer: U+2028/U+2029 escaped, so the body is valid JavaScript too.
        return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
