"""The domain vocabulary (pure): block values and paths, settings, token counts and costs, block
text, times, contributions, OpenAI-format messages and their validation.

Nothing in this package imports Django, performs I/O or reads the clock; ``rendering`` (TTL, cache
points, formats, pipeline, prefix) and ``compaction`` build on it.
"""
