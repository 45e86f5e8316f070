"""Batch jobs end to end: identity, directories, environment, output files,
end states and exit codes, time limits, process-tree cleanup."""

import os
import pwd
import re
import shutil
import time
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def timeout_job(cluster):
    """Submitted first so its 1-minute limit runs out while other tests run:
    the script ignores SIGTERM and leaves a detached child behind."""
    script = cluster.work / "timeout.sh"
    script.write_text("#!/bin/bash\n#SBATCH --time=1\n#SBATCH -J limit\n"
                      "setsid sleep 1000 & echo $! > child.pid\n"
                      "trap 'echo got TERM' TERM\n"
                      "while true; do sleep 0.2; done\n")
    job = cluster.sbatch(str(script))
    cluster.wait_state(job, "RUNNING")
    return job


def test_hello_runs_with_default_output(cluster, timeout_job):
    job = cluster.sbatch("--wrap", "echo hello from $SLURM_JOB_ID")
    assert cluster.wait_done(job) == "COMPLETED"
    out = cluster.work / f"slurm-{job}.out"
    assert out.read_text() == f"hello from {job}\n"
    f = cluster.scontrol_job(job)
    assert f["JobState"] == "COMPLETED"
    assert f["ExitCode"] == "0:0"


def test_job_ids_increase(cluster):
    a = cluster.sbatch("--wrap", "true")
    b = cluster.sbatch("--wrap", "true")
    assert b == a + 1


def test_runs_as_submitting_user_with_groups(cluster, users):
    if not users:
        pytest.skip("needs root to switch users")
    user = users[0]
    pw = pwd.getpwnam(user)
    job = cluster.sbatch("--wrap", "id -u; id -g; id -G; echo $HOME", user=user)
    assert cluster.wait_done(job) == "COMPLETED"
    out = cluster.work / f"slurm-{job}.out"
    lines = out.read_text().split("\n")
    assert lines[0] == str(pw.pw_uid)
    assert lines[1] == str(pw.pw_gid)
    expected_groups = sorted(os.getgrouplist(user, pw.pw_gid))
    assert sorted(int(g) for g in lines[2].split()) == expected_groups
    assert os.stat(out).st_uid == pw.pw_uid, "output file must be owned by the user"
    f = cluster.scontrol_job(job)
    assert f["UserId"].startswith(f"{user}({pw.pw_uid})")


def test_chdir_and_submit_dir(cluster):
    sub = cluster.work / "sub"
    sub.mkdir(exist_ok=True)
    other = cluster.work / "elsewhere"
    other.mkdir(exist_ok=True)
    job = cluster.sbatch("-D", str(other), "--wrap", "pwd; echo $SLURM_SUBMIT_DIR", cwd=sub)
    assert cluster.wait_done(job) == "COMPLETED"
    out = (other / f"slurm-{job}.out").read_text().split("\n")
    assert out[0] == str(other)
    assert out[1] == str(sub)


def test_slurm_environment(cluster):
    script = cluster.work / "env.sh"
    script.write_text("#!/bin/bash\n#SBATCH -J envjob -p train -N 1 -n 2 -c 3 --gres=gpu:2 --mem=2G\n"
                      "env | grep -E '^(SLURM|SLURMD|CUDA)_' | sort\n")
    job = cluster.sbatch(str(script), env={"MY_VAR": "kept"})
    assert cluster.wait_done(job) == "COMPLETED"
    env = dict(l.split("=", 1) for l in (cluster.work / f"slurm-{job}.out").read_text().splitlines())
    assert env["SLURM_JOB_ID"] == env["SLURM_JOBID"] == str(job)
    assert env["SLURM_JOB_NAME"] == "envjob"
    assert env["SLURM_JOB_PARTITION"] == "train"
    assert env["SLURM_JOB_NUM_NODES"] == env["SLURM_NNODES"] == "1"
    assert env["SLURM_JOB_NODELIST"] == env["SLURM_NODELIST"] == env["SLURMD_NODENAME"]
    assert env["SLURMD_NODENAME"] in ("gpu01", "gpu02")
    assert env["SLURM_NTASKS"] == "2"
    assert env["SLURM_CPUS_PER_TASK"] == "3"
    assert env["SLURM_CPUS_ON_NODE"] == "6"
    assert env["SLURM_MEM_PER_NODE"] == "2048"
    assert env["SLURM_SUBMIT_DIR"] == str(cluster.work)
    assert env["SLURM_SUBMIT_HOST"]
    assert env["SLURM_JOB_ACCOUNT"]
    assert env["SLURM_CLUSTER_NAME"] == "e2e"
    assert env["SLURM_GPUS_ON_NODE"] == "2"
    assert len(env["CUDA_VISIBLE_DEVICES"].split(",")) == 2
    # The gres/gpu plugin's AMD and Intel names, and slurmd's own variables.
    script.write_text("#!/bin/bash\n#SBATCH -p train --gres=gpu:2 --mem-per-cpu=500\n"
                      "env | sort\n")
    job = cluster.sbatch(str(script), env={"HOSTNAME": "login1"})
    assert cluster.wait_done(job) == "COMPLETED"
    env = dict(l.split("=", 1) for l in (cluster.work / f"slurm-{job}.out").read_text().splitlines()
               if "=" in l)
    assert env["ROCR_VISIBLE_DEVICES"] == env["ZE_AFFINITY_MASK"] == env["CUDA_VISIBLE_DEVICES"]
    assert env["SLURM_JOB_GPUS"] == env["CUDA_VISIBLE_DEVICES"]
    assert env["ENVIRONMENT"] == "BATCH"
    assert env["HOSTNAME"] == env["SLURMD_NODENAME"]
    assert env["TMPDIR"] == os.environ.get("TMPDIR", "/tmp")
    assert env["SLURM_MEM_PER_CPU"] == "500" and "SLURM_MEM_PER_NODE" not in env


