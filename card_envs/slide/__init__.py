"""Slide: push cards into a 4x4 grid, pairs vanish, lowest total wins."""
