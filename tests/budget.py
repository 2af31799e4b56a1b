"""How many examples a property test runs.

Under mutmut (`make mutation`, ``MUTANT_UNDER_TEST`` set) every surviving mutant reruns every
property test that reaches it, so there a property runs a fifth of its examples (at least 10): a
mutant that breaks a property breaks it on most inputs, and the full count runs in `make test`.
"""

from __future__ import annotations

import os


def examples(count: int) -> int:
    return max(10, count // 5) if "MUTANT_UNDER_TEST" in os.environ else count
