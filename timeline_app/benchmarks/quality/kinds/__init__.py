"""The five kinds of ``bench quality`` sessions (pure, seeded): the templates each draws from.

Every value an agent would meet (identifiers, instructions, requests, decisions, errors, file
paths, plan steps, attachments, the records of a tool's listing) is a template with random parts.
One module per kind; :mod:`.base` holds the interface and the shared random parts.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from timeline_app.benchmarks.quality.kinds.base import WORDS, Attachment, Kind
from timeline_app.benchmarks.quality.kinds.coding import Coding
from timeline_app.benchmarks.quality.kinds.data import Data
from timeline_app.benchmarks.quality.kinds.research import Research
from timeline_app.benchmarks.quality.kinds.support import Support
from timeline_app.benchmarks.quality.kinds.travel import Travel

KIND_CLASSES: dict[str, Callable[[random.Random], Kind]] = {
    "support": Support,
    "coding": Coding,
    "travel": Travel,
    "research": Research,
    "data": Data,
}

__all__ = ["KIND_CLASSES", "WORDS", "Attachment", "Coding", "Data", "Kind", "Research", "Support", "Travel"]
