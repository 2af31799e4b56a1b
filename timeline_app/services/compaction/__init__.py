"""Compaction in the shell: one package, cut by use case (docs/architecture.md)."""
