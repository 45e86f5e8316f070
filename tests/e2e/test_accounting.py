"""Accounting: sacct, seff and sreport over the jobs that ran."""

import os
import pwd
import re
import time

import pytest


def test_sacct_records_every_job_and_step(cluster):
    ok = cluster.sbatch("-J", "acct-ok", "--comment", "note", "--wrap", "echo hi")
    bad = cluster.sbatch("-J", "acct-bad", "--wrap", "exit 3")
    gone = cluster.sbatch("-J", "acct-cancel", "--wrap", "sleep 100")
    cluster.wait_state(gone, "RUNNING")
    cluster.run(["scancel", str(gone)])
    for j in (ok, bad, gone):
        cluster.wait_done(j)
    ids = f"{ok},{bad},{gone}"
    # Snakemake
    r = cluster.run(["sacct", "-P", "-n", "--format=JobIdRaw,State", "-j", ids])
    lines = r.stdout.splitlines()
    assert f"{ok}|COMPLETED" in lines and f"{bad}|FAILED" in lines
    assert f"{gone}|CANCELLED by 0" in lines
    assert f"{ok}.batch|COMPLETED" in lines
    # Toil
    r = cluster.run(["sacct", "-n", "-j", ids, "--format", "JobIDRaw,State,ExitCode", "-P"])
    assert f"{bad}|FAILED|3:0" in r.stdout.splitlines()
    # Parsl
    r = cluster.run(["sacct", "-X", "--noheader", "--format=jobid,state%20", "--job", ids])
    row = [l.split() for l in r.stdout.splitlines() if l.split()[0] == str(ok)][0]
    assert row == [str(ok), "COMPLETED"]
    # submitit: header line, skips .step rows
    r = cluster.run(["sacct", "-o", "JobID,State,NodeList", "--parsable2", "-j", str(ok)])
    assert r.stdout.splitlines()[0] == "JobID|State|NodeList"
    # default columns
    r = cluster.run(["sacct", "-j", str(ok)])
    assert r.stdout.splitlines()[0].split() == ["JobID", "JobName", "Partition", "Account",
                                                "AllocCPUS", "State", "ExitCode"]
    r = cluster.run(["sacct", "-X", "-P", "-n", "-j", str(ok),
                     "--format=JobName,Comment,WorkDir,NNodes,NCPUS,Elapsed,Timelimit"])
    assert r.stdout.strip() == f"acct-ok|note|{cluster.work}|1|1|00:00:00|01:00:00" or \
        r.stdout.strip().startswith("acct-ok|note|")
    # getopt's rules, as the real sacct has them: bundled flags, unique prefixes
    # of long options, glibc's messages.
    r = cluster.run(["sacct", "-XPn", "--form=JobIDRaw,State", "--start=now-1hour", "-j", str(ok)])
    assert r.stdout.splitlines() == [f"{ok}|COMPLETED"], r.stdout
    r = cluster.run(["sacct", "--sta=x"], check=False)
    assert r.returncode == 1
    assert "sacct: option '--sta=x' is ambiguous; possibilities: '--state' '--starttime'" \
        in r.stderr, r.stderr


def test_sacct_users_see_their_own_jobs(cluster, users):
    if not users:
        pytest.skip("needs root to switch users")
    mine = cluster.sbatch("--wrap", "true", user=users[0])
    theirs = cluster.sbatch("--wrap", "true", user=users[1])
    cluster.wait_done(mine)
    cluster.wait_done(theirs)
    r = cluster.run(["sacct", "-X", "-n", "-P", "--format=JobIDRaw"], user=users[0])
    seen = set(r.stdout.split())
    assert str(mine) in seen and str(theirs) not in seen, (r.stdout, r.stderr)
    r = cluster.run(["sacct", "-X", "-n", "-P", "--format=JobIDRaw", "-a"])
    seen = set(r.stdout.split())
    assert {str(mine), str(theirs)} <= seen


def test_sacct_refuses_unknown_users(cluster):
    # Slurm 22.05 (on the oracle): the first unknown -u name, or a uid
    # without a passwd entry, is its one error line, nothing on stdout, exit 1.
    job = cluster.sbatch("--wrap", "true")
    cluster.wait_done(job)
    for users in ["no-such-user-x", "root,no-such-user-x", "4000000000"]:
        r = cluster.run(["sacct", "-X", "-n", "-o", "JobID", "-u", users], check=False)
        bad = users.split(",")[-1]
        assert (r.returncode, r.stdout, r.stderr) == (1, "", f"sacct: error: Invalid user id: {bad}\n")
    r = cluster.run(["sacct", "-X", "-n", "-P", "-o", "JobIDRaw", "-u", f"root,{os.getuid()}"])
    assert str(job) in r.stdout.split()


def test_seff_and_oom_maxrss(cluster):
    job = cluster.sbatch("--mem=200M", "--wrap", "/usr/bin/python3 -c \"b = bytearray(60 * 1024 * 1024)\"")
    assert cluster.wait_done(job) == "COMPLETED"
    r = cluster.run(["seff", str(job)])
    assert f"Job ID: {job}" in r.stdout
    assert "State: COMPLETED (exit code 0)" in r.stdout
    m = re.search(r"Memory Utilized: ([\d.]+) MB", r.stdout)
    if os.geteuid() == 0:
        assert m and float(m.group(1)) > 40, r.stdout
    assert "Memory Efficiency:" in r.stdout and "of 200.00 MB" in r.stdout
    r = cluster.run(["sacct", "-j", f"{job}.batch", "-n", "-P", "--format=JobID,MaxRSS,State"])
    step = r.stdout.strip().split("|")
    assert step[0] == f"{job}.batch" and step[2] == "COMPLETED"
    if os.geteuid() == 0:
        assert step[1].endswith(("K", "M")) and step[1] != ""


