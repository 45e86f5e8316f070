"""scrontab: a user's recurring jobs. Each entry is one job that waits for
its schedule's next minute, runs as a normal job (squeue, sacct) and goes
back to the queue for the next one; the crontab survives a restart; a bad
file changes nothing; cancelling an entry's job disables its line. (The
oracle's Slurm has no scrontab: this follows Slurm's documentation.)"""

import os
import re
import signal
import time

from conftest import wait_for


def jobs(c):
    r = c.run(["squeue", "-h", "-o", "%i|%j|%T|%r"])
    return [line.split("|") for line in r.stdout.split()]


def eligible(c, job):
    text = c.run(["scontrol", "show", "job", str(job)]).stdout
    return re.search(r"EligibleTime=(\S+)", text).group(1), re.search(r"Restarts=(\d+)", text).group(1)


def test_entries_run_each_minute_as_jobs_and_survive_a_restart(fresh_cluster):
    c = fresh_cluster
    out = c.work / "cron.out"
    text = ("# a comment\n"
            "GREETING=hello\n"
            "#SCRON -t 1 -J every-minute\n"
            f"#SCRON -o {c.work}/cron-%j.out\n"
            f"* * * * * echo $GREETING $SLURM_JOB_ID >> {out}\n"
            "@daily\t/bin/true\n")  # fields may be tab-separated
    r = c.run(["scrontab", "-"], input=text)
    assert r.returncode == 0 and r.stderr == ""
    assert c.run(["scrontab", "-l"]).stdout == text
    listed = jobs(c)
    assert [j[1:] for j in listed] == [["every-minute", "PENDING", "BeginTime"],
                                      ["true", "PENDING", "BeginTime"]]
    minute_job = int(listed[0][0])
    when, restarts = eligible(c, minute_job)
    assert when.endswith(":00") and restarts == "0"

    # A bad file is refused whole, each bad line named; nothing changes.
    r = c.run(["scrontab", "-"], input="61 * * * * true\n@often true\n* * * * * true\n",
              check=False)
    assert r.returncode == 1
    assert "line 1: minute field: '61' is not 0-59" in r.stderr
    assert "line 2: unknown schedule @often" in r.stderr
    assert c.run(["scrontab", "-l"]).stdout == text and len(jobs(c)) == 2
    # So is one whose job musterd refuses (no such partition).
    r = c.run(["scrontab", "-"], input="@daily true\n#SCRON -p nosuch\n@hourly true\n",
              check=False)
    assert r.returncode == 1 and "line 3:" in r.stderr and "partition" in r.stderr.lower()
    assert c.run(["scrontab", "-l"]).stdout == text
    assert [j[0] for j in jobs(c)] == [j[0] for j in listed]

    # The first run: a normal job, then back in the queue for the next minute.
    wait_for(lambda: out.exists(), timeout=75, what="the first run")
    assert out.read_text().split() == ["hello", str(minute_job)]

    def requeued():
        state = [j for j in jobs(c) if int(j[0]) == minute_job]
        return state and state[0][2] == "PENDING" and eligible(c, minute_job)[1] == "1"

    wait_for(requeued, what="the job back in the queue")
    assert eligible(c, minute_job)[0].endswith(":00")
    r = c.run(["sacct", "-j", str(minute_job), "-D", "-X", "-n", "-P", "-o", "JobID,JobName"])
    assert r.stdout.split()[0] == f"{minute_job}|every-minute"

    # Kept across a restart of musterd.
    os.kill(c.daemon_pids()["musterd"], signal.SIGKILL)
    time.sleep(0.2)
    c.up()
    assert c.run(["scrontab", "-l"]).stdout == text
    assert [int(j[0]) for j in jobs(c)] == [minute_job, minute_job + 1]

    # Cancelling an entry's job disables its line.
    c.cancel([minute_job])
    listed = c.run(["scrontab", "-l"]).stdout.splitlines()
    assert listed[4].startswith("#DISABLED: * * * * * echo")
    assert [int(j[0]) for j in jobs(c)] == [minute_job + 1]

    # -e: the editor's file is installed in place of the old one.
    editor = c.work / "editor.sh"
    editor.write_text('#!/bin/sh\necho "@hourly /bin/true" >> "$1"\n')
    editor.chmod(0o755)
    c.run(["scrontab", "-e"], env={"EDITOR": str(editor), "VISUAL": ""})
    assert c.run(["scrontab", "-l"]).stdout.endswith("@hourly /bin/true\n")
    names = sorted(j[1] for j in jobs(c))
    assert names == ["true", "true"]  # the old @daily job replaced, the new @hourly

    # -r removes the crontab and its jobs.
    c.run(["scrontab", "-r"])
    assert jobs(c) == []
    r = c.run(["scrontab", "-l"], check=False)
    assert r.returncode == 1 and r.stderr == "scrontab: error: no crontab for root\n"


def test_another_users_crontab_is_theirs(fresh_cluster, users):
    if not users:
        return
    c = fresh_cluster
    alice, bob = users
    c.run(["scrontab", "-"], input="@daily /bin/true\n", user=alice)
    r = c.run(["scrontab", "-l", "-u", alice], user=bob, check=False)
    assert r.returncode == 1 and "Access/permission denied" in r.stderr
    assert c.run(["scrontab", "-l", "-u", alice]).stdout == "@daily /bin/true\n"  # root may
    assert jobs(c)[0][1] == "true"
    r = c.run(["squeue", "-h", "-o", "%u"])
    assert r.stdout.split() == [alice]
    c.run(["scrontab", "-r", "-u", alice])
    assert jobs(c) == []
