"""The examples run end to end as a user runs them: each in a fresh Python process.

The MLP and the CNN must reach >= 95% test accuracy on scikit-learn's digits, the character-level
transformer's loss must drop clearly below the uniform guess, checkpoints must resume (a run
interrupted and resumed ends exactly where an uninterrupted run does), loss curves are written
when matplotlib is present (and a clear message is printed when it is not), and README's demo
prints its layer trace and trains to >= 95%.
"""

import importlib.util
import math
import os
import re
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# Tiny matrices: a multi-threaded BLAS only adds hand-off cost, and on a loaded shared machine
# its spinning threads make every matmul many times slower.
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")


def run_example(script, *args, cwd=None, prelude=None):
    """Run ``examples/<script>`` with ``args``; returns its stdout (fails on a non-zero exit)."""
    path = os.path.join(EXAMPLES, script)
    if prelude is None:
        cmd = [sys.executable, path, *args]
    else:   # run some setup code in the process first, then the script as __main__
        code = (f"{prelude}\nimport runpy, sys\nsys.argv = {[path, *args]!r}\n"
                f"sys.path.insert(0, {EXAMPLES!r})\nrunpy.run_path({path!r}, run_name='__main__')")
        cmd = [sys.executable, "-c", code]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd or EXAMPLES, env=ENV,
                          timeout=300)
    assert proc.returncode == 0, f"{script} {args} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def summary(out):
    """(steps, final loss, test accuracy %) from a classifier example's last line."""
    m = re.search(r"(\d+) steps, final loss ([\d.]+), test accuracy ([\d.]+)%", out)
    assert m, out
    return int(m.group(1)), float(m.group(2)), float(m.group(3))


def assert_png(path):
    with open(path, "rb") as f:
        assert f.read(8) == PNG_MAGIC, f"{path} is not a PNG"


@pytest.fixture(scope="module")
def mlp_full_run(tmp_path_factory):
    """The MLP trained with its defaults (10 epochs), uninterrupted, with a loss curve."""
    plot = tmp_path_factory.mktemp("mlp") / "mlp.png"
    return run_example("mlp_digits.py", "--quiet", "--plot", str(plot)), plot


def test_mlp_reaches_95_percent(mlp_full_run):
    out, plot = mlp_full_run
    steps, loss, acc = summary(out)
    assert steps == 10 * math.ceil(1437 / 64)
    assert acc >= 95.0, out
    assert loss < 0.5
    if HAS_MATPLOTLIB:
        assert f"loss curve: {plot}" in out
        assert_png(plot)


def test_mlp_checkpoint_resumes_exactly(mlp_full_run, tmp_path):
    """Stop after 5 of 10 epochs; a new process resumes from the checkpoint and ends with the
    same loss and accuracy as the uninterrupted run (same weights, Adam state, lr, batches)."""
    ckpt = str(tmp_path / "mlp.ckpt")
    half = 5 * math.ceil(1437 / 64)
    first = run_example("mlp_digits.py", "--quiet", "--steps", str(half), "--checkpoint", ckpt)
    assert "resumed" not in first
    assert summary(first)[0] == half
    assert os.path.exists(ckpt)
    second = run_example("mlp_digits.py", "--quiet", "--checkpoint", ckpt)
    assert f"resumed from {ckpt}: {half} steps done" in second
    assert summary(second) == summary(mlp_full_run[0])


def test_cnn_reaches_95_percent(tmp_path):
    out = run_example("cnn_digits.py", "--quiet", "--checkpoint", str(tmp_path / "cnn.ckpt"))
    steps, _, acc = summary(out)
    assert steps == 10 * math.ceil(1437 / 64)
    assert acc >= 95.0, out
    assert os.path.getsize(tmp_path / "cnn.ckpt") > 0


def test_char_transformer_learns_and_resumes(tmp_path):
    ckpt, plot = str(tmp_path / "lm.ckpt"), tmp_path / "lm.png"
    first = run_example("char_transformer.py", "--quiet", "--steps", "20", "--checkpoint", ckpt)
    assert "resumed" not in first
    second = run_example("char_transformer.py", "--quiet", "--steps", "40", "--checkpoint", ckpt,
                         "--plot", str(plot))
    assert f"resumed from {ckpt}: 20 steps done" in second
    m = re.search(r"(\d+) steps, final loss ([\d.]+) .*uniform guess: ([\d.]+)", second)
    assert m, second
    steps, loss, uniform = int(m.group(1)), float(m.group(2)), float(m.group(3))
    assert steps == 40
    with open(os.path.join(EXAMPLES, "data", "shakespeare.txt")) as f:
        assert uniform == pytest.approx(math.log(len(set(f.read()))), abs=1e-3)
    assert loss < uniform - 1.0, second
    sample = re.search(r"sample: (.*)", second).group(1)
    assert sample.startswith("To be") and len(sample) >= 120
    if HAS_MATPLOTLIB:
        assert_png(plot)


def test_progress_bar_shown_unless_quiet():
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "mlp_digits.py"), "--steps",
                          "3"], capture_output=True, text=True, cwd=EXAMPLES, env=ENV,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert re.search(r"epoch 1/10: .*\| *\d+/23 \[", out.stderr), out.stderr   # tqdm's bar


def test_no_matplotlib_prints_a_clear_message(tmp_path):
    plot = tmp_path / "mlp.png"
    out = run_example("mlp_digits.py", "--quiet", "--steps", "3", "--plot", str(plot),
                      prelude="import sys; sys.modules['matplotlib'] = None")
    assert "matplotlib is not installed: no loss curve written" in out
    assert not plot.exists()


def test_demo_runs_end_to_end(tmp_path):
    out = run_example("demo.py", cwd=tmp_path)
    assert "aten::add.Tensor" in out
    assert re.search(r"AutogradCPU.*ADInplaceOrView.*CPU", out)
    assert "layers: frontend -> dispatch -> autograd -> kernel" in out
    assert "resumed from" in out
    _, _, acc = summary(out)
    assert acc >= 95.0, out
    if HAS_MATPLOTLIB:
        assert_png(tmp_path / "demo_loss.png")


def test_mlp_on_the_sim_device_matches_cpu():
    """The same training run on the sim accelerator (a separate device process) gives the CPU's
    numbers, up to the last printed digit."""
    import strata
    if not strata.sim.is_available():
        pytest.skip("the sim device is not available here")
    args = ("--quiet", "--epochs", "2")
    sim_steps, sim_loss, sim_acc = summary(run_example("mlp_digits.py", *args, "--device", "sim"))
    cpu_steps, cpu_loss, cpu_acc = summary(run_example("mlp_digits.py", *args))
    assert sim_steps == cpu_steps
    assert sim_loss == pytest.approx(cpu_loss, abs=2e-4)
    assert sim_acc == pytest.approx(cpu_acc, abs=0.3)   # at most one test image of 360 differs
