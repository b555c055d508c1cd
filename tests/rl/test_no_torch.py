"""The game folders need only numpy and numba: with torch unimportable every game module
imports and plays, the numba feature kernels and the shaping potentials run, and the
Gymnasium single-agent view works (torch is the trainers', behind ``card_envs.rl.ppo``,
``card_envs.rl.sb3`` and ``card_envs.rl.rllib``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import importlib
import pkgutil
import sys

sys.modules["torch"] = None  # `import torch` raises ImportError from here on

import numpy as np

from card_envs.core.engine import Engine
from card_envs.core.manifest import load
from card_envs.core.registry import env_ids, manifest

for env_id in env_ids():
    m = manifest(env_id)
    pkg = importlib.import_module(m.env.partition(":")[0].rpartition(".")[0])
    for info in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{pkg.__name__}.{info.name}")
    eng = Engine(env_id)
    st = eng.new_state(1)
    obs = np.stack([eng.observe(st, s) for s in range(eng.game.num_players)])
    if m.train.potential:
        phi = load(m.train.potential)(obs, eng.game.num_players)
        assert phi.shape == (len(obs),), env_id
    print("game", env_id)

from card_envs.core.features import Features, has_features
from card_envs.core.vector import VectorEnv

for env_id in env_ids():
    game = Engine(env_id).game
    if has_features(game):
        fx = Features(game)
        vec = VectorEnv(game, 4, 0)
        x = fx.compute(vec.observations)
        assert x.shape == (4, fx.width) and np.isfinite(x).all(), env_id
        print("features", env_id)

from card_envs.rl import SingleAgentEnv

env = SingleAgentEnv("slide_v0", opponents="heuristic")
obs, info = env.reset(seed=0)
env.step(int(env.action_masks().argmax()))
assert sys.modules["torch"] is None
print("ok")
"""


def test_games_and_features_import_without_torch() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.split()
    assert lines[-1] == "ok" and lines.count("game") >= 5, out.stdout
