"""MaskedPolicy computes the same masked distribution as sb3-contrib's policy, faster."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="train extra")
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy  # noqa: E402

from card_envs.rl.sb3 import BatchedVecEnv  # noqa: E402
from card_envs.rl.sb3.policy import FastTanh, MaskedPolicy  # noqa: E402


@pytest.fixture(autouse=True, params=["dense", "sparse"])
def head_path(request, monkeypatch):
    """Every test twice: the distribution over all actions, and over the legal ones only
    (``_LegalLogits``, which the policy uses when few actions are legal)."""
    import card_envs.rl.sb3.policy as policy

    monkeypatch.setattr(policy, "SPARSE_DENSITY", 0.0 if request.param == "dense" else 1.0)
    return request.param


@pytest.fixture(scope="module")
def pair():
    """A MaskedPolicy and an sb3-contrib policy with the same weights, and a batch of real
    observations and masks (Slide, 64 games)."""
    venv = BatchedVecEnv("slide_v0", 64, seed=3)
    obs = venv.reset()
    masks = venv.action_masks()
    torch.manual_seed(0)
    fast = MaskablePPO(MaskedPolicy, venv, seed=0, device="cpu").policy
    ref = MaskablePPO("MlpPolicy", venv, seed=0, device="cpu",
                      policy_kwargs={"activation_fn": torch.nn.Tanh}).policy
    ref.load_state_dict(fast.state_dict())
    with torch.no_grad():  # larger weights: a far from uniform distribution to compare
        fast.action_net.weight.mul_(20.0)
        ref.action_net.weight.copy_(fast.action_net.weight)
    return fast, ref, torch.as_tensor(obs).float(), masks


def test_fast_tanh_is_tanh():
    x = torch.linspace(-40, 40, 20001)
    assert torch.allclose(FastTanh()(x), torch.tanh(x), atol=1e-6)
    assert issubclass(MaskedPolicy, MaskableActorCriticPolicy)


def test_values_log_probs_and_entropy_equal_sb3_contrib(pair):
    fast, ref, obs, masks = pair
    assert any(isinstance(m, FastTanh) for m in fast.mlp_extractor.modules())
    acts = torch.as_tensor([int(np.flatnonzero(m)[-1]) for m in masks])
    with torch.no_grad():
        v1, lp1, h1 = fast.evaluate_actions(obs, acts, torch.as_tensor(masks))
        v2, lp2, h2 = ref.evaluate_actions(obs, acts, torch.as_tensor(masks))
        dist = ref.get_distribution(obs, masks)
    assert torch.allclose(v1, v2, atol=1e-5)
    assert torch.allclose(lp1, lp2, atol=1e-4)
    assert torch.allclose(h1, h2, atol=1e-4)
    assert h1.min() >= 0 and (h1 > 1e-3).any()
    with torch.no_grad():
        a, v, lp = fast(obs, deterministic=True, action_masks=masks)
    assert torch.equal(a, dist.get_actions(deterministic=True))
    assert torch.allclose(lp, dist.log_prob(a), atol=1e-4)
    assert torch.allclose(v, v2, atol=1e-5)


def test_gradients_equal_sb3_contrib(pair):
    fast, ref, obs, masks = pair
    acts = torch.as_tensor([int(np.flatnonzero(m)[0]) for m in masks])
    for pol in (fast, ref):
        pol.zero_grad()
        v, lp, h = pol.evaluate_actions(obs, acts, torch.as_tensor(masks))
        (lp.mean() + 0.01 * h.mean() + v.mean()).backward()
    for (n, p1), p2 in zip(fast.named_parameters(), ref.parameters(), strict=True):
        assert torch.allclose(p1.grad, p2.grad, atol=1e-4, rtol=1e-3), n


def test_samples_follow_the_masked_distribution(pair):
    fast, ref, obs, masks = pair
    torch.manual_seed(1)
    row = int(np.argmax(masks.sum(1)))  # the game with the most legal actions
    n = 20000
    o = obs[row:row + 1].repeat(n, 1)
    m = np.repeat(masks[row:row + 1], n, axis=0)
    with torch.no_grad():
        a, _, lp = fast(o, action_masks=m)
        p = ref.get_distribution(obs[row:row + 1], masks[row:row + 1]).distribution.probs[0]
        pred = fast._predict(o, action_masks=m)
    counts = np.bincount(a.numpy(), minlength=masks.shape[1])
    assert counts[~masks[row]].sum() == 0  # an illegal action is never drawn
    assert np.bincount(pred.numpy(), minlength=masks.shape[1])[~masks[row]].sum() == 0
    expected = p.numpy() * n
    big = expected > 50
    assert big.sum() >= 2
    # each frequent action's count within 5 binomial standard deviations of n p
    sd = np.sqrt(expected * (1 - p.numpy()))
    assert np.all(np.abs(counts[big] - expected[big]) < 5 * sd[big] + 1)
    assert torch.allclose(lp, torch.log(p)[a], atol=1e-4)


def test_model_trains_saves_and_loads(tmp_path):
    venv = BatchedVecEnv("isflak_v0", 16, seed=0)
    model = MaskablePPO(MaskedPolicy, venv, n_steps=16, batch_size=64, n_epochs=1, seed=0,
                        device="cpu")
    model.learn(512)
    model.save(tmp_path / "m.zip")
    loaded = MaskablePPO.load(tmp_path / "m.zip", device="cpu")
    assert isinstance(loaded.policy, MaskedPolicy)
    obs = venv.reset()
    masks = venv.action_masks()
    a1, _ = model.predict(obs, action_masks=masks, deterministic=True)
    a2, _ = loaded.predict(obs, action_masks=masks, deterministic=True)
    assert np.array_equal(a1, a2)
    assert masks[np.arange(len(a1)), a1].all()


def test_rejects_non_discrete_actions():
    import gymnasium

    box = gymnasium.spaces.Box(0, 1, (3,))
    with pytest.raises(TypeError, match="Discrete"):
        MaskedPolicy(box, gymnasium.spaces.MultiDiscrete([2, 2]), lambda _: 1e-3)


def test_ppo_agent_samples_with_its_own_rng(tmp_path):
    import card_envs
    from card_envs.agents.ppo import PPOAgent

    venv = BatchedVecEnv("slide_v0", 8, seed=0)
    model = MaskablePPO(MaskedPolicy, venv, seed=0, device="cpu")
    env = card_envs.make("slide_v0")
    env.reset(seed=5)
    obs = env.observe(env.agent_selection)

    def play(seed: int) -> list[int]:
        agent = PPOAgent("slide_v0", seed=seed, model=model, deterministic=False)
        torch_state = torch.get_rng_state()
        out = [agent.act(obs["observation"], obs["action_mask"]) for _ in range(40)]
        assert torch.equal(torch.get_rng_state(), torch_state)  # global RNG untouched
        assert all(obs["action_mask"][a] for a in out)
        return out

    assert play(1) == play(1)
    assert play(1) != play(2)


def test_the_sparse_head_equals_the_dense_one_with_action_features(head_path):
    """ActionFeaturePolicy on Op Glad IJs (2 of 703 actions legal): log-probabilities,
    entropies, values and gradients the same on both paths, greedy actions the same."""
    import card_envs.rl.sb3.policy as policy
    from card_envs.rl.sb3.train import policy_spec

    opts = {"num_players": 2, "max_turned": 200}
    venv = BatchedVecEnv("op_glad_ijs_v0", 32, seed=4, features=True, **opts)
    obs = torch.as_tensor(venv.reset())
    masks = venv.action_masks()
    cls, kw = policy_spec("op_glad_ijs_v0", **opts)
    torch.manual_seed(0)
    pol = cls(venv.observation_space, venv.action_space, lambda _: 3e-4, **kw)
    with torch.no_grad():
        pol.action_net.linear.weight.mul_(30.0)  # far from uniform
    acts = torch.as_tensor([int(np.flatnonzero(m)[-1]) for m in masks])
    out = {}
    for path, density in (("dense", 0.0), ("sparse", 1.0)):
        policy.SPARSE_DENSITY = density
        pol.zero_grad()
        v, lp, h = pol.evaluate_actions(obs, acts, torch.as_tensor(masks))
        (lp.mean() + 0.01 * h.mean() + v.mean()).backward()
        grads = [p.grad.clone() for p in pol.parameters() if p.grad is not None]
        with torch.no_grad():
            greedy, _, glp = pol(obs, deterministic=True, action_masks=masks)
            drawn = pol._predict(obs, action_masks=masks)
        assert masks[np.arange(len(masks)), drawn.numpy()].all()
        out[path] = (v.detach(), lp.detach(), h.detach(), grads, greedy, glp)
    d, s_ = out["dense"], out["sparse"]
    for x, y in zip(d[:3] + (d[5],), s_[:3] + (s_[5],)):
        assert torch.allclose(x, y, atol=1e-5)
    assert torch.equal(d[4], s_[4])
    assert (d[2] > 1e-3).any()
    for g1, g2 in zip(d[3], s_[3], strict=True):
        assert torch.allclose(g1, g2, atol=1e-5, rtol=1e-4)
