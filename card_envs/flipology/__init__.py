"""Flipology (``flipology_v0``)."""
