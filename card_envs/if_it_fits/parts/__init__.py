"""If It Fits' own helpers: the deck, the table kernels, the turn sequence, the features'
workspace and estimates, and the pieces of the picture."""
