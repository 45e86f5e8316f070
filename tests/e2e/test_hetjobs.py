"""Heterogeneous jobs: components separated by ':' on sbatch's command line
or '#SBATCH hetjob' lines, each a job of its own with consecutive ids, named
N+K, that start together (on distinct nodes) or not at all and end
together. What is asserted below was observed on the oracle (Slurm 22.05):
the N+K names and raw ids, scontrol's HetJobId lines, the SLURM_*_HET_GROUP_n
variables, srun --het-group's step numbering, sacct's rows and scancel's
refusal of a single component."""

import time

SCRIPT = """#!/bin/bash
#SBATCH -n1 -c2 --mem=100
#SBATCH hetjob
#SBATCH -n2 -N1 --mem=200 -p train
echo size=$SLURM_HET_SIZE pack=$SLURM_PACK_SIZE id=$SLURM_JOB_ID
echo ids=$SLURM_JOB_ID_HET_GROUP_0,$SLURM_JOB_ID_HET_GROUP_1
echo nodes=$SLURM_JOB_NODELIST,$SLURM_JOB_NODELIST_HET_GROUP_0,$SLURM_JOB_NODELIST_HET_GROUP_1
echo tasks=$SLURM_NTASKS_HET_GROUP_0,$SLURM_NTASKS_HET_GROUP_1 mem=$SLURM_MEM_PER_NODE_HET_GROUP_1
echo parts=$SLURM_JOB_PARTITION_HET_GROUP_0,$SLURM_PACK_GROUP_PARTITION,$SLURM_JOB_PARTITION_PACK_GROUP_1
srun --het-group=1 bash -c 'echo step1 $SLURM_PROCID $SLURMD_NODENAME $SLURM_JOB_ID $SLURM_STEP_ID'
srun bash -c 'echo step0 $SLURM_PROCID $SLURMD_NODENAME $SLURM_JOB_ID $SLURM_STEP_ID'
srun --het-group=2 true; echo rc=$?
"""


def sacct_rows(c, job, *more):
    r = c.run(["sacct", "-n", "-P", "-j", str(job), "-o", "JobID,JobIDRaw,Partition,State,NodeList",
               *more])
    return r.stdout.splitlines()


def test_script_components_run_with_slurms_names_and_variables(cluster):
    c = cluster
    job = c.sbatch(input=SCRIPT)
    assert c.wait_done(job) == "COMPLETED"
    lines = (c.work / f"slurm-{job}.out").read_text().splitlines()
    nodes1 = [l for l in lines if l.startswith("nodes=")][0].split(",")[2]
    assert nodes1.startswith("gpu0")  # component 1 is in train
    assert lines[:5] == [
        f"size=2 pack=2 id={job}",
        f"ids={job},{job + 1}",
        f"nodes=cpu01,cpu01,{nodes1}",
        "tasks=1,2 mem=200",
        "parts=short,,train",
    ]
    # The step of component 1 runs on its node, numbered from the job's
    # count (13.0 then 12.1 on the oracle), and knows the job by its first id.
    assert sorted(l for l in lines if l.startswith("step")) == [
        f"step0 0 cpu01 {job} 1", f"step1 0 {nodes1} {job} 0", f"step1 1 {nodes1} {job} 0"]
    assert f"srun: error: --het-group=2: job {job} has no such component (it has 2)" in lines
    assert "rc=1" in lines
    assert sacct_rows(c, job) == [
        f"{job}+0|{job}|short|COMPLETED|cpu01",
        f"{job}+0.batch|{job}.batch||COMPLETED|cpu01",
        f"{job}+0.1|{job}.1||COMPLETED|cpu01",
        f"{job}+1|{job + 1}|train|COMPLETED|{nodes1}",
        f"{job}+1.0|{job + 1}.0||COMPLETED|{nodes1}",
    ]
    assert [r.split("|")[0] for r in sacct_rows(c, f"{job}+1", "-X")] == [f"{job}+1"]