def read_env(path):
    return dict(l.split("=", 1) for l in path.read_text().splitlines() if "=" in l)


def test_block_layout_and_srun_environment(cluster):
    # The oracle (slurm 22.05), sbatch -N2 -n4: SLURM_TASKS_PER_NODE and
    # SLURM_JOB_CPUS_PER_NODE 3,1, and srun inside puts tasks 0-2 on the
    # first node, 3 on the second; DefMemPerCPU shows as SLURM_MEM_PER_CPU.
    d = cluster.work / "layout"
    d.mkdir(exist_ok=True)
    job = cluster.sbatch("-p", "train", "-N2", "-n4", "-o", str(d / "out"), "--wrap",
                         f"echo $$ > {d}/shell.pid; env > {d}/batch.env; "
                         f"srun bash -c 'echo $$ > {d}/task.$SLURM_PROCID.pid; "
                         f"env > {d}/task.$SLURM_PROCID.env'; "
                         f"srun -n1 bash -c 'env > {d}/one.env'; srun -n5 true; echo five=$?")
    assert cluster.wait_done(job) == "COMPLETED"
    batch = read_env(d / "batch.env")
    assert batch["SLURM_TASKS_PER_NODE"] == "3,1"
    assert batch["SLURM_JOB_CPUS_PER_NODE"] == "3,1"
    assert batch["SLURM_CPUS_ON_NODE"] == "3"
    assert batch["SLURM_NTASKS"] == "4"
    assert batch["SLURM_MEM_PER_CPU"] == "1000" and "SLURM_MEM_PER_NODE" not in batch
    assert batch["SLURM_JOB_NODELIST"] == "gpu[01-02]"
    nodes = ["gpu01", "gpu02"]
    tasks = [read_env(d / f"task.{r}.env") for r in range(4)]
    assert [t["SLURMD_NODENAME"] for t in tasks] == [nodes[0]] * 3 + [nodes[1]]
    assert [t["SLURM_TOPOLOGY_ADDR"] for t in tasks] == [nodes[0]] * 3 + [nodes[1]]
    assert [t["SLURM_LOCALID"] for t in tasks] == ["0", "1", "2", "0"]
    assert [t["SLURM_NODEID"] for t in tasks] == ["0", "0", "0", "1"]
    assert [t["SLURM_GTIDS"] for t in tasks] == ["0,1,2"] * 3 + ["3"]
    assert [t["SLURM_CPUS_ON_NODE"] for t in tasks] == ["3", "3", "3", "1"]
    # Each task's own pid, and the shell's in the batch environment.
    assert batch["SLURM_TASK_PID"] == (d / "shell.pid").read_text().strip()
    assert [t["SLURM_TASK_PID"] for t in tasks] == [
        (d / f"task.{r}.pid").read_text().strip() for r in range(4)]
    for t in tasks:
        assert t["SLURM_STEP_TASKS_PER_NODE"] == t["SLURM_TASKS_PER_NODE"] == "3,1"
        assert t["SLURM_DISTRIBUTION"] == "block"
        assert t["SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0"] == "3,1"
        assert re.fullmatch(r"0[0-7]{3}", t["SLURM_UMASK"]), t["SLURM_UMASK"]
        assert t["SRUN_DEBUG"] == "3"
        assert t["SLURM_MEM_PER_CPU"] == "1000"
    one = read_env(d / "one.env")
    assert one["SLURM_NNODES"] == "1" and one["SLURM_TASKS_PER_NODE"] == "1"
    assert one["SLURM_DISTRIBUTION"] == "cyclic" and one["SLURM_STEP_NODELIST"] == nodes[0]
    out = (d / "out").read_text()
    assert "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1" in out
    assert f"Unable to create step for job {job}: More processors requested than permitted" in out
    assert "five=1" in out



