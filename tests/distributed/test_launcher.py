"""The mpiexec command ``strata run --nproc-per-node`` builds (no job started here)."""

import sys

import pytest

from strata.distributed.launch import _RankPrefixed, mpiexec_command


def _env(cmd):
    return {cmd[i + 1]: cmd[i + 2] for i, arg in enumerate(cmd) if arg == "-genv"}


def test_local_job():
    cmd = mpiexec_command("train.py", ["--lr", "0.1"], nproc_per_node=4)
    assert cmd[1:5] == ["-n", "4", "-ppn", "4"]
    assert cmd[-8:] == [sys.executable, "-m", "strata", "run", "--as-rank", "train.py", "--lr",
                        "0.1"]
    env = _env(cmd)
    assert (env["WORLD_SIZE"], env["LOCAL_WORLD_SIZE"], env["MASTER_ADDR"],
            env["MASTER_PORT"]) == ("4", "4", "127.0.0.1", "29500")


def test_several_hosts_from_a_hostfile(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("# the cluster\nnode-a:2\nnode-b\n")
    cmd = mpiexec_command("train.py", [], nproc_per_node=2, nnodes=2, hostfile=str(hosts),
                          master_port=1234)
    assert cmd[1:5] == ["-n", "4", "-ppn", "2"] and cmd[cmd.index("-f") + 1] == str(hosts)
    env = _env(cmd)
    assert (env["WORLD_SIZE"], env["MASTER_ADDR"], env["MASTER_PORT"]) == ("4", "node-a", "1234")


def test_bad_arguments():
    with pytest.raises(ValueError, match="--nnodes > 1 needs --hostfile"):
        mpiexec_command("train.py", [], nproc_per_node=2, nnodes=2)
    with pytest.raises(ValueError, match="at least 1"):
        mpiexec_command("train.py", [], nproc_per_node=0)


def test_output_lines_carry_the_rank():
    class Sink:
        text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    sink = Sink()
    stream = _RankPrefixed(sink, "[rank3]: ")
    stream.write("a")
    stream.write("b\nc\n")
    stream.write("partial")
    assert sink.text == "[rank3]: ab\n[rank3]: c\n"
    stream.flush()
    assert sink.text.endswith("[rank3]: partial")
