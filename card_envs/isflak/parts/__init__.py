"""Isflak's own helpers: the board's ray tables (:mod:`.board`), the cards (:mod:`.deck`) and
the Python accessors of the state array (:mod:`.state`)."""
