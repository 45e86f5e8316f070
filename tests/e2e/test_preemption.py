"""Preemption of a low-priority partition by a high one
(PreemptType=preempt/partition_prio), through the real daemons: the
handbook's scenario, with REQUEUE (and GraceTime's SIGTERM first) and
CANCEL; and preemption by QOS (preempt/qos), set up with sacctmgr."""
import time

import pytest

from conftest import BIN, DEFAULT_CONF, make_cluster

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


QOS_CONF = DEFAULT_CONF + "PreemptType=preempt/qos\nPreemptMode=CANCEL\n"


@pytest.fixture(scope="module")
def qcluster():
    c = make_cluster(QOS_CONF)
    try:
        yield c
    finally:
        c.teardown()


def sacctmgr(c, *args, check=True):
    """Muster's own sacctmgr, never a Slurm client's of the same name."""
    return c.run([str(BIN / "sacctmgr"), *args], check=check)


def test_qos_preempts_the_qos_it_names_with_that_qos_terms(qcluster, tmp_path):
    c = qcluster
    sacctmgr(c, "-i", "add", "qos", "scav", "PreemptMode=requeue", "GraceTime=2")
    r = sacctmgr(c, "-i", "add", "qos", "high", "Priority=100", "Preempt=scav")
    assert "  Preempt                  = scav" in r.stdout.splitlines(), r.stdout
    listed = sacctmgr(c, "-P", "-n", "list", "qos", "high,scav",
                      "format=name,preempt,preemptmode,gracetime").stdout
    assert listed == "high|scav|cluster|00:00:00\nscav||requeue|00:00:02\n", listed
    # A loop, or a QOS that does not exist, is refused and changes nothing.
    r = sacctmgr(c, "-i", "modify", "qos", "scav", "set", "Preempt=high", check=False)
    assert r.returncode == 1 and "QOS Preemption loop detected" in r.stdout + r.stderr, r
    r = sacctmgr(c, "-i", "modify", "qos", "high", "set", "Preempt+=nosuch", check=False)
    assert r.returncode == 1 and "bad qos 'nosuch'" in r.stdout + r.stderr, r
    assert sacctmgr(c, "-P", "-n", "list", "qos", "high,scav",
                    "format=name,preempt").stdout == "high|scav\nscav|\n"

    marker = tmp_path / "term"
    victim = c.sbatch("-p", "train", "--qos=scav", "-w", "gpu01", "--gres=gpu:8", "--wrap",
                      f"trap 'echo got TERM > {marker}; exit 0' TERM; sleep 300 & wait")
    c.wait_state(victim, "RUNNING")
    # The normal QOS names none: its job waits and preempts nothing.
    plain = c.sbatch("-p", "short", "-w", "gpu01", "--gres=gpu:8", "--wrap", "sleep 5")
    high = None
    try:
        time.sleep(2.5)
        assert c.job(plain)["state"] == "PENDING"
        assert c.job(victim)["state"] == "RUNNING"
        c.run(["scancel", str(plain)])
        # high names scav, in another partition: SIGTERM, GraceTime 2 s,
        # and scav's REQUEUE, not the cluster's CANCEL.
        high = c.sbatch("-p", "short", "--qos=high", "-w", "gpu01", "--gres=gpu:8", "--wrap",
                        "sleep 30")
        c.wait_state(high, "RUNNING", timeout=20)
        assert marker.read_text().strip() == "got TERM"
        j = c.job(victim)
        assert j["state"] == "PENDING", j
        assert j["failure_detail"] == f"preempted by job {high}", j
    finally:
        c.run(["scancel", str(victim), str(plain)] + ([str(high)] if high else []), check=False)
        for j in (victim, plain) + ((high,) if high else ()):
            c.wait_done(j)