def test_command_line_components_share_a_name_and_go_as_one(cluster):
    c = cluster
    job = c.sbatch("-n1", "-t", "5", ":", "-n1", "-t", "5", "--wrap", "sleep 60")
    c.wait_state(job, "RUNNING")
    c.wait_state(job + 1, "RUNNING")
    r = c.run(["squeue", "-h", "-j", str(job), "-o", "%i|%A|%j|%T|%N"])
    rows = r.stdout.splitlines()
    # Distinct nodes, as the oracle put `-n1 : -n1` on cpu01 and cpu02.
    assert [row.split("|")[:4] for row in rows] == [
        [f"{job}+0", str(job), "wrap", "RUNNING"], [f"{job}+1", str(job + 1), "wrap", "RUNNING"]]
    assert rows[0].split("|")[4] != rows[1].split("|")[4]
    r = c.run(["squeue", "-h", "-j", f"{job}+1", "-o", "%i"])
    assert r.stdout.split() == [f"{job}+1"]
    r = c.run(["squeue", "-h", "-j", str(job), "-O", "HetJobID,HetJobIDSet,HetJobOffset,JobArrayID"])
    assert [l.split() for l in r.stdout.splitlines()] == [
        [str(job), f"{job}-{job + 1}", "0", f"{job}+0"], [str(job), f"{job}-{job + 1}", "1", f"{job}+1"]]
    show = c.run(["scontrol", "show", "job", str(job)]).stdout
    assert show.startswith(f"JobId={job} HetJobId={job} HetJobOffset=0 JobName=wrap\n"
                           f"   HetJobIdSet={job}-{job + 1}\n")
    assert f"JobId={job + 1} HetJobId={job} HetJobOffset=1 JobName=wrap\n" in show
    one = c.run(["scontrol", "show", "job", f"{job}+1"]).stdout
    assert one.startswith(f"JobId={job + 1} HetJobId={job} HetJobOffset=1")
    assert one.count("\nJobId=") == 0  # that record alone
    # One component alone cannot be cancelled (the oracle's message).
    for name in (f"{job}+1", str(job + 1)):
        r = c.run(["scancel", name], check=False)
        assert r.returncode == 1
        assert r.stderr == (f"scancel: error: Kill job error on job id {name}: Operation not "
                            "permitted on individual component of heterogeneous job\n")
    assert c.job(job + 1)["state"] == "RUNNING"
    c.run(["scancel", str(job)])
    assert c.wait_done(job) == "CANCELLED"
    assert c.wait_done(job + 1) == "CANCELLED"


def test_components_start_together_or_not_at_all(cluster):
    c = cluster
    # gpu01 is busy: the second component (both train nodes, whole) waits,
    # and so does the first, though cpu01 is free.
    blocker = c.sbatch("-w", "gpu01", "--wrap", "sleep 300")
    c.wait_state(blocker, "RUNNING")
    job = c.sbatch("-n1", ":", "-N2", "-p", "train", "--exclusive", "--wrap", "sleep 1")
    time.sleep(1)
    r = c.run(["squeue", "-h", "-j", str(job), "-o", "%i %T %r"])
    assert r.stdout.splitlines() == [f"{job}+0 PENDING Resources", f"{job}+1 PENDING Resources"]
    free = c.sbatch("--wrap", "sleep 300")  # cpu01 is not held for the waiting job
    assert c.wait_state(free, "RUNNING") == "RUNNING"
    c.cancel([blocker, free])
    assert c.wait_done(job) == "COMPLETED"
    starts = {c.job(j)["start_time"] for j in (job, job + 1)}
    assert len(starts) == 1


