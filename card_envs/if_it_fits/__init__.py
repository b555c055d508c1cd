"""If It Fits: build cardboard boxes from cards, fill them with toys, put your cats in them."""
