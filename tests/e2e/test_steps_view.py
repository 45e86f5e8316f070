"""Running steps in squeue -s and scontrol show step, in Slurm 22.05's
layout (checked on the oracle: the same columns, widths and order, each
job's numbered steps before its batch step in squeue, after it in
scontrol)."""

import re
import time


def running_step(cluster):
    # In train (gpu[01-02]): a job without GPUs in short would take cpu01
    # first.
    job = cluster.sbatch("-p", "train", "-N2", "-J", "stepjob", "--wrap",
                         "srun -N2 -n2 -J mystep sleep 30")
    deadline = time.time() + 20
    while time.time() < deadline:
        if f"{job}.0" in cluster.run(["squeue", "-s", "-h"]).stdout:
            return job
        time.sleep(0.1)
    raise AssertionError("the step never showed")


def test_squeue_steps(cluster):
    job = running_step(cluster)
    try:
        lines = cluster.run(["squeue", "-s", "-j", str(job)]).stdout.splitlines()
        assert lines[0] == "         STEPID     NAME PARTITION     USER      TIME NODELIST"
        assert re.fullmatch(rf" +{job}\.0   mystep     train     root +\d+:\d\d gpu\[01-02\]", lines[1]), lines
        assert re.fullmatch(rf" +{job}\.batch    batch     train     root +\d+:\d\d gpu01", lines[2]), lines
        r = cluster.run(["squeue", "-s", f"{job}.0", "-h", "-o", "%i|%j|%N"])
        assert r.stdout == f"{job}.0|mystep|gpu[01-02]\n"
    finally:
        cluster.run(["scancel", str(job)])


def test_scontrol_show_step(cluster):
    job = running_step(cluster)
    try:
        out = cluster.run(["scontrol", "show", "step", f"{job}.0"]).stdout
        lines = out.split("\n")
        assert re.fullmatch(rf"StepId={job}\.0 UserId=0 StartTime=\S+ TimeLimit=UNLIMITED", lines[0])
        assert lines[1:7] == ["   State=RUNNING Partition=train NodeList=gpu[01-02]",
                              "   Nodes=2 CPUs=2 Tasks=2 Name=mystep Network=(null)",
                              "   TRES=cpu=2,mem=2000M,node=2",
                              "   ResvPorts=(null)",
                              "   CPUFreqReq=Default Dist=Block",
                              lines[6]]
        assert re.fullmatch(r"   SrunHost:Pid=\S+:\d+", lines[6])
        every = cluster.run(["scontrol", "show", "step"]).stdout
        assert every.index(f"StepId={job}.batch ") < every.index(f"StepId={job}.0 ")
        assert "   Nodes=1 CPUs=0 Tasks=1 Name=batch Network=(null)\n   TRES=(null)\n" in every
    finally:
        cluster.run(["scancel", str(job)])
    r = cluster.run(["scontrol", "show", "step", "99999.0"], check=False)
    assert r.returncode == 1
    assert r.stderr.strip() == "slurm_get_job_steps error: Invalid job id specified"
