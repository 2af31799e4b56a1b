"""The rendering rules (pure, on the ``domain`` vocabulary; time is passed in). Its modules:
docs/architecture.md "Packages"."""
