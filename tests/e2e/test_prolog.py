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


def alloc_cluster(tmp_path, flags):
    """A cluster whose Prolog logs each run and may be told to fail on a
    node (fail-prolog-<node>) or to take its time (slow-prolog)."""
    os.chmod(tmp_path, 0o755)
    log = tmp_path / "hooks.log"
    prolog = tmp_path / "prolog.sh"
    prolog.write_text(HOOK.format(name="prolog", log=log, dir=tmp_path).replace(
        "exit 0\n", f"while [ -e {tmp_path}/slow-prolog ]; do sleep 0.1; done\nexit 0\n"))
    prolog.chmod(0o755)
    c = make_cluster(DEFAULT_CONF + f"Prolog={prolog}\nPrologFlags={flags}\n")
    return c, log


def prolog_nodes(log, job):
    return sorted(f.split("=", 1)[1] for l in lines(log, job, "prolog") for f in l if f.startswith("node="))


def test_prolog_flags_alloc_runs_the_prolog_on_every_node_first(tmp_path):
    c, log = alloc_cluster(tmp_path, "Alloc")
    try:
        # A job of two nodes: the Prolog runs on both, the job waits
        # (CONFIGURING) until both have succeeded.
        (tmp_path / "slow-prolog").write_text("")
        job = c.sbatch("-N2", "-w", "gpu[01-02]", "-p", "train", "-t", "5", "-o", "alloc-%j.out",
                       "--wrap", f"echo ran >> {log}.job")
        wait_for(lambda: prolog_nodes(log, job) == ["gpu01", "gpu02"], what="both prologs")
        assert c.run(["squeue", "-h", "-j", str(job), "-o", "%t|%T"]).stdout.strip() == "CF|CONFIGURING"
        assert "JobState=CONFIGURING" in c.run(["scontrol", "show", "job", str(job)]).stdout
        assert not (tmp_path / "hooks.log.job").exists()
        (tmp_path / "slow-prolog").unlink()
        assert c.wait_done(job) == "COMPLETED"
        assert (tmp_path / "hooks.log.job").read_text() == "ran\n"
        # Each node's run knows its node and the job's nodes.
        for l in lines(log, job, "prolog"):
            assert "nodes=gpu[01-02]" in l, l

        # An allocation (srun outside one) gets its prologs too.
        r = c.run(["srun", "-N2", "-w", "gpu01,cpu01", "hostname"], timeout=60)
        assert r.returncode == 0, r.stderr
        alloc = int(c.run(["sacct", "-X", "-n", "-P", "-o", "JobID", "--name", "hostname"]).stdout.split()[-1])
        assert prolog_nodes(log, alloc) == ["cpu01", "gpu01"]

        # A failure on one node drains that node and requeues the job held;
        # the batch script never ran.
        (tmp_path / "fail-prolog-gpu02").write_text("")
        job = c.sbatch("-N2", "-w", "gpu[01-02]", "-p", "train", "-t", "5", "--wrap",
                       f"echo ran >> {log}.job2")
        wait_for(lambda: c.job(job)["state"] == "PENDING" and c.job(job)["restart_count"] == 1,
                 what="the requeue")
        assert c.run(["squeue", "-h", "-j", str(job), "-o", "%r"]).stdout.strip() == \
            "job_requeued_in_held_state"
        rows = c.run(["sinfo", "-h", "-R", "-o", "%n|%E"]).stdout.splitlines()
        assert any(r.startswith("gpu02|Prolog error: ") for r in rows), rows
        assert not any(r.startswith("gpu01|") for r in rows), rows
        assert not (tmp_path / "hooks.log.job2").exists()
    finally:
        c.teardown()


def test_prolog_flags_contain_gives_each_job_an_extern_step(tmp_path):
    c, log = alloc_cluster(tmp_path, "Contain")
    try:
        job = c.sbatch("-N2", "-w", "gpu[01-02]", "-p", "train", "-t", "5", "--wrap",
                       "srun -N1 -n1 true; sleep 2")
        c.wait_state(job, "RUNNING")
        steps = wait_for(lambda: [l.split() for l in c.run(["squeue", "-h", "-s", "-j", str(job),
                                                              "-o", "%i %j %N"]).stdout.splitlines()]
                         if "extern" in c.run(["squeue", "-h", "-s", "-j", str(job)]).stdout else None,
                         what="the extern step in squeue -s")
        assert [str(job) + ".extern", "extern", "gpu[01-02]"] in steps, steps
        assert c.wait_done(job) == "COMPLETED"
        assert prolog_nodes(log, job) == ["gpu01", "gpu02"]

        def rows():
            out = c.run(["sacct", "-j", str(job), "-n", "-P", "-o", "JobID,JobName,State,NNodes,ExitCode"]).stdout
            return [r.split("|") for r in out.splitlines()]
        got = wait_for(lambda: rows() if any(r[0].endswith(".extern") and r[2] == "COMPLETED" for r in rows())
                       else None, what="the extern step in sacct")
        assert [f"{job}.extern", "extern", "COMPLETED", "2", "0:0"] in got, got
        assert [r[0] for r in got] == [str(job), f"{job}.batch", f"{job}.extern", f"{job}.0"], got
    finally:
        c.teardown()
