"""Op Glad IJs (Gorilla auf Eis): slap an animal together with its habitat."""

from card_envs.core.manifest import lazy_submodules

__getattr__ = lazy_submodules(__name__)  # card_envs.op_glad_ijs.env without an import first
