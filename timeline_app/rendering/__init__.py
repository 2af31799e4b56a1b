"""Pure rendering rules, built on the vocabulary of ``timeline_app.domain``: TTL pruning (``ttl``),
cache points (``cache_points``), the Anthropic / OpenAI / text formats (``formats``), the render
pipeline (``pipeline``), the cache explainer's prefix fingerprints (``prefix``), the providers'
native request formats (``native``) and a recorded render rebuilt exactly (``replay``).

Nothing in this package imports Django, performs I/O or reads the clock; time is passed in.
"""
