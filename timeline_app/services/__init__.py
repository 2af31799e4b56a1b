"""Writes: every state change goes through a function here (HackSoft style, keyword-only), one
module per noun: ``api_keys``, ``conversations``, ``blocks``, ``messages``, ``contexts``,
``hiding``, ``sources``, ``export``, ``render``, ``render_history`` (one record per render, and
its trimming), ``usage`` (forecasts, usage reports) and the ``compaction`` package (one module
per use case: run, request, revert, sweep, nudge; see its ``__init__``)."""
