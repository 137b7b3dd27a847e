"""The deprecated launcher ``python -m ember.distributed.launch`` (torch.distributed.launch).

It takes :mod:`ember.distributed.run`'s flags plus ``--use-env``; without ``--use-env`` each
rank's script also gets ``--local-rank=<LOCAL_RANK>`` as its first argument, as PyTorch's
old launcher passed it. New programs use ``python -m ember.distributed.run`` and read
LOCAL_RANK from the environment.
"""

from __future__ import annotations

import sys
import warnings

from ember.distributed.run import get_args_parser, run

__all__ = ["main", "parse_args"]


def parse_args(args=None):
    """Parse the command line: run's flags and ``--use-env`` / ``--use_env``."""
    parser = get_args_parser()
    parser.prog = "python -m ember.distributed.launch"
    parser.add_argument("--use-env", "--use_env", action="store_true",
                        help="do not pass --local-rank; the script reads LOCAL_RANK")
    ns = parser.parse_args(args)
    ns.local_rank_arg = not ns.use_env
    return ns


def main(args=None) -> None:
    """The entry point of ``python -m ember.distributed.launch``."""
    warnings.warn("The module torch.distributed.launch is deprecated and will be removed in "
                  "future. Use torchrun (here: python -m ember.distributed.run).",
                  FutureWarning, stacklevel=2)
    try:
        code = run(parse_args(args))
    except ValueError as e:
        print(f"ember.distributed.launch: {e}", file=sys.stderr)
        code = 2
    sys.exit(code)


if __name__ == "__main__":
    main()
