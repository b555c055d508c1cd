"""Isflak: penguins slide over a 5x7 grid of cards and take the floes they leave."""
