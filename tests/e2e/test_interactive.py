"""salloc, and srun outside an allocation: an allocation without a batch
script, its SLURM_* variables as Slurm 22.05's salloc gives them, released
with the command's exit code (checked against the oracle)."""

import os
import pty
import re
import time

from conftest import BIN, read_pty

# What Slurm 22.05's salloc puts in its command's environment (the oracle):
# a default job, and one with -n2 -c2 --mem=100.
SALLOC_VARS = ("SLURM_CLUSTER_NAME SLURM_CONF SLURM_JOBID SLURM_JOB_ACCOUNT "
               "SLURM_JOB_CPUS_PER_NODE SLURM_JOB_ID SLURM_JOB_NAME SLURM_JOB_NODELIST "
               "SLURM_JOB_NUM_NODES SLURM_JOB_PARTITION SLURM_JOB_QOS SLURM_NNODES SLURM_NODELIST "
               "SLURM_NODE_ALIASES SLURM_SUBMIT_DIR SLURM_SUBMIT_HOST SLURM_TASKS_PER_NODE").split()
SALLOC_VARS_SIZED = sorted(SALLOC_VARS + ["SLURM_CPUS_PER_TASK", "SLURM_MEM_PER_NODE",
                                          "SLURM_NPROCS", "SLURM_NTASKS"])

LIST_VARS = "env | grep ^SLURM_ | cut -d= -f1 | sort | tr '\\n' ' '"


def sacct_rows(cluster, job):
    deadline = time.time() + 10
    while time.time() < deadline:
        r = cluster.run(["sacct", "-n", "-P", "-j", str(job), "-o", "JobID,JobName,State,ExitCode"])
        rows = r.stdout.split()
        if rows and "RUNNING" not in r.stdout:
            return rows
        time.sleep(0.1)
    return rows


def test_salloc_runs_the_command_in_the_allocation(cluster):
    assert cluster.run(["bash", "-c", "command -v salloc"]).stdout.strip() == str(BIN / "salloc")
    r = cluster.run(["salloc", "-N1", "bash", "-c", "echo $SLURM_JOB_ID $SLURM_NNODES; " + LIST_VARS])
    job, nnodes, *names = r.stdout.split()
    assert nnodes == "1"
    assert names == sorted(SALLOC_VARS)
    assert r.stderr.splitlines() == [f"salloc: Granted job allocation {job}",
                                     f"salloc: Relinquishing job allocation {job}"]
    assert sacct_rows(cluster, job) == [f"{job}|interactive|COMPLETED|0:0"]
    r = cluster.run(["salloc", "-N1", "-n2", "-c2", "--mem=100", "bash", "-c", LIST_VARS])
    assert r.stdout.split() == SALLOC_VARS_SIZED


def test_salloc_exits_with_the_commands_status(cluster):
    r = cluster.run(["salloc", "-N1", "bash", "-c", "echo $SLURM_JOB_ID; exit 5"], check=False)
    assert r.returncode == 5
    job = r.stdout.strip()
    assert sacct_rows(cluster, job) == [f"{job}|interactive|FAILED|5:0"]


def test_salloc_refuses_what_sbatch_refuses(cluster):
    r = cluster.run(["salloc", "--cpus-per-task=0", "true"], check=False)
    assert r.returncode == 1
    assert r.stderr.strip() == 'salloc: error: Invalid numeric value "0" for --cpus-per-task.'


def test_srun_outside_an_allocation_makes_its_own(cluster):
    r = cluster.run(["srun", "-N1", "-n2", "-l", "bash", "-c",
                     "echo $SLURM_JOB_ID $SLURM_STEP_ID $SLURM_PROCID $SLURMD_NODENAME; "
                     "exit $((3 * SLURM_PROCID))"],
                    check=False)
    assert r.returncode == 3
    lines = sorted(r.stdout.splitlines())
    job, node = lines[0].split()[1], lines[0].split()[4]
    assert lines == [f"0: {job} 0 0 {node}", f"1: {job} 0 1 {node}"]
    # The failed task's node, as the oracle's srun names it.
    assert r.stderr.splitlines() == [f"srun: error: {node}: task 1: Exited with exit code 3"], \
        r.stderr
    # Named after its command, as the oracle's srun names its allocation.
    assert sacct_rows(cluster, job) == [f"{job}|bash|FAILED|3:0", f"{job}.0|bash|FAILED|3:0"]


