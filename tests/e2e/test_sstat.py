"""sstat: live figures of running steps, as the agents read them from
/proc at the moment they are asked, in Slurm 22.05's layout (the header and
the messages below were taken from the oracle's sstat)."""

import os
import re
import shutil

from conftest import BIN, DEFAULT_CONF, make_cluster, wait_for

# The oracle's `sstat -j N` header (default fields), both lines.
DEFAULT_HEADER = (
    "JobID         MaxVMSize  MaxVMSizeNode  MaxVMSizeTask  AveVMSize     MaxRSS MaxRSSNode "
    "MaxRSSTask     AveRSS MaxPages MaxPagesNode   MaxPagesTask   AvePages     MinCPU MinCPUNode "
    "MinCPUTask     AveCPU   NTasks AveCPUFreq ReqCPUFreqMin ReqCPUFreqMax ReqCPUFreqGov "
    "ConsumedEnergy  MaxDiskRead MaxDiskReadNode MaxDiskReadTask  AveDiskRead MaxDiskWrite "
    "MaxDiskWriteNode MaxDiskWriteTask AveDiskWrite TRESUsageInAve TRESUsageInMax "
    "TRESUsageInMaxNode TRESUsageInMaxTask TRESUsageInMin TRESUsageInMinNode TRESUsageInMinTask "
    "TRESUsageInTot TRESUsageOutAve TRESUsageOutMax TRESUsageOutMaxNode TRESUsageOutMaxTask "
    "TRESUsageOutMin TRESUsageOutMinNode TRESUsageOutMinTask TRESUsageOutTot \n")
HELPFORMAT_FIRST = "AveCPU              AveCPUFreq          AveDiskRead         AveDiskWrite       \n"

# Holds MIB mebibytes resident, then sleeps.
HOLD = "/usr/bin/python3 -c 'b=bytearray({mib}<<20); import time; time.sleep(120)'"
# A batch job: an srun step of two tasks holding 40 MiB each, and the batch
# shell's own python holding 60 MiB.
SCRIPT = f"""#!/bin/bash
srun -n2 {HOLD.format(mib=40)} &
{HOLD.format(mib=60)}
wait
"""

MIB = 1 << 20


def sstat(c, *args, check=True, user=None):
    return c.run(["sstat", *args], check=check, user=user)


def rows(text):
    return [line.split("|") for line in text.splitlines()]


def test_sstat_is_musters_own():
    found = shutil.which("sstat", path=make_env_path())
    assert found is not None and os.path.realpath(found).startswith(os.path.realpath(BIN))


def make_env_path():
    return f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"


def test_sstat_shows_the_batch_step_and_srun_steps_live(cluster):
    c = cluster
    job = c.sbatch("-n2", "-w", "cpu01", "-t", "5", input=SCRIPT)
    c.wait_state(job, "RUNNING")

    def both_steps():
        r = sstat(c, "-a", "-j", str(job), "-n", "-P", "--noconvert",
                  "-o", "JobID,NTasks,MaxRSS,AveRSS,MaxRSSNode,TRESUsageInTot")
        got = {row[0]: row for row in rows(r.stdout)}
        ok = (f"{job}.batch" in got and f"{job}.0" in got
              and int(got[f"{job}.0"][2]) > 40 * MIB and int(got[f"{job}.batch"][2]) > 60 * MIB)
        return got if ok else None

    got = wait_for(both_steps, what="both steps holding their memory")
    batch, step = got[f"{job}.batch"], got[f"{job}.0"]
    assert batch[1] == "1" and step[1] == "2"
    assert step[4] == "cpu01" and batch[4] == "cpu01"
    # Each task holds 40 MiB: the average is about that, the total twice it.
    assert 40 * MIB < int(step[3]) < 60 * MIB
    tot_mem = int(dict(kv.split("=") for kv in step[5].split(","))["mem"])
    assert 80 * MIB < tot_mem < 120 * MIB

    # Without -a: the lowest srun step only; the default table's header is
    # Slurm's, and memory is in K with its unit.
    r = sstat(c, "-j", str(job))
    assert r.stdout.startswith(DEFAULT_HEADER)
    lines = r.stdout.splitlines()
    assert len(lines) == 3 and lines[2].startswith(f"{job}.0 ")
    # MaxRSS: in K, or in M when it is a whole number of MiB (as Slurm).
    assert re.fullmatch(r"\d+[KM]", lines[2].split()[5]), lines[2]
    r = sstat(c, "-j", f"{job}.batch", "-n", "-p", "-o", "JobID,NTasks,ReqCPUFreq")
    assert r.stdout == f"{job}.batch|1|0|\n"

    # -i: the processes of each step, which really are the job's.
    r = sstat(c, "-i", "-a", "-j", str(job), "-n", "-P")
    pids = {row[0]: row[2].split(",") for row in rows(r.stdout)}
    assert len(pids[f"{job}.0"]) >= 2 and len(pids[f"{job}.batch"]) >= 2
    for pid in pids[f"{job}.0"]:
        env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        assert f"SLURM_JOB_ID={job}".encode() in env and b"SLURM_STEP_ID=0" in env

    # A step that is not running: Slurm's message, the header, exit 0.
    r = sstat(c, "-j", f"{job}.7", "-P", "-o", "JobID")
    assert r.returncode == 0 and r.stdout == "JobID\n"
    assert r.stderr == f"sstat: error: StepId={job}.7 not found running.\n"

    c.cancel([job])
    c.wait_done(job)
    r = sstat(c, "-j", str(job), "-n")
    assert r.returncode == 0 and r.stdout == ""
    assert r.stderr == f"sstat: error: No steps running for job {job}\n"


