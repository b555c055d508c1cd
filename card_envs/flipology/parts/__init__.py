"""Flipology's own helpers: the deck, deals, effects and rounds of the rules, the features'
visible state, and the picture's pieces with the scores it prints."""
