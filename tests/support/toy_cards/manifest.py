"""Three Cards' manifest: all that registers the toy game with every layer."""

from card_envs.core.manifest import GameManifest, Playthrough

MANIFEST = GameManifest(
    env_id="toy_v0",
    name="toy",
    env="toy_cards.env:ToyEnv",
    test_cases=({}, {"num_players": 3, "start_player": "random", "reward_mode": "points"}),
    playthroughs=(Playthrough("2p", {}, seed=1),),
)
