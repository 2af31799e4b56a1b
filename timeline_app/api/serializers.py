"""Input and output serializers of a timeline's sub-paths (blocks, turns, hide, search, sources;
render and compact: ``render_serializers``). Inputs reject unknown fields; outputs produce the
responses and so the schema."""

from __future__ import annotations

import base64
from typing import Any

from django.conf import settings
from rest_framework import serializers
from rest_framework.fields import empty

from timeline_app.api.fields import (
    PYTHON_WHITESPACE,
    Base64Field,
    BlockPathField,
    BlockTextField,
    IsoDateTimeStringField,
    MetaField,
    OptionalBlockPathField,
    StrictCharField,
    StrictSerializer,
    blocks_cap_check,
)
from timeline_app.selectors.blocks import block_is_compacted

TYPE_REGEX = r"^[a-z][a-z0-9_.\-]{0,63}$"
MODEL_REGEX = r"^[A-Za-z0-9][A-Za-z0-9_.:/@\-]{0,99}$"
TURN_ID_REGEX = r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,127}$"
# A started turn's blocks get client ids `turn:<turn_id>:header` and `turn:<turn_id>:att:<name>`,
# stored in 128 characters: a turn id of at most 64 and attachment names of at most 54 fit.
TURN_START_ID_REGEX = r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,63}$"
ATTACHMENT_NAME_REGEX = rf"^[^/\\{PYTHON_WHITESPACE}][^/\\]{{0,53}}$"


# ---------------------------------------------------------------- blocks and turns


class BlockIn(StrictSerializer):
    type = StrictCharField(regex=TYPE_REGEX)
    author = StrictCharField(required=False, allow_blank=True, max_length=64, default="")
    turn_id = StrictCharField(required=False, regex=TURN_ID_REGEX)
    ts = IsoDateTimeStringField(required=False, max_length=40)
    mime = StrictCharField(required=False, allow_blank=True, max_length=128, default="")
    text = BlockTextField(required=False, default="")
    base64 = Base64Field()
    path = OptionalBlockPathField()
    meta = MetaField(required=False, default=dict)
    id = StrictCharField(required=False, max_length=128, help_text="idempotency key")


class BlocksIn(StrictSerializer):
    blocks = BlockIn.many_init(allow_empty=False, max_length=settings.TIMELINE_MAX_BLOCKS_PER_REQUEST)

    def to_internal_value(self, data: Any) -> Any:
        blocks_cap_check(data, limit=settings.TIMELINE_MAX_BLOCKS_PER_REQUEST, per="request")
        return super().to_internal_value(data)