def test_srun_waits_for_its_allocation(cluster):
    busy = cluster.sbatch("-N3", "--exclusive", "--wrap", "sleep 3")
    cluster.wait_state(busy, "RUNNING")
    r = cluster.run(["srun", "-N1", "hostname"], timeout=60)
    assert r.returncode == 0
    assert "srun: job " in r.stderr and "queued and waiting for resources" in r.stderr
    assert "has been allocated resources" in r.stderr
    assert "Pending job allocation" not in r.stderr


def test_cancelling_an_allocation_ends_it_and_its_command(cluster):
    start = time.time()
    r = cluster.run(["salloc", "-N1", "bash", "-c", "echo $SLURM_JOB_ID; scancel $SLURM_JOB_ID; sleep 60"],
                    check=False)
    assert time.time() - start < 30
    job = r.stdout.strip()
    assert f"salloc: Job allocation {job} has been revoked." in r.stderr
    assert sacct_rows(cluster, job)[0].startswith(f"{job}|interactive|CANCELLED")


def failed_task_lines(cluster, args):
    """srun ARGS bash -c '...exit...' outside an allocation, or inside one
    (args starting with salloc): its exit code, each rank's node (from the
    tasks' output) and srun's error lines (salloc's own left out)."""
    r = cluster.run(args, check=False, timeout=60)
    nodes = dict(line.split() for line in r.stdout.splitlines())
    return r.returncode, nodes, sorted(l for l in r.stderr.splitlines() if l.startswith("srun:"))


def expected_lines(nodes, how):
    """Slurm's lines for tasks that ended together: one per node and way of
    ending ("srun: error: cpu01: tasks 0-2: Exited with exit code 6"),
    the ranks in range form; `how` gives each rank's words, None if fine."""
    groups = {}
    for rank, node in nodes.items():
        if how(int(rank)) is not None:
            groups.setdefault((node, how(int(rank))), []).append(int(rank))
    lines = []
    for (node, words), ranks in groups.items():
        ranks.sort()
        runs, start = [], ranks[0]
        for a, b in zip(ranks, ranks[1:] + [None]):
            if b != a + 1:
                runs.append(str(start) if start == a else f"{start}-{a}")
                start = b
        task = "task" if len(ranks) == 1 else "tasks"
        lines.append(f"srun: error: {node}: {task} {','.join(runs)}: {words}")
    return sorted(lines)


def test_srun_names_the_node_of_each_failed_task(cluster):
    # The oracle's srun -N2 -n4: a line per node and exit code, naming the
    # node, tasks ending alike on a node together ("cpu01: tasks 0-2"),
    # outside an allocation and inside one.
    say = "echo $SLURM_PROCID $SLURMD_NODENAME; "
    for prefix in ([], ["salloc", "-N2", "-n4"]):
        rc, nodes, lines = failed_task_lines(
            cluster, prefix + ["srun", "-N2", "-n4", "bash", "-c", say + "exit $SLURM_PROCID"])
        assert rc == 3, lines
        assert len(set(nodes.values())) == 2, nodes
        assert lines == expected_lines(
            nodes, lambda r: f"Exited with exit code {r}" if r else None), (nodes, lines)
        rc, nodes, lines = failed_task_lines(
            cluster, prefix + ["srun", "-N2", "-n4", "bash", "-c", say + "exit 6"])
        assert rc == 6, lines
        assert lines == expected_lines(nodes, lambda r: "Exited with exit code 6"), (nodes, lines)
        # One node holds three of the tasks: their line is a range.
        assert any(": tasks " in line for line in lines), lines
    # Ranks that are not consecutive, and a signal's name.
    rc, nodes, lines = failed_task_lines(
        cluster, ["srun", "-N1", "-n4", "bash", "-c",
                  say + "if [ $SLURM_PROCID = 2 ]; then kill -9 $$; fi; exit $((SLURM_PROCID != 0))"])
    assert rc == 137, lines
    assert lines == sorted([f"srun: error: {nodes['0']}: tasks 1,3: Exited with exit code 1",
                            f"srun: error: {nodes['0']}: task 2: Killed"]), lines


