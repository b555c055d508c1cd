"""Play agents against each other over duplicate deals and print win rates, mean points (95%
confidence intervals), openskill ratings and a head-to-head matrix.

    python examples/arena.py --game slide --agents random,heuristic --games 200
    python examples/arena.py --game isflak --agents random,heuristic,mcts:ms=50+c=0.7 \\
        --games 100 --workers 2 --json isflak.json --plot plots/

Same as ``card-envs arena ...``; the implementation is ``card_envs.cli.arena_main``. The guide
is ``docs/arena.md``; from Python: ``card_envs.arena.run_arena``.
"""

import sys

from card_envs.cli import arena_main

if __name__ == "__main__":  # needed: --workers spawns processes that import this module
    sys.exit(arena_main())
