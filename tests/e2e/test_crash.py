"""kill -9 of musterd and muster-agent at random moments while jobs are
submitted and run: every acknowledged job survives with a correct final
state, no job runs twice, no process is left behind."""

import os
import random
import threading
import time
from pathlib import Path

from conftest import kill9

FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"}


def scontrol_jobs(c):
    """Every record `scontrol show job` prints, by JobId."""
    r = c.run(["scontrol", "show", "job"])
    out = {}
    for block in r.stdout.split("\n\n"):
        fields = {}
        for tok in block.split():
            k, sep, v = tok.partition("=")
            if sep:
                fields.setdefault(k, v)
        if "JobId" in fields:
            out[int(fields["JobId"])] = fields
    return out


def assert_accounting_agrees(c, ids):
    """sacct -X tells the same story as the controller for every job: state,
    exit code, start and end."""
    ctl = scontrol_jobs(c)
    r = c.run(["sacct", "-X", "-P", "-n", "-j", ",".join(map(str, ids)),
               "--format=JobIDRaw,State,ExitCode,Start,End"])
    acct = {}
    for line in r.stdout.splitlines():
        raw, state, exit_code, start, end = line.split("|")
        acct[int(raw)] = (state.split()[0], exit_code, start, end)
    disagree = {}
    for j in ids:
        f = ctl[j]
        # scontrol projects the end of an unfinished job; sacct knows none.
        end = f["EndTime"] if f["JobState"] in FINAL else "Unknown"
        want = (f["JobState"], f["ExitCode"], f["StartTime"], end)
        if acct.get(j) != want:
            disagree[j] = {"scontrol": want, "sacct": acct.get(j)}
    assert not disagree, disagree


def test_kill9_daemons_loses_nothing(fresh_cluster):
    c = fresh_cluster
    runs = c.work / "runs.log"
    acked = []
    stop = threading.Event()

    def submitter():
        while not stop.is_set():
            # --no-requeue: a job whose launch was lost in a crash ends
            # NODE_FAIL instead of running again, so "ran once" is checkable.
            r = c.run(["sbatch", "--parsable", "--no-requeue", "-o", "/dev/null", "--wrap",
                       f"echo $SLURM_JOB_ID >> {runs}; sleep 0.2"], check=False, timeout=60)
            if r.returncode == 0:
                acked.append(int(r.stdout.strip().split(";")[0]))
            else:
                time.sleep(0.02)  # the controller is down: the submission was refused, not lost

    # MUSTER_CRASH_ROUNDS makes this a soak (e.g. 200 kills) outside the suite.
    rounds = int(os.environ.get("MUSTER_CRASH_ROUNDS", "15"))
    rng = random.Random(int(os.environ.get("MUSTER_CRASH_SEED", "1234")))
    t = threading.Thread(target=submitter)
    t.start()
    try:
        for round_ in range(rounds):
            time.sleep(rng.uniform(0.2, 1.0))
            pids = c.daemon_pids()
            victim = rng.choice(["musterd", "agent", "both"])
            if victim in ("musterd", "both") and "musterd" in pids:
                kill9(pids["musterd"])
            if victim in ("agent", "both") and "agent" in pids:
                kill9(pids["agent"])
            time.sleep(rng.uniform(0.0, 0.5))
            c.up()
    finally:
        stop.set()
        t.join()
    assert len(acked) > 20, "the submitter should have got through between crashes"

    deadline = time.time() + 120
    states = {}
    while time.time() < deadline:
        states = {j: c.job(j)["state"] for j in acked}
        if all(s in FINAL for s in states.values()):
            break
        time.sleep(0.2)
    assert all(s in FINAL for s in states.values()), {j: s for j, s in states.items() if s not in FINAL}

    ran = [int(l) for l in runs.read_text().split()] if runs.exists() else []
    counts = {}
    for j in ran:
        counts[j] = counts.get(j, 0) + 1
    twice = {j: n for j, n in counts.items() if n > 1}
    assert not twice, f"jobs ran more than once: {twice}"
    for j, s in states.items():
        if s == "COMPLETED":
            assert counts.get(j) == 1, f"job {j} COMPLETED but ran {counts.get(j, 0)} times"
        else:
            assert s == "NODE_FAIL", f"job {j} ended {s}"
    ids = sorted(acked)
    assert len(set(ids)) == len(ids), "a job id was handed out twice"

    # After the last restart, accounting is level with the controller.
    kill9(c.daemon_pids()["musterd"])
    c.up()
    assert_accounting_agrees(c, ids)
    completed = sum(1 for s in states.values() if s == "COMPLETED")
    assert completed >= len(acked) * 0.8, f"only {completed} of {len(acked)} completed"

    # nothing left behind: no step supervisor or job process of this cluster
    time.sleep(0.5)
    leftovers = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            cmd = (p / "cmdline").read_bytes()
        except OSError:
            continue
        if b"muster-step" in cmd and str(c.root).encode() in cmd:
            leftovers.append(int(p.name))
    assert not leftovers, f"muster-step processes left: {leftovers}"