def test_sstat_errors_are_slurms(cluster):
    c = cluster
    r = sstat(c, "-j", "99999", "-n")
    assert r.returncode == 0
    assert r.stderr == "sstat: error: couldn't get steps for job 99999\n"
    r = sstat(c, check=False)
    assert r.returncode == 1 and r.stderr == "sstat: error: You didn't give me any jobs to stat.\n"
    r = sstat(c, "-j", "5", "-o", "jobid,bogus", check=False)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == 'sstat: error: Invalid field requested: "bogus"\n'
    r = sstat(c, "-j", "5.x", check=False)
    assert r.returncode == 1 and r.stderr == "sstat: fatal: Bad step specified: 5\n"
    r = sstat(c, "-j", "abc", check=False)
    assert r.returncode == 1 and r.stderr == "sstat: fatal: Bad job/step specified: abc\n"
    r = sstat(c, "--bogus", check=False)
    assert r.returncode == 1 and "unrecognized option '--bogus'" in r.stderr
    assert sstat(c, "--helpformat").stdout.startswith(HELPFORMAT_FIRST)
    assert sstat(c, "--usage").stdout == "Usage: sstat [options] -j <job(.stepid)>\n\tUse --help for help\n"
    assert sstat(c, "--help").stdout.startswith("sstat [<OPTION>] -j <job(.stepid)>\n")


def test_sstat_of_another_users_job_is_refused(cluster, users):
    if not users:
        return
    c = cluster
    job = c.sbatch("-w", "cpu01", "-t", "5", "--wrap", "sleep 60", user=users[0])
    c.wait_state(job, "RUNNING")
    r = sstat(c, "-j", f"{job}.batch", "-n", user=users[1])
    assert r.returncode == 0 and r.stdout == ""
    assert "Access/permission denied" in r.stderr
    # Its owner and root see it.
    assert sstat(c, "-j", f"{job}.batch", "-n", "-P", "-o", "JobID", user=users[0]).stdout == \
        f"{job}.batch\n"
    assert sstat(c, "-j", f"{job}.batch", "-n", "-P", "-o", "JobID").stdout == f"{job}.batch\n"
    c.cancel([job])


def test_sstat_adds_the_jobs_gpu_figures():
    conf = DEFAULT_CONF.replace("GresTypes=gpu\n", "GresTypes=gpu\nJobAcctGatherFrequency=1\n")
    c = make_cluster(conf)
    try:
        busy = ('for i in $(echo $CUDA_VISIBLE_DEVICES | tr , " "); do '
                'echo 30 > $MUSTER_GPU_CONTROL_DIR/$i/utilization; done; sleep 60')
        job = c.sbatch("-p", "train", "-w", "gpu01", "--gres=gpu:2", "-t", "5", "--wrap", busy)
        c.wait_state(job, "RUNNING")

        def gpu_figures():
            r = sstat(c, "-j", f"{job}.batch", "-n", "-P",
                      "-o", "TRESUsageInAve,TRESUsageInMaxNode,TRESUsageInMaxTask")
            return r.stdout if "gres/gpuutil=60," in r.stdout else None

        ave, node, task = wait_for(gpu_figures, what="the GPUs at 30% each").strip().split("|")
        # Two GPUs at 30% on gpu01, summed for the node; node-centric (-1).
        assert "gres/gpumem=" in ave and "gres/gpuutil=60," in ave
        assert "gres/gpuutil=gpu01," in node
        assert "gres/gpumem=-1,gres/gpuutil=-1," in task
    finally:
        c.teardown()
