"""A network partition loses nothing and runs nothing twice: a compute
host's link is cut (its veth on the hosts' bridge goes down: no packet in
or out, no connection told) while its jobs run, for less and for more than
SlurmdTimeout, under load, then healed.

Each job's script takes an exclusive lock named after the job in the
shared directory before it does anything (flock -n): a run that finds the
lock held (another run of the same job still alive somewhere) writes
OVERLAP and fails, so a job running on two hosts at once cannot go
unnoticed."""

import time

import pytest

from test_hosts import Hosts, can_make_hosts, started

pytestmark = pytest.mark.skipif(not can_make_hosts(),
                                reason="separate hosts need root and namespaces")

TIMEOUT = 6  # SlurmdTimeout of this cluster


@pytest.fixture(scope="module")
def hosts():
    h = Hosts(name="partition", net=232)
    h.env["MUSTER_HOSTS_SLURMD_TIMEOUT"] = str(TIMEOUT)
    h.env["MUSTER_HOSTS_CRED_EXPIRE"] = "0"
    # cn1: node01, node02; cn2: node03; cn3: node04.
    yield from started(h, 3, "compute cn1..cn3 (4 nodes)")


def script(h, seconds):
    """A job that records each run (host, restart count) and fails if
    another run of it is alive; a rerun takes 2 s."""
    return ("#!/bin/bash\n"
            f"exec 9>{h.shared}/lock-$SLURM_JOB_ID\n"
            f"if ! flock -n 9; then echo OVERLAP >> {h.shared}/runs-$SLURM_JOB_ID; exit 1; fi\n"
            f"echo \"start $(hostname) ${{SLURM_RESTART_COUNT:-0}}\" >> {h.shared}/runs-$SLURM_JOB_ID\n"
            f"[ -n \"$SLURM_RESTART_COUNT\" ] && exec sleep 2\n"
            f"exec -a partition-sleep-$SLURM_JOB_ID sleep {seconds}\n")


def submit(h, seconds, *args):
    path = h.shared / f"job-{seconds}.sh"
    path.write_text(script(h, seconds))
    path.chmod(0o755)
    # A little memory each, so that several share a node.
    return h.sbatch("--mem=100", *args, str(path))


def runs(h, job):
    f = h.shared / f"runs-{job}"
    return f.read_text().splitlines() if f.exists() else []


def node_state(h, node):
    r = h.on("ctl", "sinfo", "-h", "-N", "-n", node, "-o", "%t", check=False)
    return r.stdout.split()[0] if r.stdout.split() else ""


def heal_and_rejoin(h, host, nodes):
    h.script("heal", host)
    deadline = time.time() + 30
    while time.time() < deadline:
        if all(node_state(h, n) in ("idle", "mix", "alloc") for n in nodes):
            return
        time.sleep(0.2)
    raise AssertionError(f"{nodes} did not rejoin: {[node_state(h, n) for n in nodes]}")


def leftovers(h, host, job):
    r = h.on(host, "pgrep", "-f", f"^partition-sleep-{job}$", check=False)
    return r.stdout.split()


def test_a_cut_shorter_than_slurmd_timeout_changes_nothing(hosts):
    h = hosts
    job = submit(h, 8, "-w", "node03")
    h.wait_state(job, {"RUNNING"})
    h.script("cut", "cn2")
    states = set()
    deadline = time.time() + TIMEOUT / 2
    while time.time() < deadline:
        states.add(h.state(job))
        time.sleep(0.2)
    heal_and_rejoin(h, "cn2", ["node03"])
    assert states == {"RUNNING"}, states
    assert h.wait_state(job, {"COMPLETED", "FAILED", "NODE_FAIL"}, timeout=30) == "COMPLETED"
    assert runs(h, job) == ["start cn2 0"]


def test_a_long_cut_under_load_requeues_or_fails_each_job_once_and_runs_none_twice(hosts):
    h = hosts
    # A job that may be requeued, another beside it that may not, and load
    # on every host; the host of the first is cut.
    requeue = submit(h, 60, "--requeue")
    h.wait_state(requeue, {"RUNNING"})
    node = h.on("ctl", "squeue", "-h", "-j", str(requeue), "-o", "%N").stdout.strip()
    host = {"node01": "cn1", "node02": "cn1", "node03": "cn2", "node04": "cn3"}[node]
    once = submit(h, 60, "-w", node, "--no-requeue")
    h.wait_state(once, {"RUNNING"})
    load = [submit(h, 3) for _ in range(12)]
    time.sleep(1)
    h.script("cut", host)
    cut_at = time.time()
    # Declared DOWN after SlurmdTimeout; the requeued job runs elsewhere,
    # and by then nothing of it is left on the cut host (its agent fenced
    # it, having heard nothing for SlurmdTimeout).
    assert h.wait_state(once, {"NODE_FAIL"}, timeout=TIMEOUT * 4) == "NODE_FAIL"
    assert time.time() - cut_at >= TIMEOUT - 1
    assert node_state(h, node).startswith("down")
    h.wait_state(requeue, {"RUNNING"}, timeout=30)
    assert leftovers(h, host, requeue) == [] and leftovers(h, host, once) == []
    more = [submit(h, 2) for _ in range(6)]
    time.sleep(2)
    nodes_there = [n for n, hh in {"node01": "cn1", "node02": "cn1", "node03": "cn2",
                                   "node04": "cn3"}.items() if hh == host]
    heal_and_rejoin(h, host, nodes_there)
    # The agent rejoined by itself and its nodes work again.
    again = submit(h, 1, "-w", node)
    for job in load + more + [requeue, again]:
        assert h.wait_state(job, {"COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED"}, timeout=60) \
            == "COMPLETED", (job, runs(h, job))
    assert h.state(once) == "NODE_FAIL"
    # Each ran once at a time; the requeued one twice, on two hosts.
    for job in load + more + [again, once]:
        assert "OVERLAP" not in runs(h, job) and len(runs(h, job)) <= 2, (job, runs(h, job))
    got = runs(h, requeue)
    assert len(got) == 2 and got[0] == f"start {host} 0" and got[1].endswith(" 1") and \
        not got[1].startswith(f"start {host}"), got
    # sacct keeps the killed run beside the one that completed.
    r = h.on("ctl", "sacct", "-D", "-X", "-n", "-P", "-j", str(requeue), "-o", "State")
    states = r.stdout.split()
    assert states[-1] == "COMPLETED" and len(states) == 2, states
