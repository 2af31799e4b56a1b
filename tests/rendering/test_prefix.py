"""The cache explainer's packed fingerprint (rendering/prefix.py), tested on the pure values: what
a render record keeps must say the same as comparing the two renders segment by segment."""

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from timeline_app.domain.blocks import Block
from timeline_app.rendering.prefix import (
    MAX_CHECKPOINTS,
    PreviousRender,
    build_prefix,
    explain_cache,
    pack_seqs,
    segment_key,
    unpack_seqs,
)

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


# Seqs are BigInteger and never negative: every delta fits a signed 64-bit integer.
@given(st.lists(st.integers(min_value=0, max_value=2**63 - 1), max_size=200))
def test_seqs_pack_and_unpack_to_the_same_seqs(seqs):
    assert unpack_seqs(pack_seqs(seqs)) == tuple(seqs)


def test_consecutive_seqs_pack_small():
    packed = pack_seqs(range(1, 20_001))
    assert len(packed) < 1_000
    assert unpack_seqs(packed)[-1] == 20_000


def _prefix(blocks):
    return build_prefix(
        "anthropic|0|", [(b, segment_key(b, f"{b.text}|{b.hidden}"), i) for i, b in enumerate(blocks)]
    )


def _previous(blocks, *, at=NOW - timedelta(seconds=10)):
    prefix = _prefix(blocks)
    return PreviousRender(
        at=at,
        settings_key="k",
        latest_compaction_id=None,
        digests=prefix.packed_digests(),
        seqs=prefix.packed_seqs(),
    )


def _bounded(blocks, *, at=NOW - timedelta(seconds=10)):
    """What a render record now keeps (``Prefix.fingerprint``), read back as the selector does."""
    print_ = _prefix(blocks).fingerprint()
    return PreviousRender(
        at=at,
        settings_key="k",
        latest_compaction_id=None,
        digests=print_.digests,
        seqs=print_.seq_digests,
        stride=print_.stride,
        segments=print_.count,
    )


def _explain(previous, after):
    return explain_cache(
        previous=previous,
        current=_prefix(after),
        now=NOW,
        ttl_seconds=300,
        settings_key="k",
        latest_compaction_id=None,
    )


def _changed(before, change, at):
    n = len(before)
    after = list(before)
    if change == "append":
        after.append(Block(seq=10**6, type="react.notes", text="new", tokens=5))
    elif change == "hide" and n:
        i = at % n
        after[i] = after[i].hide(replacement_text="[pruned]", reason="ttl", replacement_tokens=1)
    elif change == "drop_tail" and n:
        after = after[: at % n]
    elif change in ("insert", "hide_and_insert") and n:
        i = at % n
        after.insert(i, Block(seq=10**6 + 1, type="react.notes", text="inserted", tokens=7))
        if change == "hide_and_insert" and i + 1 < len(after):
            after[i + 1] = after[i + 1].hide(replacement_text="[pruned]", reason="ttl", replacement_tokens=1)
    elif change == "hide_first_then_insert" and n:
        i = at % n
        after[i] = after[i].hide(replacement_text="[pruned]", reason="ttl", replacement_tokens=1)
        after.insert(min(i + 1, len(after)), Block(seq=10**6 + 2, type="react.notes", text="x", tokens=7))
    return after


CHANGES = ["append", "hide", "drop_tail", "insert", "same", "hide_and_insert", "hide_first_then_insert"]


@settings(max_examples=examples(200), deadline=None)
@given(
    n=st.integers(min_value=0, max_value=MAX_CHECKPOINTS),
    change=st.sampled_from(CHANGES),
    at=st.integers(min_value=0, max_value=10**6),
)
def test_the_bounded_record_answers_exactly_as_a_digest_per_segment_up_to_its_checkpoint_count(n, change, at):
    before = _blocks(n)
    after = _changed(before, change, at)
    assert _explain(_bounded(before), after) == _explain(_previous(before), after)


@settings(max_examples=examples(60), deadline=None)
@given(
    n=st.integers(min_value=MAX_CHECKPOINTS + 1, max_value=20_000),
    change=st.sampled_from(CHANGES),
    at=st.integers(min_value=0, max_value=10**6),
)
def test_past_its_checkpoint_count_the_record_finds_the_changed_chunk(n, change, at):
    """Beyond 1,024 segments: the same reason (but a hide sharing its chunk with an inserted
    block), the first change placed at the start of its chunk, the reuse counted up to there."""
    before = _blocks(n, tokens=1)
    after = _changed(before, change, at)
    stride = _prefix(before).fingerprint().stride
    bounded, exact = _explain(_bounded(before), after), _explain(_previous(before), after)
    if exact.reason == "hidden" and bounded.reason == "other":
        i = exact.first_changed_index
        assert change == "hide_first_then_insert" and (i + 1) // stride == i // stride
    else:
        assert bounded.reason == exact.reason
    if exact.reason == "appended_only":
        assert bounded == exact
        return
    index = bounded.first_changed_index
    if exact.first_changed_index is None:  # the current prefix is a strict prefix of the previous
        assert index is None or len(after) - stride < index < len(after)
    else:
        assert exact.first_changed_index - stride < index <= exact.first_changed_index
        assert index % stride == 0
    if index is not None:
        assert bounded.reused_prefix_tokens == sum(b.effective_tokens for b in after[:index])
    assert bounded.reused_prefix_tokens <= exact.reused_prefix_tokens


