"""If It Fits' manifest: what the registry, agents, trainer, benchmarks and tests know of it."""

from card_envs.core.manifest import BenchSpec, GameManifest, Playthrough, TrainSpec

_IIF = "with uniform random play every seat usually ends with 0 points; the heuristic scores"

MANIFEST = GameManifest(
    env_id="if_it_fits_v0",
    name="if_it_fits",
    env="card_envs.if_it_fits.env:IfItFitsEnv",
    heuristic="card_envs.agents.if_it_fits:IfItFitsHeuristicAgent",
    test_cases=({}, {"num_players": 3, "start_player": "random", "advanced": True},
                {"num_players": 5, "reward_mode": "points", "table": (7, 9)}),
    playthroughs=(
        Playthrough("basic", {}, seed=1, agent="heuristic", noise=0.2, note=_IIF),
        Playthrough("advanced", {"num_players": 3, "advanced": True}, seed=3,
                    agent="heuristic", noise=0.2, note=_IIF),
        Playthrough("small-table", {"table": [5, 7]}, seed=4),
    ),
    # Pgx's JAX speeds at B=4096 (as ratios to the anchor) set the bar for the heavy games
    bench=BenchSpec(batch_ratio=81.0, ladder_budget="mcts:iterations=4000"),
    # the final reward is +-1 after ~40 moves and random play scores 0: shape it with the
    # lead in points now (a game fact, potential-based so the objective is unchanged)
    train=TrainSpec(settings={"shaping": 1.0},
                    potential="card_envs.if_it_fits.features:potential"),
    # az: no rollouts (with mix=0.5: 0.41 against az without, ms=100, 40 games)
    az={"prior_temp": 1.0},
)
