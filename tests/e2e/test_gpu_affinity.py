"""GPU-to-core affinity from gres.conf Cores= through the real daemons: a
job's GPUs come from one socket where one has enough, and its CPUs are
the cores near them (scontrol show job -d)."""
import re
import subprocess

import pytest

from conftest import BIN, make_cluster

CONF = """\
ClusterName=affinity
SlurmctldHost={host}
StateSaveLocation={dir}/ctld
SlurmdSpoolDir={dir}/spool
AuthInfo=cred_expire=0
DefMemPerCPU=100
KillWait=1
GresTypes=gpu
NodeName=g01 CPUs=8 Sockets=2 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=4000 Gres=gpu:h100:4 State=UNKNOWN
PartitionName=all Nodes=g01 Default=YES MaxTime=1:00:00 State=UP
"""

GRES = """\
NodeName=g01 Name=gpu Type=h100 Count=2 Cores=0-3
NodeName=g01 Name=gpu Type=h100 Count=2 Cores=4-7
"""


@pytest.fixture(scope="module")
def acluster():
    c = make_cluster(CONF, {"gres.conf": GRES})
    try:
        yield c
    finally:
        c.teardown()


def placement(c, job):
    detail = c.run(["scontrol", "show", "job", "-d", str(job)]).stdout
    m = re.search(r"Nodes=g01 CPU_IDs=(\S+) Mem=\d+ GRES=gpu:h100:\d+\(IDX:(\S+)\)", detail)
    assert m, detail
    return m.groups()


def test_gpus_from_one_socket_and_cpus_near_them(acluster):
    c = acluster
    first = c.sbatch("-c", "1", "--gres=gpu:1", "--wrap", "sleep 300")
    jobs = [first]
    try:
        c.wait_state(first, "RUNNING")
        assert placement(c, first) == ("0", "0")
        # Socket 0 has one GPU left, socket 1 two: the pair goes to
        # socket 1, with its cores, not GPUs 1-2 and CPUs 1-2.
        pair = c.sbatch("-c", "2", "--gres=gpu:2", "--wrap", "sleep 300")
        jobs.append(pair)
        c.wait_state(pair, "RUNNING")
        assert placement(c, pair) == ("4-5", "2-3")
        # A CPU-only job takes the lowest free CPUs, as before.
        plain = c.sbatch("-c", "2", "--wrap", "sleep 300")
        jobs.append(plain)
        c.wait_state(plain, "RUNNING")
        detail = c.run(["scontrol", "show", "job", "-d", str(plain)]).stdout
        assert "Nodes=g01 CPU_IDs=1-2 " in detail, detail
    finally:
        c.run(["scancel", *map(str, jobs)], check=False)
        for j in jobs:
            c.wait_done(j)


def test_cores_beyond_the_node_are_refused_with_the_line(tmp_path):
    (tmp_path / "gres.conf").write_text("NodeName=g01 Name=gpu Type=h100 Count=4 Cores=0-8\n")
    conf = tmp_path / "muster.conf"
    conf.write_text(CONF.format(host="h", dir=tmp_path))
    r = subprocess.run([str(BIN / "musterd"), "--validate", "--conf", str(conf)],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert r.stderr == ("musterd: error: gres.conf:1: Cores: invalid value '0-8' (core 8 is "
                        "beyond node g01, which has 8 cores (0-7))\n"), r.stderr
