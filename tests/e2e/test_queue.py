"""The queue as users know it: job arrays, dependencies, holds, begin
times, nice and top, requeue, signals before the time limit, job updates,
partition rules and why a job waits. Driven only through the commands."""

import os
import re
import shutil
import time

import pytest

from conftest import make_cluster, wait_for

# slurmstepd's line for a job stopped before its end, as Slurm 22.05 writes
# it into the job's stderr.
STOP_LINE = re.compile(r"slurmstepd-\w+: error: \*\*\* JOB \d+ ON \w+ CANCELLED AT "
                       r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d( DUE TO [A-Z ,]+)? \*\*\*")


def records(cluster, array_id):
    """Every record of an array as (task, raw id, state), from squeue -t all."""
    r = cluster.run(["squeue", "-h", "-r", "-t", "all", "-j", str(array_id), "-o", "%K %A %T"])
    out = []
    for line in r.stdout.splitlines():
        task, raw, state = line.split()
        out.append((task, int(raw), state))
    return out


def wait_array_done(cluster, array_id, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = cluster.run(["squeue", "-h", "-j", str(array_id), "-t", "PD,R,CG", "-o", "%i"], check=False)
        if r.returncode == 0 and not r.stdout.strip():
            return
        time.sleep(0.2)
    raise AssertionError(f"array {array_id} did not finish")


def show(cluster, job):
    return cluster.run(["scontrol", "show", "job", str(job)]).stdout


# ---- arrays -------------------------------------------------------------

def test_array_tasks_run_within_their_throttle(cluster):
    script = ("echo $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT "
              "$SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX $SLURM_ARRAY_TASK_STEP $SLURM_JOB_ID; "
              "date +%s.%N; sleep 1; date +%s.%N")
    a = cluster.sbatch("--array=0-7%2", "-p", "short", "-w", "cpu01", "-o", "arr_%A_%a.out",
                       "--wrap", script)
    time.sleep(0.5)
    r = cluster.run(["squeue", "-h", "-j", str(a), "-t", "PD", "-o", "%i %r"])
    pending = r.stdout.strip()
    assert pending.startswith(f"{a}_[") and pending.endswith("%2] JobArrayTaskLimit"), r.stdout
    wait_array_done(cluster, a)
    spans, raw_ids = [], set()
    for task in range(8):
        lines = (cluster.work / f"arr_{a}_{task}.out").read_text().split("\n")
        env = lines[0].split()
        assert env[:6] == [str(a), str(task), "8", "0", "7", "1"], lines
        raw_ids.add(int(env[6]))
        spans.append((float(lines[1]), float(lines[2])))
    assert len(raw_ids) == 8, "every task runs under its own job id"
    assert a in raw_ids, "the last task started keeps the array's id"
    for start, _ in spans:
        running = sum(1 for s, e in spans if s <= start < e)
        assert running <= 2, f"{running} tasks ran at once under %2"
    states = {t: s for t, _, s in records(cluster, a)}
    assert states == {str(t): "COMPLETED" for t in range(8)}, states
    # sacct -j of the array: every task, by its array id and its own raw id.
    r = cluster.run(["sacct", "-j", str(a), "-X", "-n", "-P", "-o", "JobID,JobIDRaw,State"])
    rows = [line.split("|") for line in r.stdout.splitlines()]
    assert [row[0] for row in rows] == [f"{a}_{t}" for t in range(8)], rows
    assert {int(row[1]) for row in rows} == raw_ids and {row[2] for row in rows} == {"COMPLETED"}


def test_array_ids_address_single_tasks(cluster):
    a = cluster.sbatch("-H", "--array=1-5", "-p", "short", "--wrap", "sleep 30")
    r = cluster.run(["squeue", "-h", "-j", str(a), "-o", "%i %r"])
    assert r.stdout.strip() == f"{a}_[1-5] JobHeldUser"
    # One task released runs under its own id; the rest stay held together.
    cluster.run(["scontrol", "release", f"{a}_2"])
    cluster.run(["scancel", f"{a}_4"])
    deadline = time.time() + 20
    while time.time() < deadline:
        states = {t: s for t, _, s in records(cluster, a)}
        if states.get("2") == "RUNNING":
            break
        time.sleep(0.1)
    assert states.get("2") == "RUNNING", states
    # A pending task cancelled leaves its array, as in Slurm: no record of
    # its own, and scontrol says so on stdout.
    assert "4" not in states, states
    r = cluster.run(["scontrol", "show", "job", f"{a}_4"], check=False)
    assert r.returncode == 1 and r.stdout == f"Job {a}_4 not found\n"
    r = cluster.run(["squeue", "-h", "-j", str(a), "-t", "PD", "-o", "%i"])
    assert r.stdout.split() == [f"{a}_[1,3,5]"]
    assert [states.get(t) for t in "135"] == ["PENDING"] * 3, states
    cluster.run(["scontrol", "update", f"JobId={a}", "ArrayTaskThrottle=1"])
    assert "ArrayTaskThrottle=1" in show(cluster, a)
    first = show(cluster, f"{a}_2").split("\n")[0]
    assert first.startswith("JobId=") and f"ArrayJobId={a} ArrayTaskId=2 " in first, first
    # The whole array at once.
    cluster.run(["scancel", str(a)])
    deadline = time.time() + 20
    while time.time() < deadline and any(s not in ("CANCELLED",) for _, _, s in records(cluster, a)):
        time.sleep(0.1)
    assert {s for _, _, s in records(cluster, a)} == {"CANCELLED"}


def test_squeue_lists_array_tasks_in_order(cluster):
    a = cluster.sbatch("-H", "--array=0-39", "--wrap", "true")
    r = cluster.run(["squeue", "-h", "-r", "-j", str(a), "-o", "%i"])
    assert r.stdout.split() == [f"{a}_{t}" for t in range(40)], r.stdout
    cluster.run(["scancel", f"{a}_5"])
    r = cluster.run(["squeue", "-h", "-r", "-j", str(a), "-t", "PD", "-o", "%i"])
    assert r.stdout.split() == [f"{a}_{t}" for t in range(40) if t != 5], r.stdout
    cluster.run(["scancel", str(a)])


def test_other_users_cannot_touch_an_array(cluster, users):
    if len(users) < 2:
        pytest.skip("needs root for the test users")
    a = cluster.sbatch("-H", "--array=1-3", "--wrap", "true", user=users[0])
    # Slurm's words: scancel refuses with "Access/permission denied", a job
    # update (release, update) with "Invalid user id", an array task's as
    # "<id>: <error>".
    for argv, line in ((["scancel", f"{a}_2"],
                        f"scancel: error: Kill job error on job id {a}_2: Access/permission denied"),
                       (["scontrol", "release", f"{a}_2"], f"{a}_2: Invalid user id"),
                       (["scontrol", "update", f"JobId={a}_2", "Nice=10"],
                        f"{a}_2: Invalid user id")):
        r = cluster.run(argv, user=users[1], check=False)
        assert r.returncode != 0 and r.stderr.splitlines() == [line], (argv, r.stderr)
    # Nothing was split off or changed.
    assert cluster.run(["squeue", "-h", "-j", str(a), "-o", "%i %r"]).stdout.strip() == \
        f"{a}_[1-3] JobHeldUser"
    cluster.run(["scancel", str(a)])


def test_bad_array_specs_are_refused(cluster):
    before = cluster.run(["squeue", "-h", "-t", "all", "-o", "%A"]).stdout
    for spec in ("5-3", "x", "0-2000"):
        r = cluster.run(["sbatch", f"--array={spec}", "--wrap", "true"], check=False)
        assert r.returncode != 0
        assert "sbatch: error: Batch job submission failed: Invalid job array specification" in r.stderr
    assert cluster.run(["squeue", "-h", "-t", "all", "-o", "%A"]).stdout == before


# ---- dependencies -------------------------------------------------------

def test_pipeline_runs_in_order_without_polling(cluster):
    log = cluster.work / "pipeline.log"
    step = lambda name: f"echo {name} start $(date +%s.%N) >> {log}; sleep 0.5; echo {name} end $(date +%s.%N) >> {log}"
    prep = cluster.sbatch("-J", "prep", "--wrap", step("prep"))
    train = cluster.sbatch("-J", "train", f"--dependency=afterok:{prep}", "--wrap", step("train"))
    evals = cluster.sbatch("-J", "eval", f"-d", f"afterok:{train}", "--wrap", step("eval"))
    report = cluster.sbatch("-J", "report", f"--dependency=afterany:{evals}:{train}", "--wrap", step("report"))
    time.sleep(0.3)
    f = cluster.scontrol_job(report)
    assert f["JobState"] == "PENDING" and f["Reason"] == "Dependency", f
    assert f["Dependency"].startswith("afterany:"), f
    assert cluster.wait_done(report, timeout=60) == "COMPLETED"
    events = [line.split() for line in log.read_text().splitlines()]
    order = [(e[0], e[1]) for e in events]
    assert order == [("prep", "start"), ("prep", "end"), ("train", "start"), ("train", "end"),
                     ("eval", "start"), ("eval", "end"), ("report", "start"), ("report", "end")], order
    assert cluster.scontrol_job(report)["Dependency"] == "(null)"


def test_dependency_that_can_never_be_met(cluster):
    bad = cluster.sbatch("--wrap", '[ -n "$SLURM_RESTART_COUNT" ] && exit 0; exit 3')
    stuck = cluster.sbatch(f"--dependency=afterok:{bad}", "--wrap", "true")
    killed = cluster.sbatch(f"--dependency=afterok:{bad}", "--kill-on-invalid-dep=yes", "--wrap", "true")
    rescue = cluster.sbatch(f"--dependency=afternotok:{bad}", "--wrap", "true")
    assert cluster.wait_done(bad) == "FAILED"
    assert cluster.wait_done(rescue) == "COMPLETED"
    assert cluster.wait_done(killed) == "CANCELLED"
    deadline = time.time() + 10
    while time.time() < deadline and cluster.scontrol_job(stuck)["Reason"] != "DependencyNeverSatisfied":
        time.sleep(0.1)
    f = cluster.scontrol_job(stuck)
    assert f["JobState"] == "PENDING" and f["Reason"] == "DependencyNeverSatisfied", f
    assert f["Dependency"] == f"afterok:{bad}(failed)", f
    assert "can never be satisfied" in show(cluster, stuck)
    # It stays failed even when the job it named is requeued and succeeds.
    cluster.run(["scontrol", "requeue", str(bad)])
    assert cluster.wait_state(bad, "COMPLETED", timeout=20) == "COMPLETED"
    time.sleep(0.5)
    assert cluster.scontrol_job(stuck)["Reason"] == "DependencyNeverSatisfied"
    r = cluster.run(["sbatch", "--dependency=afterok:abc", "--wrap", "true"], check=False)
    assert r.returncode != 0 and "Job dependency problem" in r.stderr
    cluster.run(["scancel", str(stuck)])


def test_aftercorr_pairs_tasks_and_any_of_takes_the_first(cluster):
    log = cluster.work / "corr.log"
    first = cluster.sbatch("--array=0-2", "-o", "/dev/null", "--wrap",
                           f"sleep 0.$((3 - SLURM_ARRAY_TASK_ID)); echo A $SLURM_ARRAY_TASK_ID $(date +%s.%N) >> {log}")
    second = cluster.sbatch("--array=0-2", "-o", "/dev/null", f"--dependency=aftercorr:{first}", "--wrap",
                            f"echo B $SLURM_ARRAY_TASK_ID $(date +%s.%N) >> {log}")
    wait_array_done(cluster, second)
    ends = {}
    for kind, task, t in (line.split() for line in log.read_text().splitlines()):
        ends[(kind, task)] = float(t)
    for task in "012":
        assert ends[("B", task)] > ends[("A", task)], ends
    # after: once the job named has started.
    running = cluster.sbatch("--wrap", "sleep 20")
    follower = cluster.sbatch(f"--dependency=after:{running}", "--wrap", "true")
    assert cluster.wait_done(follower) == "COMPLETED"
    assert cluster.job(running)["state"] == "RUNNING"
    cluster.run(["scancel", str(running)])
    # '?': any one of the terms suffices.
    ok = cluster.sbatch("--wrap", "true")
    never = cluster.sbatch("-H", "--wrap", "true")
    either = cluster.sbatch(f"--dependency=afterok:{never}?afterok:{ok}", "--wrap", "true")
    assert cluster.wait_done(either) == "COMPLETED"
    cluster.run(["scancel", str(never)])


def test_dependencies_follow_starts_and_pair_tasks_at_once(cluster):
    # after: is met by the start of the job it names, even when that start
    # is the last thing that happens for a long while.
    target = cluster.sbatch("-H", "--wrap", "sleep 30")
    follower = cluster.sbatch(f"--dependency=after:{target}", "--wrap", "true")
    r = cluster.run(["squeue", "-h", "-j", str(follower), "-o", "%i %t %r %E"])
    assert r.stdout.split() == [str(follower), "PD", "Dependency", f"after:{target}(unfulfilled)"], r.stdout
    cluster.run(["scontrol", "release", str(target)])
    assert cluster.wait_done(follower, timeout=10) == "COMPLETED"
    assert cluster.job(target)["state"] == "RUNNING"
    cluster.run(["scancel", str(target)])
    # aftercorr: every task whose partner ended OK may start, together.
    first = cluster.sbatch("--array=0-5", "-o", "/dev/null", "--wrap", "true")
    wait_array_done(cluster, first)
    second = cluster.sbatch("--array=0-5", "-o", "/dev/null", f"--dependency=aftercorr:{first}",
                            "--wrap", "sleep 20")
    deadline = time.time() + 10
    running = []
    while time.time() < deadline and len(running) < 6:
        running = [t for t in records(cluster, second) if t[2] == "RUNNING"]
        time.sleep(0.1)
    assert len(running) == 6, records(cluster, second)
    cluster.run(["scancel", str(second)])


def test_afterok_on_an_array_waits_for_every_task(cluster):
    gate = cluster.work / "gate"
    array = cluster.sbatch("--array=0-1", "-o", "/dev/null", "--wrap",
                           f'[ $SLURM_ARRAY_TASK_ID = 0 ] && exit 1; while [ ! -e {gate} ]; do sleep 0.1; done')
    dep = cluster.sbatch(f"--dependency=afterok:{array}", "--kill-on-invalid-dep=yes", "--wrap", "true")
    deadline = time.time() + 10
    while time.time() < deadline and not any(t[2] == "FAILED" for t in records(cluster, array)):
        time.sleep(0.1)
    time.sleep(0.5)
    # Task 0 failed but task 1 still runs: not judged yet (as Slurm).
    f = cluster.scontrol_job(dep)
    assert (f["JobState"], f["Reason"]) == ("PENDING", "Dependency"), f
    gate.write_text("")
    assert cluster.wait_done(dep) == "CANCELLED"
    assert cluster.scontrol_job(dep)["Reason"] == "DependencyNeverSatisfied"


def test_singleton_runs_one_at_a_time(cluster):
    log = cluster.work / "singleton.log"
    cmd = f"echo start $(date +%s.%N) >> {log}; sleep 1; echo end $(date +%s.%N) >> {log}"
    jobs = [cluster.sbatch("-J", "only-one", "--dependency=singleton", "--wrap", cmd) for _ in range(3)]
    for j in jobs:
        assert cluster.wait_done(j, timeout=60) == "COMPLETED"
    words = [line.split()[0] for line in log.read_text().splitlines()]
    assert words == ["start", "end"] * 3, words


# ---- holds, begin, nice, top -------------------------------------------

def test_holds_begin_nice_and_top(cluster, users):
    held = cluster.sbatch("-H", "--wrap", "true")
    assert cluster.scontrol_job(held)["Reason"] == "JobHeldUser"
    cluster.run(["scontrol", "hold", str(held)])  # root: an admin hold
    assert cluster.scontrol_job(held)["Reason"] == "JobHeldAdmin"
    cluster.run(["scontrol", "uhold", str(held)])
    assert cluster.scontrol_job(held)["Reason"] == "JobHeldUser"
    later = cluster.sbatch("--begin=now+1hour", "--wrap", "true")
    time.sleep(0.3)
    f = cluster.scontrol_job(later)
    assert f["Reason"] == "BeginTime", f
    assert "Explanation=its --begin time has not been reached" in show(cluster, later)
    # Relative times as Slurm 22.05 reads them (checked on the oracle): whole
    # unit names, now-N for a time already past; "1h" is refused.
    past = cluster.sbatch("-H", "--begin=now-1hour", "--wrap", "true")
    assert cluster.scontrol_job(past)["Reason"] == "JobHeldUser"
    r = cluster.run(["sbatch", "--begin=now+1h", "--wrap", "true"], check=False)
    assert r.returncode == 255 and "Invalid --begin specification" in r.stderr, r.stderr
    r = cluster.run(["sacct", "-X", "-n", "-S", "now-1h"], check=False)
    assert r.returncode != 0 and "Invalid time specification" in r.stderr, r.stderr
    nice = cluster.sbatch("-H", "--nice=50", "--wrap", "true")
    assert cluster.scontrol_job(nice)["Nice"] == "50"
    # top: of two waiting jobs of one user, the later one goes first.
    user = users[0] if users else None
    first = cluster.sbatch("--begin=now+1hour", "--wrap", "true", user=user)
    second = cluster.sbatch("--begin=now+1hour", "--wrap", "true", user=user)
    priority = lambda j: int(cluster.scontrol_job(j)["Priority"])
    assert priority(first) > priority(second)
    if user:  # users need SchedulerParameters=enable_user_top, as in Slurm
        r = cluster.run(["scontrol", "top", str(second)], user=user, check=False)
        assert r.returncode == 1 and f"Access/permission denied for job {second}" in r.stderr
    cluster.run(["scontrol", "top", str(second)])
    assert priority(second) > priority(first)
    # A running job may be held (as Slurm): it runs on, showing the hold.
    run = cluster.sbatch("--wrap", "sleep 30")
    cluster.wait_state(run, "RUNNING")
    cluster.run(["scontrol", "hold", str(run)])
    f = cluster.scontrol_job(run)
    assert (f["JobState"], f["Reason"], f["Priority"]) == ("RUNNING", "JobHeldAdmin", "0"), f
    cluster.run(["scontrol", "release", str(run)])
    assert cluster.scontrol_job(run)["Reason"] == "None"
    cluster.run(["scancel", str(run)])
    cluster.wait_done(run)
    r = cluster.run(["scontrol", "hold", str(run)], check=False)
    assert r.returncode == 1 and f"Job has already finished for job {run}" in r.stderr
    r = cluster.run(["scontrol", "top", str(held)], check=False)
    assert r.returncode == 1
    assert f"Job is in held state, pending scheduler release for job {held}" in r.stderr
    # Slurm's nice range; raising priority (negative nice) is for operators.
    r = cluster.run(["sbatch", "--nice=99999999999", "--wrap", "true"], check=False)
    assert r.returncode != 0 and "Invalid --nice value, out of range (+/- 2147483645)" in r.stderr
    if user:
        r = cluster.run(["sbatch", "--nice=-10", "--wrap", "true"], user=user, check=False)
        assert r.returncode != 0 and "Access/permission denied" in r.stderr
    mine = cluster.sbatch("-H", "--nice=-10", "--wrap", "true")
    cluster.run(["scontrol", "update", f"JobId={mine}", "Nice=-20"])
    assert cluster.scontrol_job(mine)["Nice"] == "-20"
    cluster.run(["scancel", str(held), str(later), str(nice), str(first), str(second), str(mine)])


# ---- requeue and signals ------------------------------------------------

def test_requeue_keeps_the_id_and_counts_restarts(cluster):
    job = cluster.sbatch("--open-mode=append", "-o", "rq_%j.out", "--wrap",
                         "echo run ${SLURM_RESTART_COUNT:-0}; sleep 30")
    cluster.wait_state(job, "RUNNING")
    out = cluster.work / f"rq_{job}.out"
    deadline = time.time() + 10
    while time.time() < deadline and not (out.exists() and "run 0" in out.read_text()):
        time.sleep(0.05)
    cluster.run(["scontrol", "requeue", str(job)])
    deadline = time.time() + 20
    while time.time() < deadline:
        f = cluster.scontrol_job(job)
        if f["JobState"] == "RUNNING" and f["Restarts"] == "1":
            break
        time.sleep(0.1)
    assert f["JobState"] == "RUNNING" and f["Restarts"] == "1", f
    deadline = time.time() + 10
    while time.time() < deadline and "run 1" not in out.read_text():
        time.sleep(0.1)
    # Between the runs, slurmstepd's line for the requeue (as the oracle's).
    lines = out.read_text().split("\n")
    assert lines[0] == "run 0" and lines[2] == "run 1", lines
    assert STOP_LINE.fullmatch(lines[1]) and lines[1].endswith(" DUE TO JOB REQUEUE ***"), lines
    cluster.run(["scontrol", "requeuehold", str(job)])
    deadline = time.time() + 20
    while time.time() < deadline and cluster.scontrol_job(job)["JobState"] != "PENDING":
        time.sleep(0.1)
    f = cluster.scontrol_job(job)
    assert f["Reason"] == "job_requeued_in_held_state" and f["Restarts"] == "2", f
    r = cluster.run(["scontrol", "requeue", str(job)], check=False)
    assert r.returncode == 1 and f"Job is pending execution for job {job}" in r.stderr
    # sacct keeps each run: the latest by default, every one with -D.
    runs = cluster.run(["sacct", "-j", str(job), "-X", "-n", "-P", "-D", "-o", "JobID,State"]).stdout
    assert runs.splitlines()[:2] == [f"{job}|REQUEUED", f"{job}|REQUEUED"], runs
    latest = cluster.run(["sacct", "-j", str(job), "-X", "-n", "-P", "-o", "JobID,State"]).stdout
    assert latest.splitlines() == [f"{job}|PENDING"], latest
    never = cluster.sbatch("--no-requeue", "--wrap", "sleep 30")
    cluster.wait_state(never, "RUNNING")
    r = cluster.run(["scontrol", "requeue", str(never)], check=False)
    assert r.returncode == 1
    assert f"Requested operation is presently disabled for job {never}" in r.stderr
    cluster.run(["scancel", str(job), str(never)])


def test_a_requeue_is_announced_in_the_jobs_stderr(cluster):
    # The oracle: scontrol requeue of a running job writes
    # "slurmstepd-cpu01: error: *** JOB 12 ON cpu01 CANCELLED AT
    # 2026-12-07T11:41:19 DUE TO JOB REQUEUE ***" into its stderr file
    # (the stdout file when they are one), not into its stdout.
    job = cluster.sbatch("--open-mode=append", "-o", "ann_%j.out", "-e", "ann_%j.err", "--wrap",
                         "echo start ${SLURM_RESTART_COUNT:-0}; sleep 60")
    cluster.wait_state(job, "RUNNING")
    out, err = cluster.work / f"ann_{job}.out", cluster.work / f"ann_{job}.err"
    wait_for(lambda: out.exists() and "start 0" in out.read_text(), what="the first run")
    node = cluster.nodes_of(job)
    cluster.run(["scontrol", "requeue", str(job)])
    wait_for(lambda: "start 1" in out.read_text(), what="the second run")
    lines = err.read_text().splitlines()
    assert len(lines) == 1 and STOP_LINE.fullmatch(lines[0]), lines
    assert lines[0].startswith(f"slurmstepd-{node}: error: *** JOB {job} ON {node} CANCELLED AT "), lines
    assert lines[0].endswith(" DUE TO JOB REQUEUE ***"), lines
    assert out.read_text().splitlines() == ["start 0", "start 1"]
    cluster.run(["scancel", str(job)])


def test_a_node_set_down_ends_its_run_as_node_fail(fresh_cluster):
    # The oracle, for a job requeued by its node set DOWN: the killed run
    # stays a row of its own, NODE_FAIL with its batch step CANCELLED (no
    # exit code), beside the new PENDING one (sacct -D); sacct alone shows
    # the latest; its output says why it stopped.
    c = fresh_cluster
    job = c.sbatch("-w", "cpu01", "-o", "nf_%j.out", "--wrap", "echo start; sleep 60")
    c.wait_state(job, "RUNNING")
    out = c.work / f"nf_{job}.out"
    wait_for(lambda: out.exists() and "start" in out.read_text(), what="the job's start")
    c.run(["scontrol", "update", "NodeName=cpu01", "State=DOWN", "Reason=testing"])
    wait_for(lambda: c.scontrol_job(job)["Restarts"] == "1", what="the requeue")
    assert c.scontrol_job(job)["JobState"] == "PENDING"
    rows = wait_for(lambda: c.run(["sacct", "-D", "-j", str(job), "-n", "-P", "-o",
                                   "JobID,State,ExitCode,NodeList"]).stdout.splitlines(),
                    what="sacct's rows")
    assert rows == [f"{job}|NODE_FAIL|0:0|cpu01", f"{job}.batch|CANCELLED||cpu01",
                    f"{job}|PENDING|0:0|None assigned"], rows
    latest = c.run(["sacct", "-j", str(job), "-n", "-P", "-o", "JobID,State,ExitCode"]).stdout
    assert latest.splitlines() == [f"{job}|PENDING|0:0"], latest
    r = c.run(["sacct", "-D", "-j", str(job), "--format=JobID,State,ExitCode,Start,End"])
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["JobID", "State", "ExitCode", "Start", "End"], r.stdout
    killed, batch, pending = (l.split() for l in lines[2:5])
    assert killed[:3] == [str(job), "NODE_FAIL", "0:0"] and killed[3] <= killed[4], r.stdout
    assert batch == [f"{job}.batch", "CANCELLED"] + killed[3:], r.stdout
    assert pending == [str(job), "PENDING", "0:0", "Unknown", "Unknown"], r.stdout
    text = out.read_text().splitlines()
    assert text[0] == "start" and STOP_LINE.fullmatch(text[1]), text
    assert text[1].endswith(" DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***"), text
    # scontrol requeue, by contrast, leaves a REQUEUED row.
    c.run(["scontrol", "update", "NodeName=cpu01", "State=RESUME"])
    c.wait_state(job, "RUNNING", timeout=30)
    c.run(["scontrol", "requeue", str(job)])
    wait_for(lambda: [l.split("|")[1] for l in c.run(
        ["sacct", "-D", "-X", "-j", str(job), "-n", "-P", "-o", "JobID,State"]).stdout.splitlines()
    ] == ["NODE_FAIL", "REQUEUED", "PENDING"], what="the runs NODE_FAIL, REQUEUED, PENDING")
    c.run(["scancel", str(job)])


def test_requeued_job_waits_slurms_delay_as_a_new_submission():
    # Slurm 22.05 on the oracle: after scontrol requeue the job is PENDING
    # with Reason=BeginTime, SubmitTime = the requeue and EligibleTime 121 s
    # later (AuthInfo=cred_expire, 120 by default, + 1); sacct -D shows the
    # first run REQUEUED, ending when the second was submitted.
    from conftest import DEFAULT_CONF
    c = make_cluster(DEFAULT_CONF.replace("AuthInfo=cred_expire=0\n", ""))
    try:
        job = c.sbatch("--wrap", "sleep 300")
        c.wait_state(job, "RUNNING")
        first_submit = c.scontrol_job(job)["SubmitTime"]
        time.sleep(1.1)  # the rerun's SubmitTime is a later second
        c.run(["scontrol", "requeue", str(job)])
        deadline = time.time() + 20
        while time.time() < deadline:
            f = c.scontrol_job(job)
            if f["JobState"] == "PENDING" and f["EligibleTime"] != "Unknown":
                break
            time.sleep(0.1)
        assert f["JobState"] == "PENDING" and f["Restarts"] == "1", f
        assert f["Reason"] == "BeginTime", f
        assert f["SubmitTime"] > first_submit, f
        parse = lambda t: time.mktime(time.strptime(t, "%Y-%m-%dT%H:%M:%S"))
        assert parse(f["EligibleTime"]) - parse(f["SubmitTime"]) == 121, f
        time.sleep(0.5)
        assert c.job(job)["state"] == "PENDING"
        r = c.run(["sacct", "-j", str(job), "-X", "-n", "-P", "-D", "-o", "State,Submit,Start,End"])
        runs = [l.split("|") for l in r.stdout.splitlines()]
        assert [run[0] for run in runs] == ["REQUEUED", "PENDING"], r.stdout
        assert runs[0][1] == first_submit and runs[0][3] == runs[1][1], r.stdout
        assert runs[1][1] >= f["SubmitTime"] and runs[1][2] == "Unknown", r.stdout
    finally:
        c.teardown()


def test_signal_before_the_time_limit_checkpoints_and_requeues(cluster):
    script = """#!/bin/bash
if [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then echo resumed from $(cat ckpt_$SLURM_JOB_ID); exit 0; fi
trap 'echo step42 > ckpt_$SLURM_JOB_ID; scontrol requeue $SLURM_JOB_ID; exit 0' USR1
for i in $(seq 600); do sleep 0.1; done
"""
    job = cluster.sbatch("-t", "1", "--signal=B:USR1@55", "-o", "sig_%j.out", input=script)
    assert cluster.wait_state(job, "COMPLETED", timeout=40) == "COMPLETED"
    assert cluster.scontrol_job(job)["Restarts"] == "1"
    assert "resumed from step42" in (cluster.work / f"sig_{job}.out").read_text()


# ---- updates ------------------------------------------------------------

def test_scontrol_update_job(cluster, users):
    user = users[0] if users else None
    job = cluster.sbatch("-H", "-t", "30", "--wrap", "true", user=user)
    cluster.run(["scontrol", "update", f"JobId={job}", "TimeLimit=10", "Name=renamed",
                 "Comment=tuned", "Nice=5", "Partition=train", "NumNodes=2"], user=user)
    f = cluster.scontrol_job(job)
    assert (f["TimeLimit"], f["JobName"], f["Nice"], f["Partition"], f["NumNodes"]) == \
        ("00:10:00", "renamed", "5", "train", "2"), f
    assert "Comment=tuned" in show(cluster, job)
    if user:
        r = cluster.run(["scontrol", "update", f"JobId={job}", "TimeLimit=60"], user=user, check=False)
        assert r.returncode == 1 and "Access/permission denied" in r.stderr
        assert cluster.scontrol_job(job)["TimeLimit"] == "00:10:00"
    dep = cluster.sbatch("-H", "--wrap", "true")
    cluster.run(["scontrol", "update", f"JobId={job}", f"Dependency=afterok:{dep}"])
    assert cluster.scontrol_job(job)["Dependency"] == f"afterok:{dep}(unfulfilled)"
    r = cluster.run(["scontrol", "update", f"JobId={job}", "Bogus=1"], check=False)
    assert r.returncode == 1 and "Update of this parameter is not supported: Bogus=1" in r.stderr
    r = cluster.run(["scontrol", "update", f"JobId={job}", "Partition=nope"], check=False)
    assert r.returncode == 1 and f"Invalid partition name specified for job {job}" in r.stderr
    running = cluster.sbatch("--wrap", "sleep 30")
    cluster.wait_state(running, "RUNNING")
    r = cluster.run(["scontrol", "update", f"JobId={running}", "Partition=train"], check=False)
    assert r.returncode == 1 and f"Job is no longer pending execution for job {running}" in r.stderr
    cluster.run(["scancel", str(job), str(running), str(dep)])


def test_time_limit_of_a_running_job(cluster, users):
    user = users[0] if users else None
    lowered = cluster.sbatch("-t", "10", "--wrap", "sleep 60", user=user)
    raised = cluster.sbatch("-t", "0:02", "--wrap", "sleep 5")
    cluster.wait_state(lowered, "RUNNING")
    cluster.wait_state(raised, "RUNNING")
    cluster.run(["scontrol", "update", f"JobId={lowered}", "TimeLimit=0:03"], user=user)
    cluster.run(["scontrol", "update", f"JobId={raised}", "TimeLimit=10"])
    assert cluster.scontrol_job(lowered)["TimeLimit"] == "00:00:03"
    assert cluster.wait_done(lowered, timeout=20) == "TIMEOUT"
    assert cluster.wait_done(raised, timeout=20) == "COMPLETED"


# ---- why is it waiting? ---------------------------------------------------

def test_reasons_explanations_and_start_estimates(cluster):
    blockers = [cluster.sbatch("-p", "train", "--gres=gpu:8", "-t", "10", "--wrap", "sleep 60")
                for _ in range(2)]
    for b in blockers:
        cluster.wait_state(b, "RUNNING")
    big = cluster.sbatch("-p", "train", "--gres=gpu:8", "--wrap", "true")
    behind = cluster.sbatch("-p", "train", "--gres=gpu:1", "--wrap", "true")
    time.sleep(1.5)
    r = cluster.run(["squeue", "-h", "-j", f"{big},{behind}", "-O", "JobID,Reason,Explanation:200"])
    lines = {int(l.split()[0]): l for l in r.stdout.splitlines()}
    assert " Resources " in lines[big] and "GPU" in lines[big], lines[big]
    assert " Priority " in lines[behind] and f"job {big}" in lines[behind], lines[behind]
    r = cluster.run(["squeue", "--start", "-h", "-j", str(big), "-o", "%i %S %Y"])
    jid, start, nodes = r.stdout.split()
    assert start != "N/A" and nodes.startswith("gpu"), r.stdout
    # Default formats stay Slurm's: no extra column.
    head = cluster.run(["squeue", "-j", str(big)]).stdout.split("\n")[0].split()
    assert head == ["JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)"]
    cluster.run(["scancel", *map(str, blockers + [big, behind])])


# ---- partition rules ----------------------------------------------------

PARTITION_CONF = """\
ClusterName=parts
SlurmctldHost={host}
StateSaveLocation={dir}/ctld
SlurmdSpoolDir={dir}/spool
DefMemPerCPU=100
KillWait=1
EnforcePartLimits=ALL
NodeName=n[1-2] CPUs=4 RealMemory=4000 State=UNKNOWN
PartitionName=short Nodes=n[1-2] Default=YES MaxTime=00:10:00 MaxNodes=1 State=UP
PartitionName=long Nodes=n[1-2] MaxTime=1-00:00:00 State=UP
PartitionName=secret Nodes=n2 Hidden=YES State=UP
PartitionName=closed Nodes=n2 State=DRAIN
PartitionName=off Nodes=n2 State=INACTIVE
PartitionName=physics Nodes=n2 AllowAccounts=physics State=UP
PartitionName=staff Nodes=n2 AllowGroups=root State=UP
PartitionName=nophysics Nodes=n2 DenyAccounts=physics State=UP
"""


def test_partition_rules():
    c = make_cluster(PARTITION_CONF)
    try:
        r = c.run(["sbatch", "-t", "20", "--wrap", "true"], check=False)
        assert r.returncode != 0 and "Requested time limit is invalid" in r.stderr, r.stderr
        r = c.run(["sbatch", "-N", "2", "--wrap", "true"], check=False)
        assert r.returncode != 0 and "Node count specification invalid" in r.stderr, r.stderr
        for closed in ("closed", "off"):  # DRAIN, INACTIVE
            r = c.run(["sbatch", "-p", closed, "--wrap", "true"], check=False)
            assert r.returncode != 0
            assert "Required partition not available (inactive or drain)" in r.stderr
        r = c.run(["sbatch", "-p", "nosuch", "--wrap", "true"], check=False)
        assert r.returncode != 0 and "Invalid partition name specified" in r.stderr
        # With EnforcePartLimits=ALL one closed partition of a list refuses the job.
        r = c.run(["sbatch", "-p", "closed,long", "--wrap", "true"], check=False)
        assert r.returncode != 0 and "Required partition not available" in r.stderr
        both = c.sbatch("-p", "short,long", "-H", "--wrap", "true")
        assert c.run(["squeue", "-h", "-j", str(both), "-o", "%P"]).stdout.strip() == "short,long"
        c.run(["scontrol", "release", str(both)])
        assert c.wait_done(both) == "COMPLETED"
        # Hidden partitions: sinfo shows them only with -a.
        plain = c.run(["sinfo", "-h", "-o", "%P"]).stdout.split()
        every = c.run(["sinfo", "-a", "-h", "-o", "%P"]).stdout.split()
        assert "secret" in every
        if os.geteuid() != 0:
            assert "secret" not in plain
    finally:
        c.teardown()
        shutil.rmtree(c.root, ignore_errors=True)


def test_partition_access_for_users(users):
    if not users:
        pytest.skip("needs root for the test users")
    c = make_cluster(PARTITION_CONF)
    try:
        r = c.run(["sbatch", "-p", "physics", "--wrap", "true"], user=users[0], check=False)
        assert r.returncode != 0
        assert "Invalid account or account/partition combination specified" in r.stderr, r.stderr
        job = c.sbatch("-p", "physics", "-A", "physics", "--wrap", "true", user=users[0])
        assert c.wait_done(job) == "COMPLETED"
        r = c.run(["sbatch", "-p", "nophysics", "-A", "physics", "--wrap", "true"], user=users[0],
                  check=False)
        assert r.returncode != 0
        assert "Invalid account or account/partition combination specified" in r.stderr
        seen = c.run(["sinfo", "-h", "-o", "%P"], user=users[0]).stdout.split()
        assert "secret" not in seen and "long" in seen, seen
        assert "secret" in c.run(["sinfo", "-a", "-h", "-o", "%P"], user=users[0]).stdout.split()
        # AllowGroups: refused at submission, and not shown to those left out unless -a.
        r = c.run(["sbatch", "-p", "staff", "--wrap", "true"], user=users[0], check=False)
        assert r.returncode != 0 and "User's group not permitted to use this partition" in r.stderr
        assert "staff" not in seen
        r = c.run(["scontrol", "show", "partition", "staff"], user=users[0], check=False)
        assert r.returncode != 0 and "Partition staff not found" in r.stderr + r.stdout
        r = c.run(["scontrol", "-a", "show", "partition", "staff"], user=users[0])
        assert "PartitionName=staff" in r.stdout and "AllowGroups=root" in r.stdout
        assert "staff" in c.run(["sinfo", "-h", "-o", "%P"]).stdout.split()  # root sees it
    finally:
        c.teardown()
        shutil.rmtree(c.root, ignore_errors=True)


def test_partition_limits_pend_without_enforcement():
    c = make_cluster(PARTITION_CONF.replace("EnforcePartLimits=ALL", "EnforcePartLimits=NO"))
    try:
        job = c.sbatch("-t", "20", "--wrap", "true")
        time.sleep(0.5)
        assert c.scontrol_job(job)["Reason"] == "PartitionTimeLimit"
        wide = c.sbatch("-N", "2", "--wrap", "true")
        time.sleep(0.5)
        assert c.scontrol_job(wide)["Reason"] == "PartitionNodeLimit"
        # -p a,b: a closed partition is dropped; the job runs in the next.
        job = c.sbatch("-p", "closed,long", "--wrap", "true")
        assert c.wait_done(job) == "COMPLETED"
        assert c.scontrol_job(job)["Partition"] == "long"
    finally:
        c.teardown()
        shutil.rmtree(c.root, ignore_errors=True)