def test_srun_kill_on_bad_exit_ends_the_other_tasks(cluster):
    # As the oracle: the failed task's line, Slurm's two Terminat* lines,
    # the others end by SIGTERM and srun exits 128 + 15.
    start = time.time()
    r = cluster.run(["srun", "-N1", "-n2", "-K", "bash", "-c",
                     "if [ $SLURM_PROCID = 1 ]; then exit 3; fi; sleep 30"], check=False)
    assert time.time() - start < 20
    assert r.returncode == 143
    lines = r.stderr.splitlines()
    step = lines[1].rsplit("=", 1)[1]
    node = lines[0].split()[2].rstrip(":")
    assert lines == [f"srun: error: {node}: task 1: Exited with exit code 3",
                     f"srun: launch/slurm: _step_signal: Terminating StepId={step}",
                     f"srun: error: {node}: task 0: Terminated",
                     f"srun: Force Terminated StepId={step}"]


def test_srun_gpus_per_task_gives_each_task_its_own(cluster, tmp_path):
    # Slurm's --gpus-per-task implies --gpu-bind=per_task: each task sees
    # its own GPUs; without it every task sees the step's.
    out = tmp_path / "gpus.out"
    job = cluster.sbatch("-N1", "-n2", "--gres=gpu:4", "-o", str(out), "--wrap",
                         "srun -l --gpus-per-task=2 bash -c 'echo $CUDA_VISIBLE_DEVICES "
                         "$SLURM_STEP_GPUS $SLURM_GPUS_PER_TASK'; "
                         "srun -l bash -c 'echo all $CUDA_VISIBLE_DEVICES'; "
                         "srun --gpus-per-task=3 true; echo rc=$?")
    cluster.wait_done(job)
    lines = out.read_text().splitlines()
    assert sorted(lines[:2]) == ["0: 0,1 0,1,2,3 2", "1: 2,3 0,1,2,3 2"]
    assert sorted(lines[2:4]) == ["0: all 0,1,2,3", "1: all 0,1,2,3"]
    assert re.fullmatch(rf"srun: error: Unable to create step for job {job}: gpu0\d has 4 GPUs of "
                        "the job for 2 tasks of 3 GPUs each", lines[4]), lines
    assert lines[5:] == ["rc=1"]


def test_an_allocation_is_not_requeued(cluster):
    r = cluster.run(["salloc", "-N1", "bash", "-c",
                     "echo $SLURM_JOB_ID; scontrol requeue $SLURM_JOB_ID; echo requeue=$?"],
                    check=False)
    job, status = r.stdout.split()
    assert status == "requeue=1"
    assert f"Only batch jobs are accepted or processed for job {job}" in r.stderr
    assert sacct_rows(cluster, job) == [f"{job}|interactive|COMPLETED|0:0"]


