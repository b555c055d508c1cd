"""Slide's own helpers: ``estimate`` (the heuristic's expected final points of a grid)."""