def test_a_bad_component_refuses_the_whole_job(cluster):
    c = cluster
    before = c.sbatch("--wrap", "true")
    r = c.run(["sbatch", "-n1", ":", "-p", "nosuch", "--wrap", "true"], check=False)
    assert r.returncode == 1
    assert "sbatch: error: Batch job submission failed: Invalid partition name specified" in r.stderr
    r = c.run(["sbatch", "-n1", ":", "-n1", "--array=1-2", "--wrap", "true"], check=False)
    assert r.returncode == 1
    assert "Job arrays of heterogeneous jobs are not supported" in r.stderr
    # Nothing was made: the next job takes the next id.
    assert c.sbatch("--wrap", "true") == before + 1
    r = c.run(["srun", "--het-group=0,1", "true"], check=False)
    assert r.returncode == 1
    assert r.stderr == ("srun: error: --het-group=1: the allocation srun makes here has 1 "
                        "component(s), one per ':' group\n")
    assert c.sbatch("--wrap", "true") == before + 2  # and made none


HET_STEPS = """#!/bin/bash
#SBATCH -n1
#SBATCH hetjob
#SBATCH -n2 -N1 -p train
srun --het-group=0,1 bash -c 'echo T $SLURM_PROCID $SLURM_NODEID $SLURM_LOCALID $SLURMD_NODENAME $SLURM_NTASKS $SLURM_STEP_ID $SLURM_STEP_TASKS_PER_NODE $SLURM_JOB_NODELIST $SLURM_HET_SIZE'
srun -l bash -c 'echo a' : bash -c 'echo b'
"""


def test_a_step_over_components_numbers_its_tasks_across_them(cluster):
    # As the oracle: one step id in each component, ranks of component 1
    # after component 0's, every task told both components' nodes.
    c = cluster
    job = c.sbatch(input=HET_STEPS)
    assert c.wait_done(job) == "COMPLETED"
    lines = (c.work / f"slurm-{job}.out").read_text().splitlines()
    tasks = sorted(l.split() for l in lines if l.startswith("T "))
    node1 = tasks[1][4]
    assert tasks == [
        ["T", "0", "0", "0", "cpu01", "3", "0", "1,2", f"cpu01,{node1}", "2"],
        ["T", "1", "1", "0", node1, "3", "0", "1,2", f"cpu01,{node1}", "2"],
        ["T", "2", "1", "1", node1, "3", "0", "1,2", f"cpu01,{node1}", "2"],
    ]
    assert sorted(l for l in lines if not l.startswith("T ")) == ["0: a", "1: b", "2: b"]
    rows = [r.split("|")[0] for r in sacct_rows(c, job)]
    assert rows == [f"{job}+0", f"{job}+0.batch", f"{job}+0.0", f"{job}+0.1", f"{job}+1",
                    f"{job}+1.0", f"{job}+1.1"]


def test_salloc_and_srun_make_heterogeneous_allocations(cluster):
    c = cluster
    r = c.run(["salloc", "-n1", ":", "-n2", "-N1", "-p", "train", "bash", "-c",
               "echo $SLURM_HET_SIZE $SLURM_JOB_ID $SLURM_JOB_ID_HET_GROUP_1 "
               "$SLURM_NTASKS_HET_GROUP_1; srun --het-group=1 -l printenv SLURMD_NODENAME | sort"])
    size, job, second, ntasks, *tasks = r.stdout.split()
    assert (size, int(second), ntasks) == ("2", int(job) + 1, "2")
    assert tasks[0] == "0:" and tasks[2] == "1:" and tasks[1] == tasks[3]
    assert tasks[1].startswith("gpu0")
    assert f"salloc: Granted job allocation {job}" in r.stderr
    states = c.run(["sacct", "-n", "-X", "-P", "-j", job, "-o", "JobID,State"]).stdout.split()
    assert states == [f"{job}+0|COMPLETED", f"{job}+1|COMPLETED"]
    # srun outside an allocation: its ':' groups are the components.
    r = c.run(["srun", "-l", "bash", "-c", "echo a $SLURM_HET_SIZE", ":", "-n2", "bash", "-c",
               "echo b $SLURM_HET_SIZE"])
    assert sorted(r.stdout.splitlines()) == ["0: a 2", "1: b 2", "2: b 2"]