def test_srun_stdin_goes_to_the_tasks_that_take_it(cluster):
    # As the oracle: every task reads all of srun's stdin by default; -i N
    # gives it to task N only; -i none to no task.
    r = cluster.run(["srun", "-N1", "-n3", "-l", "cat"], input="a\nb\n")
    assert sorted(r.stdout.splitlines()) == ["0: a", "0: b", "1: a", "1: b", "2: a", "2: b"]
    r = cluster.run(["srun", "-N1", "-n3", "-i", "2", "-l", "cat"], input="a\n")
    assert r.stdout.splitlines() == ["2: a"]
    r = cluster.run(["srun", "-N1", "-n2", "--input=none", "-l", "cat"], input="a\n")
    assert r.stdout == ""
    r = cluster.run(["srun", "-n2", "-i", "5", "true"], check=False)
    assert r.returncode == 1
    assert r.stderr.strip() == "srun: error: --input=5: there are only 2 tasks"
    r = cluster.run(["srun", "-i", "in.txt", "true"], check=False)
    assert r.returncode == 1
    assert "--input=in.txt: Muster's srun takes all, none or a task id" in r.stderr


def test_srun_pty_without_a_terminal_is_disregarded(cluster):
    r = cluster.run(["srun", "-N1", "--pty", "bash", "-c", "tty; echo ran"], input="", check=False)
    assert r.stdout.splitlines() == ["not a tty", "ran"]
    assert r.stderr.splitlines()[:2] == [
        "srun: error: ioctl(TIOCGWINSZ): Inappropriate ioctl for device",
        "srun: error: Not using a pseudo-terminal, disregarding --pty option"]


def test_scancel_of_a_step_ends_that_step_only(cluster):
    # As the oracle: the step's tasks are killed, srun says so, the step is
    # CANCELLED 0:9 and the job goes on.
    job = cluster.sbatch("-N1", "-n2", "--wrap",
                         "srun -l sleep 60 & sleep 1; srun -l true; wait; echo after $?")
    cluster.wait_state(job, "RUNNING")
    deadline = time.time() + 20
    while time.time() < deadline and f"{job}.0 " not in cluster.run(
            ["squeue", "-s", "-h", "-o", "%i "]).stdout:
        time.sleep(0.1)
    cluster.run(["scancel", f"{job}.0"])
    assert cluster.wait_done(job) == "COMPLETED"
    out = (cluster.work / f"slurm-{job}.out").read_text()
    # Killed together on one node: one line, as the oracle's srun prints it.
    node = cluster.run(["sacct", "-n", "-X", "-P", "-j", str(job), "-o", "NodeList"]).stdout.strip()
    assert f"srun: error: {node}: tasks 0-1: Killed" in out, out
    rows = sacct_rows(cluster, job)
    assert f"{job}.0|sleep|CANCELLED|0:9" in rows and f"{job}.1|true|COMPLETED|0:0" in rows, rows
    r = cluster.run(["scancel", f"{job}.5"], check=False)
    assert r.returncode == 1
    assert r.stderr.strip() == f"scancel: error: Kill job error on job id {job}.5: Invalid job step id specified"


def test_srun_mpi_pmix_on_one_host_says_to_use_mpirun(cluster):
    r = cluster.run(["srun", "-n2", "--mpi=pmix", "true"], check=False)
    assert r.returncode == 1
    assert "srun: error: --mpi=pmix needs AuthType (a cluster of hosts)" in r.stderr
    r = cluster.run(["srun", "--mpi=pmi2", "true"], check=False)
    assert r.stderr.strip() == "srun: error: Invalid MPI type 'pmi2', --mpi=list for acceptable types"


def test_salloc_no_shell_keeps_the_allocation_for_srun_jobid(cluster):
    # As the oracle: granted, exits 0, the job runs on (named no-shell)
    # until cancelled; srun --jobid runs steps in it.
    r = cluster.run(["salloc", "--no-shell", "-N1"])
    job = r.stderr.split()[-1]
    assert r.stderr == f"salloc: Granted job allocation {job}\n"
    assert cluster.job(int(job))["state"] == "RUNNING"
    r = cluster.run(["srun", f"--jobid={job}", "bash", "-c", "echo $SLURM_JOB_ID $SLURM_STEP_ID"])
    assert r.stdout.split() == [job, "0"]
    cluster.run(["scancel", job])
    assert sacct_rows(cluster, job)[0].startswith(f"{job}|no-shell|CANCELLED")
    r = cluster.run(["srun", f"--jobid={job}", "true"], check=False)
    assert r.returncode == 1 and f"Unable to confirm allocation for job {job}" in r.stderr


