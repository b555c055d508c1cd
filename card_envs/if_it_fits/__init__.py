"""If It Fits: build cardboard boxes from cards, fill them with toys, put your cats in them."""

from card_envs.core.manifest import lazy_submodules

__getattr__ = lazy_submodules(__name__)  # card_envs.if_it_fits.env without an import first
