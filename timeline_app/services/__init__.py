"""Writes: every state change goes through a function here (HackSoft style, keyword-only), one
module per noun: ``api_keys``, ``conversations``, ``blocks``, ``messages``, ``contexts``,
``hiding``, ``sources``, ``export``, ``render``, ``render_history`` (one record per render, and
its trimming), ``compaction`` (claim, summarize, apply), ``compaction_requests`` (a compaction
asked for over HTTP, queued for the worker), ``background`` (the sweep and the worker's task body)
and ``summarizers`` (which summarizer the settings configure)."""
