"""The ``strata`` command line.

    strata run script.py [args...]     run an unmodified PyTorch script on strata
    strata run --nproc-per-node N script.py [args...]
                                       ... as N data-parallel ranks (torchrun-like, on mpiexec)
    strata explain "z = x + y" [--device sim] [--requires-grad] [--shape 2,3]
                                       print the path of one line through every layer
"""

import argparse
import builtins
import importlib.machinery
import os
import runpy
import signal
import sys
import types


# Note [Script as __main__]: ``strata run script.py`` runs the script as ``python script.py``
# would: its folder first on ``sys.path``, its module ``__main__``, and a traceback that starts at
# its own code (the runner's frames are cut). Its ``__main__`` names this module as its spec, so a
# spawn or forkserver child (DataLoader workers, multiprocessing) re-creates ``__main__`` by
# running this module as ``__mp_main__``, which installs the torch alias and re-runs the script
# (named by config.run_script; ``sys.path`` comes from the parent) before unpickling its work.
def _run(args):
    if args.nproc_per_node is not None or args.as_rank:
        return _launch(args)
    from . import config, torch_alias
    torch_alias.install()
    script = os.path.abspath(args.script)
    os.environ[config.run_script_env] = script
    sys.argv = [args.script] + args.args
    sys.path.insert(0, os.path.dirname(script))
    main = types.ModuleType("__main__")
    main.__file__, main.__builtins__ = script, builtins
    main.__spec__ = importlib.machinery.ModuleSpec(__name__, None, origin=script)
    sys.modules["__main__"] = main
    try:
        with open(script, "rb") as f:
            code = compile(f.read(), script, "exec")
        exec(code, main.__dict__)
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - reported as Python does
        exc.__traceback__ = _from_script(exc.__traceback__, script)
        sys.excepthook(type(exc), exc, exc.__traceback__)
        if isinstance(exc, KeyboardInterrupt):   # Python then dies of the SIGINT itself
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        return 1
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


def _from_script(tb, script):
    """The traceback from the script's first frame on (None, e.g. a SyntaxError, if absent)."""
    while tb is not None and tb.tb_frame.f_code.co_filename != script:
        tb = tb.tb_next
    return tb


def _rerun_script_in_child():
    """A spawn/forkserver child of ``strata run`` (Note [Script as __main__])."""
    from strata import config, torch_alias   # run as __mp_main__: no package for ``from .``
    torch_alias.install()
    globals().update(runpy.run_path(config.run_script, run_name="__mp_main__"))


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
elif __name__ == "__mp_main__":
    _rerun_script_in_child()
