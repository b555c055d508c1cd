"""The module paths of ``card_envs.rl`` from before each trainer had its own package still import,
quietly, as the very modules of their new homes (``card_envs.rl._moved``): no second copy, so
the same classes, and a class pickled under its old path loads.

The checks run in a fresh interpreter, the old names imported first (an import is done once per
process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

ROOT = Path(__file__).resolve().parents[2]

#: old path -> its module now (relative to card_envs.rl)
OLD = {
    "ppo_run": "ppo.run",
    "ppo_sampler": "ppo.sampler",
    "ppo_ray": "ppo.ray",
    "trainer": "sb3.train",
    "policy": "sb3.policy",
    "buffers": "sb3.buffers",
    "selfplay": "sb3.selfplay",
    "shaping": "sb3.shaping",
    "expert": "az.train",
}
#: what the modules card_envs.rl.ppo and card_envs.rl.sb3 defined: now their packages' names
PACKAGES = {
    "ppo": ("ppo.train", ["PPO_DEFAULTS", "PPOResult", "train_ppo"]),
    "sb3": ("sb3.vec_env", ["AgentOpponent", "BatchPolicy", "BatchedVecEnv", "PolicyOpponent",
                            "feature_space"]),
}

_CODE = """
import importlib, json, pickle, sys, warnings
OLD, PACKAGES = json.loads(sys.argv[1]), json.loads(sys.argv[2])
rl = "card_envs.rl."
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    old = {o: importlib.import_module(rl + o) for o in OLD}
    policy_class = pickle.loads(b"ccard_envs.rl.policy\\nMaskedPolicy\\n.")
    trainer_names = {}
    exec("from card_envs.rl.trainer import DEFAULTS, train", trainer_names)
ours = [str(x.message) for x in w if "card_envs" in str(x.message)]
new = {o: importlib.import_module(rl + n) for o, n in OLD.items()}
import card_envs.rl
exported = {}
for pkg, (home, names) in PACKAGES.items():
    p, h = importlib.import_module(rl + pkg), importlib.import_module(rl + home)
    exported[pkg] = all(getattr(p, n) is getattr(h, n) for n in names)
mine = [m for name, m in sys.modules.items() if name.startswith("card_envs.rl")]
print(json.dumps({
    "same": {o: old[o] is new[o] for o in OLD},
    "specs": {o: old[o].__spec__.name for o in OLD},
    "names": {o: old[o].__name__ for o in OLD},
    "warnings": ours,
    "pickled": policy_class is new["policy"].MaskedPolicy,
    "from_import": trainer_names["train"] is new["trainer"].train,
    "exported": exported,
    "all": [n for n in card_envs.rl.__all__ if getattr(card_envs.rl, n, None) is None],
    "files": len({m.__file__ for m in mine}),
    "modules": len({id(m) for m in mine}),
}))
"""


def _run(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _CODE, *args], capture_output=True, text=True,
                         timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_old_path_is_its_new_module() -> None:
    got = _run(json.dumps(OLD), json.dumps(PACKAGES))
    assert got["same"] == {o: True for o in OLD}
    new_names = {o: f"card_envs.rl.{n}" for o, n in OLD.items()}
    assert got["specs"] == new_names and got["names"] == new_names
    assert got["warnings"] == []  # documented paths once: quiet aliases
    assert got["pickled"] and got["from_import"]
    assert got["exported"] == {"ppo": True, "sb3": True}
    assert got["all"] == []  # every name card_envs.rl exports resolves
    assert got["files"] == got["modules"]  # one module object per source file


def test_the_alias_table_is_this_list() -> None:
    from card_envs.rl._moved import MOVED

    assert MOVED == OLD


def test_an_unknown_name_is_not_found() -> None:
    with pytest.raises(ModuleNotFoundError) as e:
        import card_envs.rl.nothing_here  # noqa: F401
    assert e.value.name == "card_envs.rl.nothing_here"
