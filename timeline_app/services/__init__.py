"""Writes: every state change goes through a keyword-only function here, one module per noun.
Its modules: docs/architecture.md "Packages"."""
