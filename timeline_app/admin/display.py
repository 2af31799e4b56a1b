"""How the admin shows things, in one place: times (one UTC format), statuses and pruning in
words, block and summary labels, and the links between the admin's pages. No reads here."""

from __future__ import annotations

from datetime import UTC, datetime

from django.contrib.admin.utils import quote
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode

from timeline_app.domain.times import parse_iso
from timeline_app.models import Conversation, Timeline

# The one timestamp format of the admin: every time is shown in UTC, to the second, and says so.
UTC_FORMAT = "%Y-%m-%d %H:%M:%S UTC"
NOTHING = "—"

# The TTL pruning statuses of ``rendering.ttl`` as a support engineer reads them.
PRUNING_WORDS = {
    "disabled": "off: this conversation's cache TTL is 0",
    "armed": "not yet: never rendered, the first render starts the cache clock",
    "fresh": "nothing to prune: the prompt cache is still warm",
    "no_effect": "cache expired, but no block is old and bulky enough to prune",
    "pruned": "cache expired: old bulky blocks are pruned",
}


def utc(value: datetime | str | None) -> str:
    """A time in the admin's one format. Strings are ISO-8601 times as clients gave them (block
    ``ts``); one that does not parse is shown as given."""
    if value is None or value == "":
        return NOTHING
    moment = value
    if isinstance(moment, str):
        try:
            moment = parse_iso(moment)
        except ValueError:
            return value if isinstance(value, str) else NOTHING
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime(UTC_FORMAT)


def pruning_words(status: str) -> str:
    return PRUNING_WORDS.get(status, status)


def status_badge(status: str | None) -> str:
    if not status:
        return NOTHING
    return format_html('<span class="tl-status tl-status-{}">{}</span>', status, status)


def hidden_label(*, hidden: bool, reason: str) -> str:
    """Empty for a normal block: only a hidden one says so, with its reason."""
    if not hidden:
        return ""
    return format_html('<span class="tl-badge tl-badge-hidden">hidden · {}</span>', reason or "no reason")


def seq_label(seq: int | None) -> str:
    """A block as people refer to it: by its seq in its context (never the database id)."""
    return NOTHING if seq is None else f"seq {seq}"


# ---------------------------------------------------------------- links


def block_change_url(block_pk: int) -> str:
    return reverse("admin:timeline_app_block_change", args=[quote(block_pk)])


def block_changelist_url(*, timeline: Timeline, **params: str) -> str:
    query = {"timeline__id__exact": str(timeline.pk), **params}
    return reverse("admin:timeline_app_block_changelist") + "?" + urlencode(query)


def changed_block_url(*, timeline: Timeline, path: str) -> str:
    """The block list narrowed to a render's first changed block: by its path, or by its seq for a
    block without a path (the explainer names those ``type#seq``)."""
    kind, _, seq = path.rpartition("#")
    if kind and seq.isdecimal() and ":" not in path:
        return block_changelist_url(timeline=timeline, seq__exact=seq)
    return block_changelist_url(timeline=timeline, q=path)


def conversation_url(conversation: Conversation, *, context: str = "", page: int | None = None) -> str:
    url = reverse("admin:timeline_app_conversation_change", args=[quote(conversation.pk)])
    params = {}
    if context and context != Timeline.DEFAULT_NAME:
        params["context"] = context
    if page and page > 1:
        params["page"] = str(page)
    return url + ("?" + urlencode(params) if params else "")


def conversation_link(conversation: Conversation) -> str:
    return format_html('<a href="{}">{}</a>', conversation_url(conversation), conversation.public_id)


def conversation_search_url(public_id: str) -> str:
    return reverse("admin:timeline_app_conversation_changelist") + "?" + urlencode({"q": public_id})
