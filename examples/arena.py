"""Play baseline agents against each other and print win rates with 95% confidence intervals.

    python examples/arena.py --game slide --agents random,heuristic --games 200

Same as ``card-envs arena ...``; the implementation is ``card_envs.cli.arena_main``.
"""

import sys

from card_envs.cli import arena_main

if __name__ == "__main__":
    sys.exit(arena_main())
