"""The benchmarks (``manage.py bench …``) and the dev commands (``setup_demo``): a Django app beside
the server, in the checkout but not in the server wheel (docs/architecture.md)."""
