"""The compaction engine (pure): cut points, the planner, the digest, summaries, strategies.
Its modules: docs/architecture.md "Packages"."""
