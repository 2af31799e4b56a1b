"""How many examples a property test runs.

`make test` runs the full count. Two runs take a fifth of it (at least 10):

* the inner loop, `make test-fast` (``HYPOTHESIS_PROFILE=dev``: Hypothesis' ``dev`` profile,
  registered in ``tests/conftest.py``, which also runs 10 examples for properties that set no
  count);
* mutmut (`make mutation`, ``MUTANT_UNDER_TEST`` set), where every surviving mutant reruns every
  property test that reaches it: a mutant that breaks a property breaks it on most inputs.
"""

from __future__ import annotations

import os


def examples(count: int) -> int:
    few = "MUTANT_UNDER_TEST" in os.environ or os.environ.get("HYPOTHESIS_PROFILE") == "dev"
    return max(10, count // 5) if few else count
