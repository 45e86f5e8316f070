"""Preemption of a low-priority partition by a high one
(PreemptType=preempt/partition_prio), through the real daemons: the
handbook's scenario, with REQUEUE (and GraceTime's SIGTERM first) and
CANCEL."""
import time

import pytest

from conftest import DEFAULT_CONF, make_cluster

CONF = DEFAULT_CONF.replace(
    "PartitionName=short", "PartitionName=low Nodes=gpu01 PriorityTier=1 PreemptMode=REQUEUE "
    "GraceTime=2 MaxTime=1:00:00 State=UP\n"
    "PartitionName=scavenge Nodes=gpu02 PriorityTier=1 PreemptMode=CANCEL MaxTime=1:00:00 "
    "State=UP\n"
    "PartitionName=high Nodes=gpu[01-02] PriorityTier=10 MaxTime=1:00:00 State=UP\n"
    "PartitionName=short", 1) + "PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\n"


@pytest.fixture(scope="module")
def pcluster():
    c = make_cluster(CONF)
    try:
        yield c
    finally:
        c.teardown()


def test_high_partition_preempts_low_with_requeue(pcluster, tmp_path):
    c = pcluster
    marker = tmp_path / "term"
    # Two low jobs on gpu01; the one started last is preempted, the other
    # is spared because the high job needs only four GPUs.
    old = c.sbatch("-p", "low", "--gres=gpu:4", "--wrap", "sleep 300")
    c.wait_state(old, "RUNNING")
    time.sleep(1.1)
    new = c.sbatch("-p", "low", "--gres=gpu:4", "--wrap",
                   f"trap 'echo got TERM > {marker}; exit 0' TERM; sleep 300 & wait")
    c.wait_state(new, "RUNNING")
    time.sleep(0.5)
    high = c.sbatch("-p", "high", "-w", "gpu01", "--gres=gpu:4", "--wrap", "sleep 30")
    try:
        # GraceTime=2: SIGTERM first (the job's trap sees it), then the end.
        c.wait_state(high, "RUNNING", timeout=20)
        assert marker.read_text().strip() == "got TERM"
        j = c.job(new)
        # REQUEUE: back in the queue under its id, saying why.
        assert j["state"] == "PENDING", j
        assert j["restart_count"] == 1, j
        assert j["failure_detail"] == f"preempted by job {high}", j
        assert c.job(old)["state"] == "RUNNING"
    finally:
        c.run(["scancel", str(old), str(new), str(high)], check=False)
        for j in (old, new, high):
            c.wait_done(j)


def test_cancel_mode_ends_the_job_preempted(pcluster):
    c = pcluster
    low = c.sbatch("-p", "scavenge", "--gres=gpu:8", "--wrap", "sleep 300")
    c.wait_state(low, "RUNNING")
    high = c.sbatch("-p", "high", "-w", "gpu02", "--gres=gpu:8", "--wrap", "sleep 5")
    try:
        assert c.wait_done(low, timeout=20) == "PREEMPTED"
        c.wait_state(high, "RUNNING", timeout=20)
        r = c.run(["sacct", "-n", "-X", "-j", str(low), "-o", "State%15"])
        assert r.stdout.split() == ["PREEMPTED"], r.stdout
        shown = c.run(["scontrol", "show", "job", str(low)]).stdout
        assert "JobState=PREEMPTED " in shown, shown
    finally:
        c.run(["scancel", str(low), str(high)], check=False)
        c.wait_done(high)