class BlockOut(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    id = serializers.CharField(source="client_id", allow_null=True)
    type = serializers.CharField()
    author = serializers.CharField()
    turn_id = serializers.CharField()
    ts = serializers.CharField()
    mime = serializers.CharField()
    text = serializers.CharField()
    base64 = serializers.SerializerMethodField()
    path = serializers.CharField()
    meta = serializers.DictField()
    hidden = serializers.BooleanField()
    replacement_text = serializers.CharField()
    hidden_reason = serializers.CharField()
    tokens = serializers.IntegerField()

    def get_base64(self, obj: Any) -> str:
        return base64.b64encode(bytes(obj.data)).decode() if obj.data else ""


class BlocksOut(serializers.Serializer[Any]):
    blocks = BlockOut(many=True)


class AttachmentIn(StrictSerializer):
    name = StrictCharField(max_length=54, regex=ATTACHMENT_NAME_REGEX)
    mime = StrictCharField(max_length=128)
    base64 = Base64Field()
    text = BlockTextField(required=False, default="")
    summary = StrictCharField(required=False, allow_blank=True, max_length=2000, default="")


class TurnIn(StrictSerializer):
    turn_id = StrictCharField(required=False, regex=TURN_START_ID_REGEX)
    prompt = BlockTextField()
    ts = IsoDateTimeStringField(required=False, max_length=40)
    attachments = AttachmentIn(many=True, required=False, default=list)


# ---------------------------------------------------------------- hide, read, search, sources


class HideIn(StrictSerializer):
    path = BlockPathField()
    replacement_text = StrictCharField(allow_blank=True, trim_whitespace=False, max_length=20_000)


class UnhideIn(StrictSerializer):
    path = BlockPathField(help_text="the path of the blocks to show again")


class SourceIn(StrictSerializer):
    url = StrictCharField(max_length=2048)
    title = StrictCharField(required=False, allow_blank=True, max_length=1000)
    text = StrictCharField(required=False, allow_blank=True, trim_whitespace=False, max_length=200_000)
    meta = MetaField(required=False)


class SourcesIn(StrictSerializer):
    # What SourceIn(many=True, ...) does; the stubs do not know the list-only max_length.
    sources = SourceIn.many_init(allow_empty=False, max_length=1000)

    def validate_sources(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        urls = [item["url"] for item in value]
        if len(urls) != len(set(urls)):
            raise serializers.ValidationError("the same url appears twice")
        return value


class SourceOut(serializers.Serializer[Any]):
    sid = serializers.IntegerField()
    url = serializers.CharField()
    title = serializers.CharField()
    text = serializers.CharField()
    meta = serializers.DictField()


class SourcesPoolOut(serializers.Serializer[Any]):
    sources_pool = SourceOut(many=True)


class FlagField(serializers.BooleanField):
    """A query flag: ``1``/``true`` or ``0``/``false``."""

    default_empty_html = empty  # absent from the query string: the default, not False

    def to_internal_value(self, data: Any) -> bool:
        if data in ("1", "true"):
            return True
        if data in ("0", "false", ""):
            return False
        self.fail("invalid", input=data)
        raise AssertionError  # fail() raises


LIST_PARAMS = ("type", "turn_id", "hidden", "since_seq", "cursor", "limit")
MAX_BLOCK_PAGE = 200


class BlocksReadQueryIn(serializers.Serializer[Any]):
    path = BlockPathField(
        required=False,
        help_text="a block path, or a sources selector `so:sources_pool[3,5-6]`: read those blocks "
        "(not paginated). Without it: list the context's blocks (with the list parameters)",
    )
    include_hidden = FlagField(
        required=False, help_text="with `path`: include hidden blocks (default 0); not for the list"
    )
    type = StrictCharField(required=False, regex=TYPE_REGEX, help_text="list: only blocks of this type")
    turn_id = StrictCharField(required=False, regex=TURN_ID_REGEX, help_text="list: only this turn's blocks")
    hidden = FlagField(required=False, help_text="list: only hidden (1) or only visible (0) blocks")
    since_seq = serializers.IntegerField(
        required=False, min_value=0, max_value=2**63 - 1, help_text="list: only blocks with a seq above this"
    )
    cursor = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=2**63 - 1,
        help_text="list: `cursor` of the previous page's `next` (the last seq it showed)",
    )
    limit = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_BLOCK_PAGE, help_text="list: page size (default 50)"
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "path" in attrs:
            given = sorted(name for name in LIST_PARAMS if name in attrs)
            if given:
                raise serializers.ValidationError(
                    {name: ["a list parameter: not with path"] for name in given}
                )
        elif "include_hidden" in attrs:
            raise serializers.ValidationError(
                {"include_hidden": ["with path only; the list shows hidden blocks (filter: hidden)"]}
            )
        return attrs


class BlocksReadOut(serializers.Serializer[Any]):
    blocks = BlockOut(many=True)
    sources_pool = SourceOut(many=True, required=False, help_text="for so:sources_pool[…] paths")
    next = serializers.URLField(
        required=False,
        allow_null=True,
        help_text="the next page of the list (same filters), or null on the last one (and for `path`)",
    )


class SearchQueryIn(serializers.Serializer[Any]):
    q = StrictCharField(
        max_length=500,
        regex=f"[^{PYTHON_WHITESPACE}]",
        help_text=(
            'words to find (PostgreSQL: web search syntax: `"a phrase"`, `or`, `-word`). A query '
            "with no word (only punctuation) or no word that must occur (only negated words, or an "
            "`or` with a negated side) is a 400: it would read every block"
        ),
    )


class SearchHitOut(serializers.Serializer[Any]):
    """From a ``Block``; ``context``: ``query`` and ``window`` (``selectors.timeline_window``)."""

    seq = serializers.IntegerField()
    type = serializers.CharField()
    turn_id = serializers.CharField()
    path = serializers.CharField()
    hidden = serializers.BooleanField()
    compacted = serializers.SerializerMethodField(
        help_text="not in the visible window: behind the latest summary, or cleared (DELETE …/messages/)"
    )
    snippet = serializers.SerializerMethodField()

    def get_compacted(self, row: Any) -> bool:
        return block_is_compacted(seq=row.seq, type=row.type, window=self.context["window"])

    def get_snippet(self, row: Any) -> str:
        return snippet(row.text, self.context["query"])


def snippet(text: str, query: str, width: int = 160) -> str:
    lowered = text.lower()
    positions = [lowered.find(word.lower()) for word in query.split()]
    found = [p for p in positions if p >= 0]
    start = max(0, min(found) - width // 3) if found else 0
    piece = text[start : start + width].replace("\n", " ")
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


class SearchOut(serializers.Serializer[Any]):
    results = SearchHitOut(many=True)
