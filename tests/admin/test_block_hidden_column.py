"""The block list's Hidden column is empty for a normal block (no red "no" icon) and names the
reason for a hidden one; the block page says the same."""

from __future__ import annotations

import re

import pytest

from tests.admin import urls
from timeline_app.models import Block


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr><th class="field-seq">.*?</tr>', html, flags=re.S)


def _content(html: str) -> str:
    return html.split('<div id="content"', 1)[1]


@pytest.mark.django_db
def test_normal_blocks_show_nothing_in_the_hidden_column(support, compacted):
    _, timeline = compacted
    html = support.get(urls.changelist("block"), {"timeline__id__exact": timeline.pk}).content.decode()
    rows = _rows(html)
    assert len(rows) == Block.objects.filter(timeline=timeline).count()
    normal = [r for r in rows if "tl-badge-hidden" not in r]
    hidden = [r for r in rows if "tl-badge-hidden" in r]
    assert len(hidden) == 2 and all("hidden · ttl" in r for r in hidden)
    assert normal and not any("icon-no" in r or "icon-yes" in r or 'alt="False"' in r for r in rows)
    assert all('<td class="field-hidden_display">-</td>' in r for r in normal)


@pytest.mark.django_db
def test_block_page_shows_no_alarm_for_a_normal_block(support, compacted):
    _, timeline = compacted
    normal = Block.objects.filter(timeline=timeline, hidden=False).first()
    hidden = Block.objects.filter(timeline=timeline, hidden=True).first()
    normal_page = _content(support.get(urls.change("block", normal.pk)).content.decode())
    hidden_page = _content(support.get(urls.change("block", hidden.pk)).content.decode())
    assert "icon-no" not in normal_page and "tl-badge-hidden" not in normal_page
    assert "hidden · ttl" in hidden_page and "tl-badge-hidden" in hidden_page
