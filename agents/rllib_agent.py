"""A policy trained with RLlib (:mod:`card_envs.rl.rllib`) as an arena agent:
``"rllib:path/to/checkpoint"`` (or ``"rllib:path=...,module=main,deterministic=False"``).

Needs the ``rllib`` extra (``ray[rllib]``, torch); ray is imported only when such an agent is
built. ``path`` is an algorithm checkpoint (``Algorithm.save``: the module is read from
``learner_group/learner/rl_module/<module>``) or an RLModule checkpoint folder itself. The
module is loaded with RLlib's ``RLModule.from_checkpoint`` (it names its class by import path,
``card_envs.rl.rllib.module``, so this module never imports the RL layer) and queried with
``forward_inference`` on the observation dict ``{"observation", "action_mask"}`` (RLlib's
``Columns.OBS``); its masked logits (``Columns.ACTION_DIST_INPUTS``) give the greedy action,
masked here again, so only a legal action is ever returned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from card_envs.agents.base import Agent, legal_actions
from card_envs.agents.params import Param, check_params
from card_envs.core.registry import env_class

_EXTRA = "the rllib agent needs the rllib extra: pip install 'card-envs[rllib]'"


def module_path(path: str | Path, module: str = "main") -> Path:
    """The RLModule folder of ``path``: an algorithm checkpoint or a module folder
    (``FileNotFoundError`` naming what was looked for). ``"main"`` (the multi-agent runs'
    learner) also finds the learner of a batched run, RLlib's ``"default_policy"``."""
    p = Path(path)
    # "main" also finds a single-agent checkpoint's one module (RLlib's "default_policy")
    names = (module, "default_policy") if module == "main" else (module,)
    for name in names:
        for cand in (p / "learner_group" / "learner" / "rl_module" / name, p / name, p):
            if (cand / "class_and_ctor_args.pkl").is_file() and \
                    (cand / "module_state.pkl").exists():
                return cand
    raise FileNotFoundError(f"rllib agent: no RLModule {module!r} in {str(p)!r} (an "
                            "Algorithm.save() checkpoint folder, e.g. runs/slide_rllib/final, "
                            "or an RLModule checkpoint folder)")


def load_module(path: str | Path, module: str = "main") -> Any:
    """The RLModule ``module`` of checkpoint ``path`` (on CPU, in eval mode)."""
    try:
        from ray.rllib.core.rl_module.rl_module import RLModule
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError(_EXTRA) from e
    mod = RLModule.from_checkpoint(str(module_path(path, module).resolve()))
    mod.eval()
    return mod


class RLlibAgent(Agent):
    """Plays the masked greedy action of an RLlib RLModule (``deterministic=False``: samples
    its masked distribution with the agent's own seeded RNG, ``self.rng``)."""

    name = "rllib"
    params: ClassVar[dict[str, Param]] = {
        "path": Param("str", doc="an RLlib checkpoint folder", file=True),
        "module": Param("str", doc="the RLModule id in the checkpoint (default main)",
                        optional=False),
        "deterministic": Param("bool", doc="greedy (True) or sampled moves", optional=False),
        "rl_module": Param("object", doc="a loaded RLModule", spec=False),
    }

    def __init__(self, env_id: str, seed: int | None = None, path: str | None = None,
                 module: str = "main", deterministic: bool = True, rl_module: Any = None,
                 **options: Any) -> None:
        p = check_params(type(self), {"path": path, "module": module,
                                      "deterministic": deterministic})
        path, module, deterministic = p["path"], p["module"], p["deterministic"]
        super().__init__(env_id, seed, **options)
        if rl_module is None:
            if not path:
                raise ValueError("the rllib agent needs a checkpoint: 'rllib:path/to/checkpoint'")
            rl_module = load_module(path, module)
        try:
            import torch
            from ray.rllib.core.columns import Columns
        except ImportError as e:  # pragma: no cover - depends on the install
            raise ImportError(_EXTRA) from e
        self._torch, self._obs_key = torch, Columns.OBS
        self._logits_key = Columns.ACTION_DIST_INPUTS
        self.rl_module, self.path, self.module = rl_module, path, module
        self.deterministic = bool(deterministic)
        known = env_class(env_id).game_class.option_specs()
        game = env_class(env_id).game_class(**{k: v for k, v in options.items() if k in known})
        space = rl_module.observation_space
        shape = tuple(space["observation"].shape) if hasattr(space, "spaces") else None
        n = getattr(rl_module.action_space, "n", None)
        if shape != (game.obs_size,) or n != game.num_actions:
            raise ValueError(f"rllib module spaces {shape}/{n} do not match {env_id} with "
                             f"{game.num_players} players ({game.obs_size}/{game.num_actions})")

    def logits(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The module's (masked) logits for one observation."""
        torch = self._torch
        batch = {self._obs_key: {
            "observation": torch.as_tensor(np.asarray(observation)[None]),
            "action_mask": torch.as_tensor(np.asarray(action_mask, np.int8)[None])}}
        with torch.no_grad():
            out = self.rl_module.forward_inference(batch)
        return out[self._logits_key][0].double().numpy()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        if legal.size == 1:
            return int(legal[0])
        z = self.logits(observation, action_mask)[legal]
        if self.deterministic:
            return int(legal[int(np.argmax(z))])
        p = np.exp(z - z.max())
        return int(self.rng.choices(legal.tolist(), weights=(p / p.sum()).tolist())[0])
