"""Torch feature modules of the games that have action-aligned features (the manifests'
``train.features``: ``"card_envs.rl.features.<game>:Class"``).

A module is built as ``Class(obs_size, num_players=n, num_actions=A)`` (a ``ValueError``
there: no extra features for that configuration; the trainer warns and goes on without), has
``global_dim``, ``action_dim`` and ``num_actions``, and maps a ``(B, obs)`` float tensor to
``(global (B, global_dim), per_action (B, A, action_dim))``: pure functions of the
observation. Per-action feature 0 is the "legal" flag (a superset of the action mask). The
numba kernels that compute them live beside the rules (``card_envs/<game>/features.py``,
numba and numpy only); these modules only wrap them for torch (and keep a batched-torch
reference implementation).
"""