def test_salloc_immediate_gives_up_on_busy_nodes(cluster):
    busy = cluster.sbatch("-N3", "--exclusive", "--wrap", "sleep 30")
    cluster.wait_state(busy, "RUNNING")
    r = cluster.run(["salloc", "-I", "-N1", "true"], check=False)
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    job = lines[1].split()[3]
    assert lines == ["salloc: error: Unable to allocate resources: Requested nodes are busy",
                     f"salloc: Job allocation {job} has been revoked."]
    r = cluster.run(["salloc", "--immediate=1", "-N1", "true"], check=False)
    assert r.returncode == 1
    assert r.stderr.splitlines()[-2:] == [
        f"salloc: Job allocation {int(job) + 1} has been revoked.",
        "salloc: error: Unable to allocate resources: Connection timed out"]
    assert sacct_rows(cluster, job)[0].startswith(f"{job}|interactive|CANCELLED")
    cluster.run(["scancel", str(busy)])


def test_steps_wait_for_cpus_other_steps_hold_unless_overlap(cluster):
    # As the oracle (Slurm 22.05): a step does not share CPUs with another
    # step of the job; srun says it waits and when it got them. --overlap
    # shares them at once.
    job = cluster.sbatch("-N1", "-n2", "--wrap",
                         "srun -n2 sleep 2 & sleep 0.5; "
                         "s=$(date +%s.%N); srun -n1 --overlap true; echo overlap $(echo \"$(date +%s.%N) - $s < 1\" | bc); "
                         "s=$(date +%s.%N); srun -n1 true; echo waited $(echo \"$(date +%s.%N) - $s > 1\" | bc); wait")
    assert cluster.wait_done(job, timeout=60) == "COMPLETED"
    out = (cluster.work / f"slurm-{job}.out").read_text().splitlines()
    assert out == ["overlap 1",
                   f"srun: Job {job} step creation temporarily disabled, retrying (Requested nodes are busy)",
                   f"srun: Step created for job {job}",
                   "waited 1"], out


