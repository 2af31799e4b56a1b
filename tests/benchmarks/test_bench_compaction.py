"""``manage.py bench compaction`` runs end to end (numbers are for people, not asserted)."""

import pytest

from timeline_bench import compaction


@pytest.mark.django_db
def test_the_compaction_bench_prints_both_cases_and_their_ratio():
    lines: list[str] = []
    compaction.run(lines.append, samples=1, llm_seconds=0.0)
    text = "\n".join(lines)
    assert "kept it under the soft threshold" in text
    assert "compacts by itself" in text and "(x" in text
