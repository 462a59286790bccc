"""``python -m dpaudit.runner run|plot ...``: the runner's own entry point.

The same commands as ``dpaudit run`` / ``dpaudit plot``; usable before (or
without) the main CLI.  Errors are one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import sys

from ..exceptions import DPAuditError
from .cli_commands import add_plot_parser, add_run_parser


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpaudit.runner", description="Run and plot dpaudit experiments.")
    sub = parser.add_subparsers(dest="command", required=True)
    add_run_parser(sub)
    add_plot_parser(sub)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except DPAuditError as exc:
        print(f"dpaudit {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"dpaudit {args.command}: interrupted (finished trials are saved; rerun with --resume)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
