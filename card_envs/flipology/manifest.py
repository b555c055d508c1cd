"""Flipology's manifest: what the registry, agents, trainer, benchmarks and tests know of it."""

from card_envs.core.manifest import BenchSpec, GameManifest, Playthrough

MANIFEST = GameManifest(
    env_id="flipology_v0",
    name="flipology",
    env="card_envs.flipology.env:FlipologyEnv",
    heuristic="card_envs.agents.flipology:FlipologyHeuristicAgent",
    test_cases=({}, {"start_player": "random", "moon": True, "series": True},
                {"num_players": 8, "reward_mode": "points", "wolves": False},
                {"num_players": 3, "variant": "great_tree", "moon": True}),
    playthroughs=(
        Playthrough("nature", {}, seed=1),
        Playthrough("moon", {"num_players": 4, "moon": True}, seed=2),
        Playthrough("series", {"num_players": 3, "series": True, "reward_mode": "points"},
                    seed=3),
        Playthrough("great_tree", {"num_players": 3, "variant": "great_tree"}, seed=4),
    ),
    # Pgx's JAX speeds at B=4096 (as ratios to the anchor) set the bar for the heavy games
    bench=BenchSpec(batch_ratio=207.0, ladder_budget="mcts:iterations=8000"),
    # az: softer priors for the PPO network (measured against mcts:ms=200); no rollouts
    # (with mix=0.5: 0.425 against az without, ms=100, 40 games)
    az={"prior_temp": 3.0},
)
