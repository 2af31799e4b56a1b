"""The domain vocabulary (pure: no Django, no I/O, no clock). Its modules: docs/architecture.md "Packages"."""