def test_kill9_during_an_array_loses_no_task(fresh_cluster):
    """Tasks split off an array while musterd is killed: every task ends
    exactly once in exactly one record."""
    c = fresh_cluster
    runs = c.work / "array_runs.log"
    a = c.sbatch("--array=0-119%6", "--no-requeue", "-o", "/dev/null", "--wrap",
                 f"echo $SLURM_ARRAY_TASK_ID >> {runs}; sleep 0.1")
    rng = random.Random(99)
    for _ in range(6):
        time.sleep(rng.uniform(0.1, 0.6))
        pids = c.daemon_pids()
        if "musterd" in pids:
            kill9(pids["musterd"])
        c.up()
    deadline = time.time() + 120
    rows = []
    while time.time() < deadline:
        r = c.run(["squeue", "-h", "-r", "-t", "all", "-j", str(a), "-o", "%K %T"], check=False)
        rows = [line.split() for line in r.stdout.splitlines()] if r.returncode == 0 else []
        if rows and all(state in FINAL for _, state in rows):
            break
        time.sleep(0.2)
    tasks = sorted(int(t) for t, _ in rows)
    assert tasks == list(range(120)), f"tasks missing or repeated: {tasks}"
    assert all(state in FINAL for _, state in rows), rows
    ran = [int(l) for l in runs.read_text().split()]
    twice = {t for t in ran if ran.count(t) > 1}
    assert not twice, f"tasks ran more than once: {twice}"
    for t, state in rows:
        if state == "COMPLETED":
            assert int(t) in ran, f"task {t} COMPLETED without running"


def test_lost_accounting_database_is_rebuilt_from_the_controller(fresh_cluster):
    """A deleted accounting.db comes back with every job the controller still
    holds, after a clean stop (from the snapshot) and after kill -9 (from
    the journal)."""
    c = fresh_cluster
    done = c.sbatch("-o", "/dev/null", "--wrap", "true")
    failed = c.sbatch("-o", "/dev/null", "--wrap", "exit 3")
    c.wait_done(done)
    c.wait_done(failed)
    running = c.sbatch("-o", "/dev/null", "--wrap", "sleep 300")
    held = c.sbatch("-H", "-o", "/dev/null", "--wrap", "true")
    c.wait_state(running, "RUNNING")
    ids = [done, failed, running, held]
    db = c.root / "ctld" / "accounting.db"
    for stop in ("down", "kill9"):
        if stop == "down":
            c.down()
        else:
            kill9(c.daemon_pids()["musterd"])
        for f in db.parent.glob("accounting.db*"):
            f.unlink()
        c.up()
        assert_accounting_agrees(c, ids)
        r = c.run(["sacct", "-P", "-n", "-j", str(failed), "--format=JobID,State,ExitCode"])
        assert r.stdout.splitlines() == [f"{failed}|FAILED|3:0", f"{failed}.batch|FAILED|3:0"], r.stdout


