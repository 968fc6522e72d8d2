"""The ``strata`` command line.

    strata run script.py [args...]     run an unmodified PyTorch script on strata
    strata run --nproc-per-node N script.py [args...]
                                       ... as N data-parallel ranks (torchrun-like, on mpiexec)
    strata explain "z = x + y" [--device sim] [--requires-grad] [--shape 2,3]
                                       print the path of one line through every layer
"""

import argparse
import runpy
import sys


def _run(args):
    if args.nproc_per_node is not None or args.as_rank:
        return _launch(args)
    from . import torch_alias
    torch_alias.install()
    sys.argv = [args.script] + args.args
    runpy.run_path(args.script, run_name="__main__")
    return 0


def _add_launcher_args(run):
    """``strata run --nproc-per-node N``: torchrun's flags, ranks started by mpiexec."""
    group = run.add_argument_group("distributed (ranks started with mpiexec; see "
                                   "docs/distributed.md)")
    group.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=None,
                       help="start this many ranks per host")
    group.add_argument("--nnodes", type=int, default=1, help="number of hosts (needs --hostfile)")
    group.add_argument("--hostfile", default=None, help="one host name per line (hydra's -f)")
    group.add_argument("--master-addr", "--master_addr", default=None,
                       help="MASTER_ADDR given to the ranks (default: first host, or 127.0.0.1)")
    group.add_argument("--master-port", "--master_port", type=int, default=29500,
                       help="MASTER_PORT given to the ranks")
    group.add_argument("--as-rank", action="store_true", help=argparse.SUPPRESS)  # mpiexec's


def _launch(args):
    from .distributed import launch
    if args.as_rank:   # one rank of a job that `strata run --nproc-per-node` started
        from . import torch_alias
        return launch.run_rank(args.script, args.args, torch_alias.install)
    return launch.launch(args.script, args.args, args.nproc_per_node, args.nnodes,
                         args.hostfile, args.master_addr, args.master_port)


def _explain(args):
    from .profiler import explain
    shape = tuple(int(n) for n in args.shape.split(",") if n.strip())
    try:
        explain(args.source, device=args.device, shape=shape, requires_grad=args.requires_grad)
    except Exception as exc:   # the tree already shows where it was raised
        print(f"strata explain: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="strata", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a PyTorch script with `torch` resolving to strata")
    run.add_argument("script")
    run.add_argument("args", nargs=argparse.REMAINDER)
    _add_launcher_args(run)
    run.set_defaults(func=_run)
    exp = sub.add_parser("explain", help="print the path of one line through every layer "
                                         "(x and y are small tensors made for it)")
    exp.add_argument("source", help='a line of Python, e.g. "z = x + y"')
    exp.add_argument("--device", default=None, help="where x and y live (cpu, sim, ...)")
    exp.add_argument("--requires-grad", action="store_true", help="make x require grad")
    exp.add_argument("--shape", default="2,3", help="shape of x and y (default 2,3)")
    exp.set_defaults(func=_explain)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
