"""Writes: every state change goes through a function here (HackSoft style, keyword-only), one
module per noun: ``api_keys``, ``conversations``, ``blocks``, ``messages``, ``contexts``,
``hiding``, ``sources``, ``export``, ``render``, ``compaction`` (and ``summarizers``, which picks
the configured summarizer)."""