def test_step_ids_are_not_reused_after_a_controller_crash(fresh_cluster):
    c = fresh_cluster
    go = c.work / "go"
    j = c.sbatch("-o", "/dev/null", "--wrap",
                 f"srun -n1 true; while [ ! -e {go} ]; do sleep 0.05; done; srun -n1 true")
    deadline = time.time() + 30
    while time.time() < deadline:
        r = c.run(["sacct", "-P", "-n", "-j", str(j), "--format=JobID,State"])
        if f"{j}.0|COMPLETED" in r.stdout.splitlines():
            break
        time.sleep(0.1)
    kill9(c.daemon_pids()["musterd"])
    c.up()
    go.touch()
    assert c.wait_done(j) == "COMPLETED"
    r = c.run(["sacct", "-P", "-n", "-j", str(j), "--format=JobID,State"])
    assert r.stdout.splitlines() == [f"{j}|COMPLETED", f"{j}.batch|COMPLETED", f"{j}.0|COMPLETED",
                                     f"{j}.1|COMPLETED"], r.stdout


TIMEOUT_CONF_EXTRA = "SlurmdTimeout=2\n"


def test_lost_agent_marks_nodes_down_and_requeues():
    from conftest import DEFAULT_CONF, make_cluster
    # A requeued job waits cred_expire + 1 s: long enough to see it wait.
    conf = DEFAULT_CONF.replace("AuthInfo=cred_expire=0", "AuthInfo=cred_expire=5")
    c = make_cluster(conf + TIMEOUT_CONF_EXTRA)
    try:
        marker = c.work / "starts.log"
        cmd = f"echo start $SLURM_JOB_ID $SLURM_RESTART_COUNT >> {marker}; sleep 1000"
        keep = c.sbatch("-w", "cpu01", "--wrap", cmd)
        gone = c.sbatch("-w", "cpu01", "--no-requeue", "--wrap", cmd)
        c.wait_state(keep, "RUNNING")
        c.wait_state(gone, "RUNNING")
        submitted = c.scontrol_job(keep)["SubmitTime"]
        kill9(c.daemon_pids()["agent"])
        # the agent stays away past SlurmdTimeout
        assert c.wait_state(gone, "NODE_FAIL", timeout=20) == "NODE_FAIL"
        j = c.job(keep)
        assert j["state"] == "PENDING" and j["restart_count"] == 1, j
        r = c.run(["sinfo", "-h", "-N", "-n", "cpu01", "-o", "%t %E"])
        assert r.stdout.split()[0].startswith("down"), r.stdout
        assert "Not responding" in r.stdout
        f = c.scontrol_job(keep)
        assert f["Restarts"] == "1"
        # As in Slurm: back in the queue until its begin time, submitted anew.
        assert f["Reason"] == "BeginTime", f
        assert f["SubmitTime"] > submitted and f["EligibleTime"] > f["SubmitTime"], f
        # the agent returns: the node is back, the orphaned steps are stopped
        # and the requeued job runs again, once
        c.up()
        assert c.wait_state(keep, "RUNNING", timeout=20) == "RUNNING"
        deadline = time.time() + 10
        while time.time() < deadline:
            steps = [p for p in Path("/proc").iterdir() if p.name.isdigit() and
                     b"muster-step" in _cmdline(p) and str(c.root).encode() in _cmdline(p)]
            if len(steps) == 1:
                break
            time.sleep(0.1)
        assert len(steps) == 1, "the old steps must be stopped, the requeued one running"
    finally:
        c.teardown()


def _cmdline(p):
    try:
        return (p / "cmdline").read_bytes()
    except OSError:
        return b""


def test_job_requeue_zero_leaves_node_failures_failed():
    from conftest import DEFAULT_CONF, make_cluster
    c = make_cluster(DEFAULT_CONF + TIMEOUT_CONF_EXTRA + "JobRequeue=0\n")
    try:
        plain = c.sbatch("-w", "cpu01", "--wrap", "sleep 1000")
        asked = c.sbatch("-w", "cpu01", "--requeue", "--wrap", "sleep 1000")
        c.wait_state(plain, "RUNNING")
        c.wait_state(asked, "RUNNING")
        kill9(c.daemon_pids()["agent"])
        assert c.wait_state(plain, "NODE_FAIL", timeout=20) == "NODE_FAIL"
        assert c.wait_state(asked, "PENDING", timeout=20) == "PENDING"
        assert c.job(asked)["restart_count"] == 1
        c.up()
    finally:
        c.teardown()
