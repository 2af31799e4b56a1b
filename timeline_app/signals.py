"""Compaction hooks of seed 002, as Django signals.

* ``on_before_compaction`` — keyword ``payload={"before_tokens"}``
* ``on_after_compaction`` — keyword ``payload={"before_tokens", "after_tokens", "compacted_tokens"}``

Both also send ``timeline`` (the ``Timeline`` row) and ``trigger``. Receivers run after the
compaction's own transaction, so a failing receiver never undoes a compaction.
"""

from django.dispatch import Signal

on_before_compaction = Signal()
on_after_compaction = Signal()