def test_export_all_none_and_list(cluster):
    cmd = "echo A=${A:-unset} B=${B:-unset} C=${C:-unset} ID=$SLURM_JOB_ID"
    extra = {"A": "1", "B": "2"}
    j1 = cluster.sbatch("--wrap", cmd, env=extra)
    j2 = cluster.sbatch("--export=NONE", "--wrap", cmd, env=extra)
    j3 = cluster.sbatch("--export=A,C=3", "--wrap", cmd, env=extra)
    j4 = cluster.sbatch("--export=ALL,C=4", "--wrap", cmd, env=extra)
    for j in (j1, j2, j3, j4):
        assert cluster.wait_done(j) == "COMPLETED"
    read = lambda j: (cluster.work / f"slurm-{j}.out").read_text().strip()
    assert read(j1) == f"A=1 B=2 C=unset ID={j1}"
    assert read(j2) == f"A=unset B=unset C=unset ID={j2}"
    assert read(j3) == f"A=1 B=unset C=3 ID={j3}"
    assert read(j4) == f"A=1 B=2 C=4 ID={j4}"


def test_output_patterns(cluster):
    job = cluster.sbatch("-J", "pat", "-o", "out-%x-%j-%u-%N-100%%.txt", "-e", "err-%j.txt",
                         "--wrap", "echo to-out; echo to-err >&2")
    assert cluster.wait_done(job) == "COMPLETED"
    user = pwd.getpwuid(os.geteuid()).pw_name
    node = cluster.job(job)["nodelist"]
    out = cluster.work / f"out-pat-{job}-{user}-{node}-100%.txt"
    assert out.read_text() == "to-out\n"
    assert (cluster.work / f"err-{job}.txt").read_text() == "to-err\n"


def test_exit_codes_and_states(cluster):
    ok = cluster.sbatch("--wrap", "exit 0")
    fail = cluster.sbatch("--wrap", "exit 3")
    sig = cluster.sbatch("--wrap", "kill -9 $$")
    assert cluster.wait_done(ok) == "COMPLETED"
    assert cluster.wait_done(fail) == "FAILED"
    assert cluster.wait_done(sig) == "FAILED"
    assert cluster.scontrol_job(ok)["ExitCode"] == "0:0"
    assert cluster.scontrol_job(fail)["ExitCode"] == "3:0"
    assert cluster.scontrol_job(sig)["ExitCode"] == "0:9"
    r = cluster.run(["squeue", "-h", "-t", "all", "-j", f"{ok},{fail},{sig}", "-o", "%i %T"])
    states = dict(l.split() for l in r.stdout.splitlines())
    assert states == {str(ok): "COMPLETED", str(fail): "FAILED", str(sig): "FAILED"}


def test_cancel_kills_detached_children(cluster):
    script = cluster.work / "detach.sh"
    script.write_text("#!/bin/bash\nsetsid sleep 1000 & echo $! > detach-$SLURM_JOB_ID.pid\n"
                      "nohup sleep 1000 >/dev/null 2>&1 & echo $! >> detach-$SLURM_JOB_ID.pid\n"
                      "sleep 1000\n")
    job = cluster.sbatch(str(script))
    cluster.wait_state(job, "RUNNING")
    pidfile = cluster.work / f"detach-{job}.pid"
    deadline = time.time() + 10
    while time.time() < deadline and len(pidfile.read_text().split() if pidfile.exists() else []) < 2:
        time.sleep(0.05)
    pids = [int(p) for p in pidfile.read_text().split()]
    cluster.run(["scancel", str(job)])
    assert cluster.wait_done(job) == "CANCELLED"
    f = cluster.scontrol_job(job)
    assert f["JobState"] == "CANCELLED"
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists(), f"detached child {pid} survived scancel"


def test_time_limit_forms_accepted(cluster):
    forms = {"10": "00:10:00", "10:30": "00:11:00", "1:00:00": "01:00:00", "1-2": "1-02:00:00",
             "1-2:30": "1-02:30:00", "1-2:30:15": "1-02:31:00", "UNLIMITED": "UNLIMITED"}
    for form, shown in forms.items():
        job = cluster.sbatch("-H", "-p", "train", "-t", form, "--wrap", "true")
        assert cluster.scontrol_job(job)["TimeLimit"] == shown, form
        cluster.run(["scancel", str(job)])
    r = cluster.run(["sbatch", "-t", "bogus", "--wrap", "true"], check=False)
    assert r.returncode == 255
    assert "Invalid --time specification" in r.stderr