def srun_at_a_terminal(cluster, *args):
    """srun started at a terminal of its own, as at a login shell: its
    pid and the terminal's side to type at and read."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cluster.work)
        os.execve(str(BIN / "srun"), ["srun", *args], cluster.env)
    return pid, fd


def test_ctrl_c_at_the_terminal_reports_then_twice_aborts_the_step(cluster):
    # The tasks are out of the terminal's reach: Ctrl-C is srun's to
    # answer, as across hosts and under Slurm.
    pid, fd = srun_at_a_terminal(cluster, "-n2", "-l", "bash", "-c",
                                 "trap 'echo got INT; exit 3' INT; echo started; "
                                 "while :; do sleep 0.1; done")
    try:
        out = read_pty(fd, "started")
        out += read_pty(fd, "started", timeout=5) if out.count("started") < 2 else ""
        os.write(fd, b"\x03")
        out = read_pty(fd, ": running")
        step = re.search(r"srun: (StepId=\d+\.0) tasks 0-1: running", out)
        assert "srun: interrupt (one more within 1 sec to abort)" in out and step, out
        time.sleep(1.5)
        os.write(fd, b"\x03")
        time.sleep(0.2)
        os.write(fd, b"\x03")
        out = read_pty(fd, "Exited with exit code 3", timeout=20)
        out += read_pty(fd, "never appears", timeout=2)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 3, out
    lines = out.replace("\r", "").replace("^C", "").splitlines()
    # One Ctrl-C reached no task; the second, within a second, all.
    assert "got INT" not in out.split("sending Ctrl-C")[0], out
    at = lines.index(f"srun: sending Ctrl-C to {step.group(1)}")
    assert lines[at:at + 3] == [
        f"srun: sending Ctrl-C to {step.group(1)}", "srun: forcing job termination",
        "srun: Job step aborted: Waiting up to 3 seconds for job step to finish."], out
    tail = sorted(lines[at + 3:])
    assert tail[:2] == ["0: got INT", "1: got INT"], out
    assert re.fullmatch(r"srun: error: \w+: tasks 0-1: Exited with exit code 3", tail[2]), out
    assert len(tail) == 3, out


def test_ctrl_c_under_pty_is_the_programs(cluster):
    pid, fd = srun_at_a_terminal(cluster, "--pty", "bash", "-c",
                                 "trap 'echo trapped' INT; echo ready; sleep 1; sleep 1; echo after")
    try:
        read_pty(fd, "ready")
        os.write(fd, b"\x03")
        out = read_pty(fd, "after")
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, out
    assert "trapped" in out and "after" in out and "srun:" not in out, out


def test_step_memory_features_and_gpus_inside_an_allocation(cluster):
    # As the oracle: --mem and --mem-per-cpu are the step's own, within the
    # job's; -C picks the job's nodes with the features; -G with a job
    # without GPUs is refused with Slurm's lines.
    script = (
        "srun --mem=50 -n1 true; "
        "srun --mem=999999 -n1 true; echo mem=$?; "
        "srun -N2 --mem-per-cpu=10 true; "
        "srun -C cpu -n1 bash -c 'echo $SLURM_STEP_NODELIST'; "
        "srun -C cpu -N2 true; echo features=$?; "
        "srun -G 1 true; echo gpus=$?; echo $SLURM_JOB_ID")
    r = cluster.run(["salloc", "-N2", "-n2", "--mem=200", "-w", "gpu01,cpu01", "bash", "-c",
                     script])
    lines = r.stdout.split()
    job = lines[-1]
    assert lines[:-1] == ["mem=1", "cpu01", "features=1", "gpus=1"], r.stdout + r.stderr
    assert (f"srun: error: Unable to create step for job {job}: Memory required by task is not "
            "available") in r.stderr
    assert (f"srun: error: Unable to create step for job {job}: Requested node configuration is "
            "not available") in r.stderr
    assert ("srun: error: Step requested GRES but job doesn't have GRES\n"
            f"srun: error: Unable to create step for job {job}: Invalid generic resource (gres) "
            "specification") in r.stderr
    rows = cluster.run(["sacct", "-n", "-P", "-j", job, "-o", "JobID,AllocTRES"]).stdout.split()
    assert f"{job}.0|cpu=1,mem=50M,node=1" in rows, rows
    assert f"{job}.1|cpu=2,mem=20M,node=2" in rows, rows


def test_a_steps_own_time_limit_ends_it_as_timeout(cluster):
    # srun -t inside an allocation: the oracle's lines and TIMEOUT with the
    # tasks' exit code (Slurm rounds the limit up to a minute; Muster
    # keeps the seconds).
    r = cluster.run(["salloc", "-N1", "bash", "-c",
                     "srun -t 0:02 bash -c 'trap \"echo got TERM; exit 7\" TERM; sleep 60 & wait'; "
                     "echo rc=$? $SLURM_JOB_ID"], timeout=60)
    assert r.stdout.splitlines()[0] == "got TERM", r.stdout
    rc, job = r.stdout.splitlines()[1].split()
    assert rc == "rc=7", r.stdout
    assert re.search(rf"slurmstepd-cpu01: error: \*\*\* STEP {job}\.0 ON cpu01 CANCELLED AT "
                     r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d DUE TO TIME LIMIT \*\*\*", r.stderr), r.stderr
    assert "srun: error: cpu01: task 0: Exited with exit code 7" in r.stderr
    assert f"{job}.0|bash|TIMEOUT|7:0" in sacct_rows(cluster, job), r.stderr