def test_sreport_cluster_utilization(cluster):
    r = cluster.run(["sreport", "cluster", "Utilization", "-P", "-t", "percent"])
    assert "Cluster Utilization" in r.stdout
    assert re.search(r"^e2e\|", r.stdout, re.M), r.stdout
    r = cluster.run(["sreport", "user", "TopUsage", "-P"])
    assert r.returncode == 0


def test_srun_steps_are_accounted(cluster):
    script = cluster.work / "acct-steps.sh"
    script.write_text("#!/bin/bash\n#SBATCH -n 2\nsrun hostname >/dev/null\nsrun bash -c 'exit 2'\ntrue\n")
    job = cluster.sbatch(str(script))
    assert cluster.wait_done(job) == "COMPLETED"
    r = cluster.run(["sacct", "-j", str(job), "-n", "-P", "--format=JobID,JobName,State,ExitCode,NTasks"])
    rows = [l.split("|") for l in r.stdout.splitlines()]
    by_id = {row[0]: row for row in rows}
    assert by_id[f"{job}.batch"][2] == "COMPLETED"
    assert by_id[f"{job}.0"][1:4] == ["hostname", "COMPLETED", "0:0"]
    assert by_id[f"{job}.1"][1:4] == ["bash", "FAILED", "2:0"]
    assert by_id[f"{job}.0"][4] == "2"


def test_srun_step_records_its_tasks_peak_memory_and_cpu(cluster):
    job = cluster.sbatch("-n", "2", "--wrap",
                         "srun /usr/bin/python3 -c 'x = bytearray(60 << 20); sum(range(3000000))'")
    assert cluster.wait_done(job) == "COMPLETED"
    r = cluster.run(["sacct", "-j", f"{job}.0", "-n", "-P", "--noconvert",
                     "--format=JobID,MaxRSS,TotalCPU"])
    step, rss, cpu = r.stdout.strip().split("|")
    assert step == f"{job}.0"
    assert 60 << 20 <= int(rss) < 400 << 20, rss  # bytes (--noconvert) of the larger task
    assert cpu not in ("", "00:00:00", "00:00.000"), cpu


def test_sacct_times_and_codes_as_slurm_records_them(cluster):
    # Cancelled while held: never eligible, its end stands for its start.
    held = cluster.sbatch("-H", "--wrap", "true")
    assert cluster.scontrol_job(held)["EligibleTime"] == "Unknown"
    cluster.run(["scancel", str(held)])
    r = cluster.run(["sacct", "-j", str(held), "-X", "-n", "-P",
                     "-o", "Eligible,Start,End,Elapsed,ReqTRES,NodeList"])
    eligible, start, end, elapsed, req_tres, nodes = r.stdout.strip().split("|")
    assert eligible == "Unknown" and start == end != "Unknown" and elapsed == "00:00:00", r.stdout
    assert req_tres == "billing=1,cpu=1,mem=1000M,node=1" and nodes == "None assigned", r.stdout
    # Cancelled while running: 0:0 for the job, the signal on its batch step.
    running = cluster.sbatch("--wrap", "sleep 30")
    cluster.wait_state(running, "RUNNING")
    time.sleep(0.3)
    cluster.run(["scancel", str(running)])
    assert cluster.wait_done(running) == "CANCELLED"
    deadline = time.time() + 10
    rows = {}
    while time.time() < deadline and f"{running}.batch" not in rows:
        r = cluster.run(["sacct", "-j", str(running), "-n", "-P", "-o", "JobID,State,ExitCode"])
        rows = {l.split("|")[0]: l.split("|")[1:] for l in r.stdout.splitlines()}
        time.sleep(0.2)
    assert rows[str(running)] == [f"CANCELLED by {os.getuid()}", "0:0"], rows
    assert rows[f"{running}.batch"] == ["CANCELLED", "0:15"], rows


def test_sacct_states_of_jobs_ended_by_a_signal(cluster):
    # The oracle (slurm 22.05): a job past its time limit is TIMEOUT 0:0 with
    # its .batch CANCELLED 0:15; a shell killed by a signal (kill -9 $$)
    # makes the job FAILED 0:9 and its .batch CANCELLED 0:9; an srun step
    # whose task a signal ended is CANCELLED too.
    timeout = cluster.sbatch("--wrap", "sleep 300")
    killed = cluster.sbatch("--wrap", "srun bash -c 'kill -9 $$'; kill -9 $$")
    cluster.wait_state(timeout, "RUNNING")
    cluster.run(["scontrol", "update", f"JobId={timeout}", "TimeLimit=0:02"])
    assert cluster.wait_done(timeout, timeout=30) == "TIMEOUT"
    assert cluster.wait_done(killed) == "FAILED"

    def rows(job, want):
        deadline = time.time() + 10
        while True:
            r = cluster.run(["sacct", "-j", str(job), "-n", "-P", "-o", "JobID,State,ExitCode"])
            got = {l.split("|")[0]: l.split("|")[1:] for l in r.stdout.splitlines()}
            if all(k in got for k in want) or time.time() > deadline:
                return got
            time.sleep(0.2)

    got = rows(timeout, [str(timeout), f"{timeout}.batch"])
    assert got[str(timeout)] == ["TIMEOUT", "0:0"], got
    assert got[f"{timeout}.batch"] == ["CANCELLED", "0:15"], got
    got = rows(killed, [str(killed), f"{killed}.batch", f"{killed}.0"])
    assert got[str(killed)] == ["FAILED", "0:9"], got
    assert got[f"{killed}.batch"] == ["CANCELLED", "0:9"], got
    assert got[f"{killed}.0"] == ["CANCELLED", "0:9"], got
