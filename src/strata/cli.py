"""The ``strata`` command line.

    strata run script.py [args...]     run an unmodified PyTorch script on strata
"""

import argparse
import runpy
import sys


def _run(args):
    from . import torch_alias
    torch_alias.install()
    sys.argv = [args.script] + args.args
    runpy.run_path(args.script, run_name="__main__")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="strata", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a PyTorch script with `torch` resolving to strata")
    run.add_argument("script")
    run.add_argument("args", nargs=argparse.REMAINDER)
    run.set_defaults(func=_run)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