def test_a_record_stays_under_16_kib_whatever_the_window():
    for n in (10, 1_024, 1_025, 50_000):
        kept = _prefix(_blocks(n)).fingerprint()
        assert len(kept.digests) + len(kept.seq_digests) <= 16 * 1024
    assert len(_prefix(_blocks(50_000)).packed_digests()) == 400_000, "what a digest per segment cost"


def _blocks(n, *, tokens=10):
    return [Block(seq=i, type="react.notes", text=f"note {i}", tokens=tokens + i) for i in range(1, n + 1)]


@settings(max_examples=examples(200), deadline=None)
@given(
    n=st.integers(min_value=0, max_value=60),
    change=st.sampled_from(["append", "hide", "drop_tail", "insert", "same"]),
    at=st.integers(min_value=0, max_value=59),
)
def test_reuse_and_first_change_match_a_segment_by_segment_comparison(n, change, at):
    before = _blocks(n)
    after = list(before)
    if change == "append":
        after.append(Block(seq=n + 1, type="react.notes", text="new", tokens=5))
    elif change == "hide" and n:
        i = at % n
        after[i] = after[i].hide(replacement_text="[pruned]", reason="ttl", replacement_tokens=1)
    elif change == "drop_tail" and n:
        after = after[: at % n]
    elif change == "insert" and n:
        i = at % n
        after.insert(i, Block(seq=10_000, type="react.notes", text="inserted", tokens=7))
    current = _prefix(after)
    report = explain_cache(
        previous=_previous(before),
        current=current,
        now=NOW,
        ttl_seconds=300,
        settings_key="k",
        latest_compaction_id=None,
    )
    common = 0
    while common < min(len(before), len(after)) and before[common] == after[common]:
        common += 1
    assert report.reused_prefix_tokens == sum(b.effective_tokens for b in after[:common])
    assert report.first_changed_index == (common if common < len(after) else None)
    if change == "hide" and n:
        assert report.reason == "hidden"
    if change in ("append", "same") or (change == "drop_tail" and n == 0):
        assert report.reason == "appended_only"


def test_expired_cache_reuses_nothing_but_still_finds_the_change():
    blocks = _blocks(5)
    report = explain_cache(
        previous=_previous(blocks, at=NOW - timedelta(seconds=301)),
        current=_prefix([*blocks, *_blocks(0)]),
        now=NOW,
        ttl_seconds=300,
        settings_key="k",
        latest_compaction_id=None,
    )
    assert (report.reason, report.reused_prefix_tokens) == ("ttl_expired", 0)


def test_a_record_without_seqs_for_a_segment_says_none():
    previous = PreviousRender(
        at=NOW, settings_key="k", latest_compaction_id=None, digests=b"\0" * 16, seqs=pack_seqs([5])
    )
    assert (previous.count, previous.seq_at(0), previous.seq_at(1)) == (2, 5, None)
    assert (
        PreviousRender(at=NOW, settings_key="k", latest_compaction_id=None, digests=b"", seqs=b"").seq_at(0)
        is None
    )


def test_the_cache_expires_strictly_after_the_ttl_and_always_with_a_ttl_of_zero():
    blocks = _blocks(3)

    def reason(age: timedelta, ttl: int) -> str:
        return explain_cache(
            previous=_previous(blocks, at=NOW - age),
            current=_prefix(blocks),
            now=NOW,
            ttl_seconds=ttl,
            settings_key="k",
            latest_compaction_id=None,
        ).reason

    assert reason(timedelta(seconds=300), 300) == "appended_only"
    assert reason(timedelta(seconds=300, microseconds=1), 300) == "ttl_expired"
    assert reason(timedelta(milliseconds=500), 1) == "appended_only"
    assert reason(timedelta(0), 0) == "ttl_expired"


@given(st.lists(st.integers(min_value=0, max_value=2**40), min_size=0, max_size=1_200, unique=True))
@settings(max_examples=examples(40))
def test_the_one_segment_a_chunk_fingerprint_is_the_general_one(seqs):
    """``fingerprint``'s stride-1 path (remembered single-seq digests) writes the bytes the chunked
    path writes: a digest per segment, a seq digest per segment."""
    from timeline_app.rendering.prefix import Fingerprint, chunk_seq_digest, stride_for

    blocks = [Block(seq=seq, type="react.notes", text=f"n{seq}") for seq in sorted(seqs)]
    prefix = _prefix(blocks)
    fast = prefix.fingerprint()
    stride = stride_for(len(prefix.digests))
    ends = [min((j + 1) * stride, len(prefix.digests)) - 1 for j in range(-(-len(prefix.digests) // stride))]
    general = Fingerprint(
        count=len(prefix.digests),
        stride=stride,
        digests=b"".join(prefix.digests[end] for end in ends),
        seq_digests=b"".join(
            chunk_seq_digest(prefix.seqs[j * stride : end + 1]) for j, end in enumerate(ends)
        ),
        seed=prefix.seed,
    )
    assert fast == general
