"""``bench quality`` as a regression guard (issue 24): a small seeded subset (five sessions, one of
each kind, cut to 15 planned turns, each played on until it has compacted twice) of each phrasing
set (the generated templates and the independent transcripts set, issue 37) runs through the API
with the extractive summarizer; a probe type whose visible share drops below its floor fails.

The floor is the issue's goal (docs/quality.md has the full run): a change to the generator, the
summarizer or the render that loses working state shows up here. Deterministic: the same seed
gives the same sessions, and nothing in a render depends on the clock or on random ids.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from timeline_bench import quality
from timeline_bench.quality.report import ACTION_GOAL, GOALS, summarize
from timeline_bench.quality.runner import QualitySettings, SessionRun
from timeline_bench.quality.sessions import PENDING_STEP, PHRASINGS, PROBE_TYPES, Probe, kinds

pytestmark = pytest.mark.django_db

# The floors are the goals: the extractive summary meets every one on this subset.
FLOORS = GOALS


@pytest.fixture(scope="module", params=PHRASINGS)
def report(request, django_db_setup, django_db_blocker):  # type: ignore[no-untyped-def]
    with django_db_blocker.unblock():
        results = quality.run_sessions(
            quality.QualityOptions(seed=24, sessions=5, max_turns=15), phrasing=request.param
        )
    settings = QualitySettings()
    return results, summarize(
        results, summary_max_tokens=settings.summary_max_tokens, max_tokens=settings.max_tokens
    )


@pytest.mark.parametrize("probe_type", PROBE_TYPES)
def test_visible_share_stays_at_or_above_its_floor(report, probe_type: str) -> None:  # type: ignore[no-untyped-def]
    cell = report[1]["probes"][probe_type]["all"]
    assert cell["checks"] > 0, probe_type
    assert cell["visible"] >= FLOORS[probe_type], (probe_type, cell)


def test_an_artifacts_last_action_stays_on_its_line(report) -> None:  # type: ignore[no-untyped-def]
    cell = report[1]["probes"]["artifact"]["all"]
    assert cell["with_action"] >= ACTION_GOAL, cell


def test_every_probe_is_recoverable_by_search_or_read(report) -> None:  # type: ignore[no-untyped-def]
    for probe_type, row in report[1]["probes"].items():
        assert row["all"]["recoverable"] == 1.0, (probe_type, row["all"])


def test_every_session_compacted_twice_within_the_budgets(report) -> None:  # type: ignore[no-untyped-def]
    results, numbers = report
    assert sorted(r.kind for r in results) == sorted(kinds(results[0].phrasing))
    assert all(r.compactions >= 2 for r in results)
    tokens = numbers["tokens"]["all"]
    assert tokens["summary_tokens_max"] <= QualitySettings().summary_max_tokens
    assert tokens["renders_over_max_tokens"] == 0


def test_a_plans_steps_are_not_due_once_a_later_version_of_it_has_none_pending() -> None:
    """A plan update that marks its last step done plants no probe; the steps an older version
    listed as pending are done then, and a summary must not be asked to keep them."""
    probe = Probe(
        type=PENDING_STEP, kind="coding", values=("Run the full test suite",), origin=(1, "plan"), key="p@1"
    )
    run = SessionRun.__new__(SessionRun)
    run.session = SimpleNamespace(probes=[probe])  # type: ignore[assignment]
    run.first_covered, run.compactions = {}, 1
    run.seq_of = {(1, "plan"): (5, "ar:t1.react.plan")}
    assert run._due(2, first_retained=20) == [probe]
    run.seq_of[(2, "plan")] = (9, "ar:t2.react.plan")  # the same plan, every step done
    assert run._due(2, first_retained=20) == []
