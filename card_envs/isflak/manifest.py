"""Isflak's manifest: what the registry, agents, trainer, benchmarks and tests know of it."""

from card_envs.core.manifest import GameManifest, Playthrough, TrainSpec

MANIFEST = GameManifest(
    env_id="isflak_v0",
    name="isflak",
    env="card_envs.isflak.env:IsflakEnv",
    heuristic="card_envs.agents.isflak:IsflakHeuristicAgent",
    test_cases=({}, {"num_players": 4, "start_player": "random"},
                {"num_players": 6, "reward_mode": "points"},
                {"num_players": 3, "penguins_per_player": 1, "card_points": [5, 0, 2]}),
    playthroughs=(
        Playthrough("default", {}, seed=1),
        Playthrough("4p-3penguins-points",
                    {"num_players": 4, "penguins_per_player": 3,
                     "card_points": {"ace": 5, "face": 2, "number": 1}, "reward_mode": "points"},
                    seed=2),
        Playthrough("3p-2penguins", {"num_players": 3, "penguins_per_player": 2,
                                     "card_points": [1, 1, 1]}, seed=3),
    ),
    # the action-aligned features make updates slower (about 2.5 s instead of 1.5 s): 4
    # evaluations (of ~17 s each) leave more of a 15-minute budget to training
    train=TrainSpec(settings={"shaping": 1.0, "evals": 4},
                    potential="card_envs.isflak.features:potential"),
    # az: softer priors for the PPO network (measured against mcts:ms=200); rollouts mixed
    # into leaf values: az:ms=200 vs mcts:ms=200 0.375 -> 0.56 (40 games, PPO network)
    az={"prior_temp": 3.0, "mix": 0.5, "train": {"mix": 0.5}},
)
