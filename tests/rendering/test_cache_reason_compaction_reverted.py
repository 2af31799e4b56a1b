"""Issue 35: the cache explainer names the first render after a revert ``compaction_reverted``
(the window's summary seq went down, or went away while the window reaches back before it)."""

from __future__ import annotations

from timeline_app.rendering.prefix import CACHE_REASONS, compaction_reverted


def test_it_is_listed_right_after_compacted():
    assert CACHE_REASONS.index("compaction_reverted") == CACHE_REASONS.index("compacted") + 1


def test_a_newer_summary_is_a_compaction_and_an_older_one_a_revert():
    assert not compaction_reverted(40, 55, frozenset({30, 31, 55}))
    assert compaction_reverted(55, 40, frozenset({30, 31, 40}))
    assert not compaction_reverted(None, 40, frozenset({30, 40}))


def test_no_summary_any_more_is_a_revert_only_when_the_window_reaches_back_before_it():
    assert compaction_reverted(55, None, frozenset({1, 2, 56}))  # reverted to the whole context
    assert compaction_reverted(55, None, frozenset({54}))  # boundary: one seq before the summary
    assert not compaction_reverted(55, None, frozenset({56, 57}))  # a clear() after the summary
    assert not compaction_reverted(55, None, frozenset())  # cleared, nothing since
    assert not compaction_reverted(55, None, None)
