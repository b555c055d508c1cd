"""card-envs' test kit, for the built-in games and for your own variants, decks and games.

>>> from card_envs.testing import check_game
>>> check_game("slide_v0", {"num_players": 3})          # every check, a few random games
>>> check_game("flipology_v0", {"deck": my_deck})       # doctest: +SKIP

Each ``check_*`` function raises ``AssertionError`` when the game breaks the contract (the
game folder's modules, :mod:`card_envs.core.contract`; PettingZoo API and seeding, determinism
across processes, bad actions and state dicts rejected without a change, state-dict round
trips, hidden information under ``resample``, the batched engine and the raw engine agreeing
with the AEC env, rendering and action names). A game defined outside the package joins with
``card_envs.register("its_package")`` first.
"""

from card_envs.testing.checks import (
    PER_CASE,
    PER_GAME,
    RANDOMIZED,
    check_bad_actions,
    check_bad_state_dicts,
    check_clone_independent,
    check_contract,
    check_determinism_across_processes,
    check_engine_loop,
    check_game,
    check_global_state,
    check_hidden_information,
    check_invalid_options,
    check_masked_action_loses,
    check_matches_pettingzoo_wrappers,
    check_module_entry_points,
    check_numpy_integers,
    check_pettingzoo_api,
    check_pettingzoo_seed,
    check_random_play,
    check_render_and_action_names,
    check_state_dict_round_trip,
    check_step_after_end,
    check_use_before_reset,
    check_vector_matches_aec,
    check_vector_rejects_illegal,
    raises,
)
from card_envs.testing.kit import Case, cases, digest, play_steps, random_action, snapshot

__all__ = [
    "PER_CASE", "PER_GAME", "RANDOMIZED", "Case", "cases", "check_bad_actions",
    "check_bad_state_dicts", "check_clone_independent", "check_contract",
    "check_determinism_across_processes",
    "check_engine_loop", "check_game", "check_global_state", "check_hidden_information",
    "check_invalid_options",
    "check_masked_action_loses", "check_matches_pettingzoo_wrappers",
    "check_module_entry_points", "check_numpy_integers", "check_pettingzoo_api",
    "check_pettingzoo_seed", "check_random_play", "check_render_and_action_names",
    "check_state_dict_round_trip", "check_step_after_end", "check_use_before_reset",
    "check_vector_matches_aec", "check_vector_rejects_illegal", "digest", "play_steps",
    "random_action", "raises", "snapshot",
]
