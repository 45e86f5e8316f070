"""topology/tree through the real daemons: topology.conf beside
muster.conf, multi-node jobs under as few leaf switches as they can,
--switches=N@wait, and the job's SLURM_TOPOLOGY_ADDR."""
import time

import pytest

from conftest import Cluster, make_cluster

CONF = """\
ClusterName=topo
SlurmctldHost={host}
StateSaveLocation={dir}/ctld
SlurmdSpoolDir={dir}/spool
AuthInfo=cred_expire=0
DefMemPerCPU=1000
KillWait=1
TopologyPlugin=topology/tree
SchedulerParameters=bf_interval=1
NodeName=n[01-04] CPUs=4 RealMemory=4000 State=UNKNOWN
PartitionName=all Nodes=n[01-04] Default=YES MaxTime=1:00:00 State=UP
"""

TOPOLOGY = """\
SwitchName=s1 Nodes=n[01-02]
SwitchName=s2 Nodes=n[03-04]
SwitchName=top Switches=s[1-2]
"""


@pytest.fixture(scope="module")
def tcluster():
    c = make_cluster(CONF, {"topology.conf": TOPOLOGY})
    try:
        yield c
    finally:
        c.teardown()


def test_scontrol_shows_the_switches(tcluster):
    out = tcluster.run(["scontrol", "show", "topology"]).stdout
    assert out.splitlines() == [
        "SwitchName=s1 Level=0 LinkSpeed=1 Nodes=n[01-02]",
        "SwitchName=s2 Level=0 LinkSpeed=1 Nodes=n[03-04]",
        "SwitchName=top Level=1 LinkSpeed=1 Nodes=n[01-04] Switches=s[1-2]",
    ]


def test_jobs_go_under_one_leaf_switch(tcluster):
    c = tcluster
    busy = c.sbatch("-w", "n01", "-c", "4", "--wrap", "sleep 300")
    jobs = [busy]
    try:
        c.wait_state(busy, "RUNNING")
        out = c.work / "topo.out"
        # First fit would take n02 and n03, under two leaves.
        pair = c.sbatch("-N", "2", "-o", str(out), "--wrap",
                        "echo $SLURM_TOPOLOGY_ADDR $SLURM_TOPOLOGY_ADDR_PATTERN; sleep 300")
        jobs.append(pair)
        c.wait_state(pair, "RUNNING")
        assert c.nodes_of(pair) == "n[03-04]"
        deadline = time.time() + 10
        while time.time() < deadline and not (out.exists() and out.read_text()):
            time.sleep(0.05)
        assert out.read_text().split() == ["top.s2.n03", "switch.switch.node"]
    finally:
        c.cancel(jobs)


def test_switches_waits_for_its_leaf_count_then_runs(tcluster):
    c = tcluster
    busy = c.sbatch("-w", "n01", "-c", "4", "--wrap", "sleep 300")
    jobs = [busy]
    try:
        c.wait_state(busy, "RUNNING")
        # Three nodes are free, but only under two leaves: --switches=1
        # waits its 5 seconds, then takes them.
        submitted = time.time()
        wide = c.sbatch("-N", "3", "--switches=1@0:05", "--wrap", "sleep 300")
        jobs.append(wide)
        time.sleep(1)
        assert c.job(wide)["state"] == "PENDING"
        c.wait_state(wide, "RUNNING", timeout=30)
        assert time.time() - submitted >= 4
        assert c.nodes_of(wide) == "n[02-04]"
    finally:
        c.cancel(jobs)
    r = c.run(["sbatch", "--switches=many", "--wrap", "true"], check=False)
    assert r.returncode != 0
    assert "Invalid --switches specification" in r.stderr, r.stderr


def test_topology_errors_name_the_line(tmp_path):
    (tmp_path / "topology.conf").write_text("SwitchName=s1 Nodes=n01\nSwitchName=s2 Nodes=n09\n")
    c = Cluster(tmp_path, CONF)
    r = c.run(["muster", "up", "--conf", str(c.conf)], check=False, timeout=60)
    try:
        assert r.returncode != 0
        assert "topology.conf:2: switch s2: unknown node 'n09'" in r.stderr, r.stderr
    finally:
        c.teardown()
