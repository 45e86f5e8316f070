"""Prolog, Epilog, PrologSlurmctld and EpilogSlurmctld: run around each job
with Slurm's variables; a failing Prolog drains its node and requeues the
job held, a failing PrologSlurmctld requeues it, a failing Epilog drains
the node."""

import os
import re
import time

from conftest import DEFAULT_CONF, make_cluster, wait_for

HOOK = """#!/bin/sh
echo "{name} $SLURM_SCRIPT_CONTEXT $SLURM_JOB_ID $SLURM_JOB_USER $SLURM_JOB_UID $SLURM_JOB_PARTITION \
node=$SLURMD_NODENAME nodes=$SLURM_JOB_NODELIST gpus=$CUDA_VISIBLE_DEVICES ec=$SLURM_JOB_EXIT_CODE2" >> {log}
if [ -e {dir}/fail-{name} ] || [ -e "{dir}/fail-{name}-$SLURMD_NODENAME" ]; then
  echo "{name} says no on ${{SLURMD_NODENAME:-the controller}}"; exit 3
fi
exit 0
"""


def hooked_cluster(tmp_path):
    os.chmod(tmp_path, 0o755)
    log = tmp_path / "hooks.log"
    keys = ""
    for name, key in (("prolog", "Prolog"), ("epilog", "Epilog"),
                      ("pctld", "PrologSlurmctld"), ("ectld", "EpilogSlurmctld")):
        path = tmp_path / f"{name}.sh"
        path.write_text(HOOK.format(name=name, log=log, dir=tmp_path))
        path.chmod(0o755)
        keys += f"{key}={path}\n"
    c = make_cluster(DEFAULT_CONF + keys)
    return c, log


def lines(log, job, name=None):
    if not log.exists():
        return []
    out = [l.split() for l in log.read_text().splitlines()]
    return [l for l in out if l[2] == str(job) and (name is None or l[0] == name)]


def test_hooks_run_around_the_job_with_slurms_variables(tmp_path):
    c, log = hooked_cluster(tmp_path)
    try:
        job = c.sbatch("-p", "train", "-w", "gpu02", "--gres=gpu:2", "-t", "5", "--wrap",
                       f"echo job >> {log}.job; exit 4")
        assert c.wait_done(job) == "FAILED"
        got = wait_for(lambda: len(lines(log, job)) == 4 and lines(log, job), what="four hooks")
        order = [(l[0], l[1]) for l in got]
        assert order == [("pctld", "prolog_slurmctld"), ("prolog", "prolog_slurmd"),
                         ("epilog", "epilog_slurmd"), ("ectld", "epilog_slurmctld")], order
        prolog = lines(log, job, "prolog")[0]
        assert prolog[3:6] == ["root", "0", "train"]
        assert "node=gpu02" in prolog and "nodes=gpu02" in prolog
        assert any(f.startswith("gpus=") and len(f.split(",")) == 2 for f in prolog), prolog
        # musterd's hooks know no node of their own; the epilog learns the exit.
        assert "node=" in lines(log, job, "pctld")[0]
        assert "ec=4:0" in lines(log, job, "ectld")[0]
        assert (tmp_path / "hooks.log.job").read_text() == "job\n"
        assert c.run(["sinfo", "-h", "-R"]).stdout.strip() == ""
    finally:
        c.teardown()


def metrics_text(c):
    status, text = c.api("GET", "/metrics")
    assert status == 200
    return text


def test_a_failing_prolog_drains_the_node_and_requeues_the_job_held(tmp_path):
    c, log = hooked_cluster(tmp_path)
    try:
        (tmp_path / "fail-prolog-gpu01").write_text("")
        job = c.sbatch("-p", "train", "-w", "gpu01", "-t", "5", "--wrap", "true")
        wait_for(lambda: c.job(job)["state"] == "PENDING" and c.job(job)["restart_count"] == 1,
                 what="the requeue")
        r = c.run(["squeue", "-h", "-j", str(job), "-o", "%T|%r"])
        assert r.stdout.strip() == "PENDING|job_requeued_in_held_state", r.stdout
        rows = c.run(["sinfo", "-h", "-R", "-o", "%n|%E"]).stdout.split("\n")
        assert any(row.startswith("gpu01|Prolog error: ") and "prolog says no on gpu01" in row
                   for row in rows), rows
        # A fault, not an operator's maintenance, for the alerts.
        assert re.search(r'muster_node_state\{node="gpu01",state="drain\w*",by="prolog"\} 1',
                         metrics_text(c))
        # The job never ran: no epilog for it.
        assert not lines(log, job, "epilog")
        # Held: it stays pending even once the node is back.
        (tmp_path / "fail-prolog-gpu01").unlink()
        c.run(["scontrol", "update", "NodeName=gpu01", "State=RESUME"])
        time.sleep(1.5)
        assert c.job(job)["state"] == "PENDING"
        c.run(["scontrol", "release", str(job)])
        assert c.wait_done(job, timeout=30) == "COMPLETED"
        assert len(lines(log, job, "prolog")) == 2 and len(lines(log, job, "epilog")) == 1
    finally:
        c.teardown()


def test_a_failing_prolog_slurmctld_requeues_and_a_failing_epilog_drains(tmp_path):
    c, log = hooked_cluster(tmp_path)
    try:
        (tmp_path / "fail-pctld").write_text("")
        job = c.sbatch("-p", "train", "-t", "5", "--wrap", "true")
        wait_for(lambda: c.job(job)["restart_count"] >= 1, what="the requeue")
        assert c.job(job)["state"] == "PENDING"
        assert "PrologSlurmctld" in c.job(job)["failure_detail"]
        assert not lines(log, job, "prolog")  # never sent to a node
        (tmp_path / "fail-pctld").unlink()
        (tmp_path / "fail-epilog-gpu02").write_text("")
        other = c.sbatch("-p", "train", "-w", "gpu02", "-t", "5", "--wrap", "true")
        assert c.wait_done(other, timeout=30) == "COMPLETED"  # its end stands
        wait_for(lambda: "Epilog error: " in c.run(["sinfo", "-h", "-R", "-o", "%n|%E"]).stdout,
                 what="the epilog's drain")
        assert re.search(r'muster_node_state\{node="gpu02",state="drain\w*",by="epilog"\} 1',
                         metrics_text(c))
        assert c.wait_done(job, timeout=30) == "COMPLETED"
    finally:
        c.teardown()
