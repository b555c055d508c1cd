"""Slide's action-aligned features (card_envs.slide.features) against the engine."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="train extra")

from positions import random_states  # noqa: E402

from card_envs.slide.features import ACTION_FEATURES, PushFeatures  # noqa: E402

F = {name: i for i, name in enumerate(ACTION_FEATURES)}


def face_up_score(grid: np.ndarray) -> tuple[int, int]:
    """(score of the face-up cards without an equal face-up neighbour, paired face-up cards)
    of a 16-code grid (0 empty, 1-10 up, 11 down): a slow reference."""
    g = grid.reshape(4, 4)
    score = pairs = 0
    for r in range(4):
        for c in range(4):
            v = g[r, c]
            if not 1 <= v <= 10:
                continue
            eq = any(0 <= r + dr < 4 and 0 <= c + dc < 4 and g[r + dr, c + dc] == v
                     for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)))
            pairs += eq
            score += 0 if eq else int(v)
    return score, pairs


@pytest.mark.parametrize("n_players", [2, 3])
def test_push_features_match_the_engine(n_players):
    eng, states = random_states("slide_v0", n_players, 60, seed=n_players,
                                max_moves=32 * n_players)
    fx = PushFeatures(eng.game.obs_size, n_players, eng.game.num_actions)
    checked_picks = 0
    for st in states:
        seat = eng.current_player(st)
        obs = eng.observe(st, seat)
        mask = eng.legal_mask(st)
        glob, act = fx(torch.as_tensor(obs[None]).float())
        act = act[0].numpy()
        assert act.shape == (56, len(ACTION_FEATURES))
        np.testing.assert_array_equal(act[:, F["legal"]] > 0, mask > 0)
        now, _ = face_up_score(obs[:16])
        assert glob[0, 0].item() == pytest.approx(now / 50)
        for a in np.flatnonzero(mask):
            if a < 16:
                assert act[a, F["reveal"]] == 1 and act[a, F["score"]] == pytest.approx(now / 50)
                continue
            after = eng.clone(st)
            eng.step(after, int(a))
            grid = eng.observe(after, seat)[:16]
            score, pairs = face_up_score(grid)
            assert act[a, F["score"]] == pytest.approx(score / 50), a
            assert act[a, F["delta"]] == pytest.approx((score - now) / 10), a
            assert act[a, F["pairs"]] == pytest.approx(pairs / 16), a
            assert act[a, F["value"]] == pytest.approx(((a - 16) // 4 + 1) / 10)
            checked_picks += 1
        # the other seats' view gives no legal rows (not their turn)
        other = (seat + 1) % n_players
        _, act_o = fx(torch.as_tensor(eng.observe(st, other)[None]).float())
        assert act_o[0, :, F["legal"]].sum() == 0
    assert checked_picks > 50


def test_rejects_other_layouts():
    with pytest.raises(ValueError):
        PushFeatures(57, 3)
    with pytest.raises(ValueError):
        PushFeatures(57, 2, num_actions=50)
