"""Scripts written for Slurm, as the handbook and workflow tools write them,
run unchanged; AdminUsers act on others' jobs and on nodes."""

import pwd
import re
import time

import pytest

from conftest import DEFAULT_CONF, make_cluster


def test_handbook_ddp_style_script(cluster):
    train = cluster.work / "train.py"
    train.write_text(
        "import os\n"
        "rank = int(os.environ['SLURM_PROCID'])\n"
        "world = int(os.environ['SLURM_NTASKS'])\n"
        "local = int(os.environ['SLURM_LOCALID'])\n"
        "gpus = os.environ.get('CUDA_VISIBLE_DEVICES', '')\n"
        "print(f'rank {rank}/{world} local {local} master {os.environ[\"MASTER_ADDR\"]} gpus {gpus}')\n")
    script = cluster.work / "ddp.sbatch"
    script.write_text(
        "#!/bin/bash\n"
        "#SBATCH --job-name=ddp\n"
        "#SBATCH --partition=train\n"
        "#SBATCH --nodes=2\n"
        "#SBATCH --ntasks-per-node=2\n"
        "#SBATCH --gpus-per-node=2\n"
        "#SBATCH --cpus-per-task=4\n"
        "#SBATCH --mem=32G\n"
        "#SBATCH --time=00:30:00\n"
        "#SBATCH --output=%x-%j.out\n"
        "#SBATCH --error=%x-%j.err\n"
        "\n"
        "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
        "export MASTER_PORT=29500\n"
        "echo \"nodes: $SLURM_JOB_NODELIST ($SLURM_JOB_NUM_NODES)\"\n"
        "srun /usr/bin/python3 train.py\n")
    job = cluster.sbatch(str(script))
    state = cluster.wait_done(job)
    text = (cluster.work / f"ddp-{job}.out").read_text()
    assert state == "COMPLETED", text + (cluster.work / f"ddp-{job}.err").read_text()
    out = text.splitlines()
    assert out[0] == "nodes: gpu[01-02] (2)"
    ranks = sorted(l for l in out if l.startswith("rank"))
    assert len(ranks) == 4
    assert all("/4 " in r and "master gpu01" in r for r in ranks)
    assert all(len(r.split("gpus ")[1].split(",")) == 2 for r in ranks)


def test_dask_jobqueue_style_script(cluster):
    logs = cluster.work / "dask-logs"
    logs.mkdir()
    script = cluster.work / "dask.sh"
    script.write_text("#!/usr/bin/env bash\n\n#SBATCH -J dask-worker\n"
                      f"#SBATCH -e {logs}/dask-worker-%J.err\n#SBATCH -o {logs}/dask-worker-%J.out\n"
                      "#SBATCH -p short\n#SBATCH -n 1\n#SBATCH --cpus-per-task=2\n#SBATCH --mem=2G\n"
                      "#SBATCH -t 00:30:00\n\necho worker $SLURM_JOB_ID\n")
    r = cluster.run(["sbatch", str(script)])
    job = int(re.findall(r"\d+", r.stdout)[0])
    assert cluster.wait_done(job) == "COMPLETED"
    assert (logs / f"dask-worker-{job}.out").read_text() == f"worker {job}\n"


def test_toil_and_parsl_polling(cluster):
    r = cluster.run(["sbatch", "-J", "toil_job_1_x", "--signal=B:INT@30", "--export=PATH",
                     "--partition=short", "--mem=100", "--time=0:30", "-o", "/dev/null", "-e", "/dev/null",
                     "--wrap", "trap 'echo usr1' USR1; while true; do sleep 0.1; done"])
    job = int(r.stdout.split()[-1])
    cluster.wait_state(job, "RUNNING")
    r = cluster.run(["squeue", "-h", "--format", "%i %t %M"])
    assert any(l.startswith(f"{job} R ") for l in r.stdout.splitlines())
    r = cluster.run(["squeue", "--noheader", "--format=%i %t", "--job", str(job)])
    assert r.stdout.split() == [str(job), "R"]
    out = cluster.run(["scontrol", "show", "job", str(job)]).stdout
    records = [rec for rec in out.split("\n\n") if rec.strip()]
    assert len(records) == 1 and f"JobId={job}" in records[0]
    cluster.run(["scancel", str(job), "--signal", "USR1"])  # submitit puts options after ids
    cluster.run(["scancel", str(job)])
    assert cluster.wait_done(job) == "CANCELLED"


ADMIN_CONF = DEFAULT_CONF + "AdminUsers=mtest2\n"


def test_admin_users_may_act_on_others(users):
    if not users:
        pytest.skip("needs root to switch users")
    c = make_cluster(ADMIN_CONF)
    try:
        job = c.sbatch("-H", "--wrap", "true", user=users[0])
        r = c.run(["scontrol", "update", "NodeName=cpu01", "State=DRAIN", "Reason=maint"],
                  user=users[1])
        assert r.returncode == 0
        r = c.run(["sinfo", "-R", "-h", "-o", "%E|%u|%U|%N"])
        uid = pwd.getpwnam(users[1]).pw_uid
        assert r.stdout.strip() == f"maint|{users[1]}|{users[1]}({uid})|cpu01"
        c.run(["scontrol", "update", "NodeName=cpu01", "State=RESUME"], user=users[1])
        c.run(["scancel", str(job)], user=users[1])
        assert c.job(job)["state"] == "CANCELLED"
        f = c.run(["scontrol", "show", "job", str(job)]).stdout
        assert "JobState=CANCELLED" in f
    finally:
        c.teardown()
