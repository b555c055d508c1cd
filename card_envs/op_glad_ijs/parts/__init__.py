"""Op Glad IJs' own helpers: the deck (``deck``), the pile kernels (``piles``) and their Python
readers (``linked``), the resolution of a window (``resolve``) and the picture's pieces
(``picture``)."""
