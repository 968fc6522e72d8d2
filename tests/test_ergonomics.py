"""The commands a new user types first (issue 11 §4): the test script passes its arguments to
pytest, the benchmarks run without PyTorch, the demo has --help, README names only files that
exist."""

import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _test_sh_argv(tmp_path, *args):
    """What scripts/test.sh runs, with env.sh stubbed out (no venv is made): python's argv."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "test.sh", tmp_path / "scripts" / "test.sh")
    fake_python = tmp_path / "python"
    fake_python.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@"\n')
    fake_python.chmod(0o755)
    (tmp_path / "scripts" / "env.sh").write_text(
        f'ROOT="{tmp_path}"\nPY="{fake_python}"\nensure_env() {{ :; }}\n')
    proc = subprocess.run(["bash", str(tmp_path / "scripts" / "test.sh"), *args],
                          capture_output=True, text=True, timeout=30, check=True)
    return proc.stdout.splitlines()


def test_test_sh_passes_its_arguments_to_pytest(tmp_path):
    assert _test_sh_argv(tmp_path, "tests/test_x.py", "-k", "add") == \
        ["-m", "pytest", "-q", "tests/test_x.py", "-k", "add"]


def test_test_sh_without_arguments_runs_everything(tmp_path):
    assert _test_sh_argv(tmp_path) == ["-m", "pytest", "-q"]   # pyproject: testpaths = tests
    assert 'testpaths = ["tests"]' in (ROOT / "pyproject.toml").read_text()


def test_benchmarks_run_without_torch():
    code = ("import sys, runpy; sys.modules['torch'] = None; "   # import torch now fails
            "sys.argv = ['benchmarks', '--filter', 'no-such-group']; "
            "runpy.run_module('benchmarks', run_name='__main__')")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "PyTorch is not installed" in proc.stdout and "pip install torch==2.13.0" in proc.stdout
    assert "| workload | strata |" in proc.stdout and "strata/torch" not in proc.stdout


def test_benchmark_table_without_torch():
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.harness import Result, table
    finally:
        sys.path.remove(str(ROOT))
    rows = [Result("x + y", 2e-6, 2e-6, target=1.5)]
    assert table(rows, compared=False).splitlines()[-1] == "| x + y | 2.00 us |"
    assert table(rows).splitlines()[-1] == "| x + y | 2.00 us | 2.00 us | 1.00x | <= 1.5x |"


def test_demo_help_prints_help_without_running():
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "demo.py"), "--help"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: demo.py") and "--epochs" in proc.stdout
    assert "Training an MLP" not in proc.stdout


def test_readme_links_and_names_only_files_that_exist():
    readme = (ROOT / "README.md").read_text()
    named = set(re.findall(r"\b([\w./-]+\.md)\b", readme))
    missing = [n for n in named if not (ROOT / n).exists() and not (ROOT / "docs" / n).exists()]
    assert not missing, f"README names files that are not in the repository: {missing}"
