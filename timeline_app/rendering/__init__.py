"""Pure rendering core: block values, TTL pruning, cache points, formats.

Nothing in this package imports Django, performs I/O or reads the clock; time is passed in.
"""