def test_partition_default_time(cluster):
    job = cluster.sbatch("-H", "--wrap", "true")
    assert cluster.scontrol_job(job)["TimeLimit"] == "01:00:00"
    cluster.run(["scancel", str(job)])


def test_timeout_ends_job(cluster, timeout_job):
    # Runs last in this module: by now the 1-minute limit has passed or is close.
    assert cluster.wait_done(timeout_job, timeout=120) == "TIMEOUT"
    f = cluster.scontrol_job(timeout_job)
    assert f["JobState"] == "TIMEOUT"
    child = int((cluster.work / "child.pid").read_text())
    assert not Path(f"/proc/{child}").exists(), "detached child survived the time limit"
    out = (cluster.work / f"slurm-{timeout_job}.out").read_text()
    assert "got TERM" in out, "the job must get SIGTERM before SIGKILL"


def test_memory_limit_is_enforced(cluster):
    if os.geteuid() != 0 or not Path("/sys/fs/cgroup").exists():
        pytest.skip("cgroups need root")
    hog = "import time; b = bytearray(300 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); time.sleep(1)"
    job = cluster.sbatch("--mem=100M", "--wrap", f"/usr/bin/python3 -c \"{hog}\"")
    state = cluster.wait_done(job)
    if state != "OUT_OF_MEMORY" and not cluster.job(job).get("max_rss_kb"):
        pytest.skip("no usable memory cgroup on this machine")
    assert state == "OUT_OF_MEMORY"
    f = cluster.scontrol_job(job)
    assert f["JobState"] == "OUT_OF_MEMORY"
    assert f["ExitCode"] == "0:125"
    rss = cluster.job(job)["max_rss_kb"]
    assert 50 * 1024 < rss < 140 * 1024, rss
    ok = cluster.sbatch("--mem=200M", "--wrap", "/usr/bin/python3 -c \"b = bytearray(50 * 1024 * 1024)\"")
    assert cluster.wait_done(ok) == "COMPLETED"
    assert cluster.job(ok)["max_rss_kb"] > 40 * 1024


def test_cpus_confined_to_allocated_cores_on_a_real_node(cluster):
    """A node named as the machine itself gets cpusets of the CPU ids the job
    holds; emulated nodes (made-up ids on a shared machine) stay unconfined."""
    cpus = sorted(os.sched_getaffinity(0))
    if os.geteuid() != 0 or len(cpus) < 2 or not Path("/sys/fs/cgroup").exists():
        pytest.skip("needs root, cgroups and two CPUs")
    from conftest import make_cluster
    conf = (
        "ClusterName=real\nSlurmctldHost={host}\nStateSaveLocation={dir}/ctld\n"
        "SlurmdSpoolDir={dir}/spool\nKillWait=1\n"
        f"NodeName={{host}} CPUs={len(cpus)} RealMemory=1000 State=UNKNOWN\n"
        "PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n")
    real = make_cluster(conf)
    try:
        show = "grep Cpus_allowed_list /proc/self/status; sleep 4"
        a = real.sbatch("-c", "1", "--mem=10M", "--wrap", show)
        b = real.sbatch("-c", "1", "--mem=10M", "--wrap", show)
        real.wait_state(a, "RUNNING")
        real.wait_state(b, "RUNNING")
        detail = real.run(["scontrol", "show", "job", "-d", str(b)]).stdout
        assert f"CPU_IDs=1 Mem=10" in detail, detail
        assert real.wait_done(a) == "COMPLETED" and real.wait_done(b) == "COMPLETED"
        seen = [(real.work / f"slurm-{j}.out").read_text().split()[-1] for j in (a, b)]
        if seen == [f"{cpus[0]}-{cpus[-1]}"] * 2:
            pytest.skip("no usable cpuset cgroup on this machine")
        assert seen == ["0", "1"], seen
    finally:
        real.teardown()
        shutil.rmtree(real.root, ignore_errors=True)
    emulated = cluster.sbatch("-c", "1", "-p", "short", "-w", "cpu01", "--wrap",
                              "grep Cpus_allowed_list /proc/self/status")
    assert cluster.wait_done(emulated) == "COMPLETED"
    out = (cluster.work / f"slurm-{emulated}.out").read_text().split()[-1]
    assert out == f"{cpus[0]}-{cpus[-1]}", out
