"""Slide's manifest: what the registry, agents, trainer, benchmarks and tests know of it."""

from card_envs.core.manifest import GameManifest, Playthrough, TrainSpec

MANIFEST = GameManifest(
    env_id="slide_v0",
    name="slide",
    env="card_envs.slide.env:SlideEnv",
    heuristic="card_envs.agents.slide:SlideHeuristicAgent",
    test_cases=({}, {"num_players": 3, "start_player": "random"},
                {"num_players": 6, "reward_mode": "points"}),
    playthroughs=(
        Playthrough("2p", {"num_players": 2}, seed=1),
        Playthrough("4p", {"num_players": 4, "start_player": "random", "reward_mode": "points"},
                    seed=2),
        Playthrough("6p", {"num_players": 6}, seed=3),
    ),
    train=TrainSpec(settings={"shaping": 1.0, "evals": 4},
                    potential="card_envs.slide.features:potential"),
    # az: softer priors for the PPO network (measured against mcts:ms=200); rollouts mixed
    # into leaf values: 0.59 against az without them at ms=100 (40 games, PPO network)
    az={"prior_temp": 3.0, "mix": 0.5, "train": {"mix": 0.5}},
)
