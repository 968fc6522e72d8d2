"""``strata run script.py`` runs a script as ``python script.py`` would, with ``torch`` resolving
to strata in the script and in every child process (Note [Script as __main__] in cli.py)."""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    import multiprocessing as mp
    import torch
    import helpers                      # a sibling module: the script's folder is on sys.path
    from torch.utils.data import DataLoader, Dataset

    class Squares(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return helpers.square(torch.tensor([float(i)])), torch.__name__

    def report(queue):
        import torch
        queue.put(torch.__name__)

    if __name__ == "__main__":
        print("main", torch.__name__, sys.argv[1:])
        loader = DataLoader(Squares(), batch_size=2, num_workers=1,
                            multiprocessing_context=sys.argv[1])
        print("batches", [(b.flatten().tolist(), names) for b, names in loader])
        ctx = mp.get_context(sys.argv[1])
        queue = ctx.Queue()
        child = ctx.Process(target=report, args=(queue,))
        child.start()
        print("process", queue.get())
        child.join()
        if "--fail" in sys.argv:
            helpers.fail()
""")
HELPERS = textwrap.dedent("""
    def square(x):
        return x * x

    def fail():
        raise ValueError("raised in the user's code")
""")


def _run_script(tmp_path, *args):
    (tmp_path / "script.py").write_text(SCRIPT)
    (tmp_path / "helpers.py").write_text(HELPERS)
    return subprocess.run([sys.executable, "-m", "strata", "run", str(tmp_path / "script.py"),
                           *args], capture_output=True, text=True, timeout=300, cwd="/")


def test_run_spawned_children_get_the_torch_alias(tmp_path):
    proc = _run_script(tmp_path, "spawn", "x")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "main strata ['spawn', 'x']",
        "batches [([0.0, 1.0], ('strata', 'strata')), ([4.0, 9.0], ('strata', 'strata'))]",
        "process strata"]


def test_run_traceback_starts_at_the_users_code(tmp_path):
    proc = _run_script(tmp_path, "forkserver", "--fail")
    assert proc.returncode == 1
    assert "process strata" in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1].startswith(f'  File "{tmp_path / "script.py"}", line ')
    assert lines[-1] == "ValueError: raised in the user's code"
    assert "strata/cli.py" not in proc.stderr and "runpy" not in proc.stderr


def test_run_syntax_error(tmp_path):
    (tmp_path / "bad.py").write_text("x = (\n")
    proc = subprocess.run([sys.executable, "-m", "strata", "run", str(tmp_path / "bad.py")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == "SyntaxError: '(' was never closed"
    assert "cli.py" not in proc.stderr


VERSION_SCRIPT = textwrap.dedent("""
    import torch
    import torch.version
    import strata
    from packaging import version
    print(torch.__version__, torch.version.__version__ == torch.__version__, torch.version.cuda)
    print(torch.__version__ >= "2.0", torch.__version__ < (2, 14), torch.__version__ > "2.13",
          version.parse(torch.__version__) >= version.parse("2.0"), torch.__version__ == "2.13.0")
    print(strata.__version__, torch.Tensor is strata.Tensor, torch.__name__)
    torch.some_flag = True          # an assignment to torch reaches strata
    print(strata.some_flag, strata.version.__version__ == strata.__version__, strata.version.cuda)
""")


def test_torch_version_under_the_alias(tmp_path):
    """``torch.__version__`` is the PyTorch API level (a version-comparable str, as PyTorch's
    TorchVersion); ``strata.__version__`` stays strata's (Note [Two version numbers])."""
    import strata
    import torch
    (tmp_path / "version.py").write_text(VERSION_SCRIPT)
    proc = subprocess.run([sys.executable, "-m", "strata", "run", str(tmp_path / "version.py")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    api = torch.__version__.split("+")[0]
    assert proc.stdout.splitlines() == [
        f"{api}+strata{strata.__version__} True None",
        "True True True True False",
        f"{strata.__version__} True strata",
        "True True None"]
    assert (torch.__version__ >= "2.0", torch.__version__ < (2, 14)) == (True, True)


def test_run_keyboard_interrupt_ends_as_python_does(tmp_path):
    """The traceback from the user's code, then death by SIGINT (the shell's status 130)."""
    (tmp_path / "stop.py").write_text("def stop():\n    raise KeyboardInterrupt\n\nstop()\n")
    outcomes = []
    for cmd in ([sys.executable], [sys.executable, "-m", "strata", "run"]):
        proc = subprocess.run(cmd + [str(tmp_path / "stop.py")], capture_output=True, text=True,
                              timeout=60)
        outcomes.append((proc.returncode, proc.stderr.strip().splitlines()))
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][0] == -2 and outcomes[1][1][-1] == "KeyboardInterrupt"
