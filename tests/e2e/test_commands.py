"""The Slurm-named commands as people and workflow tools call them."""

import os
import pwd
import re
import struct
import time

import pytest

from conftest import BIN


def test_squeue_default_columns(cluster):
    job = cluster.sbatch("-H", "-J", "myjob", "--wrap", "true")
    r = cluster.run(["squeue"])
    lines = r.stdout.splitlines()
    assert lines[0] == "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)"
    row = [l for l in lines if l.split()[0] == str(job)][0]
    assert row.split()[1:] == ["short", "myjob", "root", "PD", "0:00", "1", "(JobHeldUser)"]
    cluster.run(["scancel", str(job)])


def test_squeue_formats_used_by_tools(cluster):
    job = cluster.sbatch("-H", "-J", "fmt", "--wrap", "true")
    # Nextflow / Parsl
    r = cluster.run(["squeue", "--noheader", "-o", "%i %t", "-t", "all"])
    assert f"{job} PD" in r.stdout.splitlines()
    # Snakemake 8 plugin
    r = cluster.run(["squeue", "--format=%i|%T", "--states=all", "--noheader", "--name", "fmt"])
    assert r.stdout.strip() == f"{job}|PENDING"
    # Toil
    r = cluster.run(["squeue", "-h", "--format", "%i %t %M"])
    assert f"{job} PD 0:00" in r.stdout.splitlines()
    r = cluster.run(["squeue", "-h", "-O", "JobID,Name,State"])
    assert r.stdout.split()[:3] == [str(job), "fmt", "PENDING"] or str(job) in r.stdout
    cluster.run(["scancel", str(job)])
    r = cluster.run(["squeue", "-h", "-j", str(job), "-o", "%i %T", "-t", "all"])
    assert r.stdout.strip() == f"{job} CANCELLED"


def test_squeue_filters(cluster, users):
    if not users:
        pytest.skip("needs root to switch users")
    mine = cluster.sbatch("-H", "--wrap", "true", user=users[0])
    theirs = cluster.sbatch("-H", "-p", "train", "--wrap", "true", user=users[1])
    r = cluster.run(["squeue", "-h", "-o", "%i", "-u", users[0]])
    assert r.stdout.split() == [str(mine)]
    r = cluster.run(["squeue", "-h", "-o", "%i", "--me"], user=users[1])
    assert r.stdout.split() == [str(theirs)]
    # A task split off an array (a new record) is still its owner's, by
    # name and by uid.
    arr = cluster.sbatch("-H", "--array=0-2", "--wrap", "true", user=users[0])
    cluster.run(["scontrol", "update", f"JobId={arr}_1", "Comment=split"], user=users[0])
    uid = str(pwd.getpwnam(users[0]).pw_uid)
    for who in (users[0], uid):
        r = cluster.run(["squeue", "-h", "-r", "-o", "%i", "-u", who])
        assert r.stdout.split() == [str(mine), f"{arr}_0", f"{arr}_2", f"{arr}_1"], r.stdout
    cluster.run(["scancel", str(arr)])
    r = cluster.run(["squeue", "-h", "-o", "%i", "-p", "train", "-t", "PD"])
    assert str(theirs) in r.stdout.split() and str(mine) not in r.stdout.split()
    r = cluster.run(["squeue", "-h", "-o", "%i", "-j", f"{mine},{theirs}"])
    assert sorted(r.stdout.split()) == sorted([str(mine), str(theirs)])
    # users may cancel only their own jobs
    r = cluster.run(["scancel", str(theirs)], user=users[0], check=False)
    assert r.returncode == 210  # as Slurm: ESLURM_ACCESS_DENIED's low byte
    assert f"Kill job error on job id {theirs}: Access/permission denied" in r.stderr
    assert cluster.job(theirs)["state"] == "PENDING"
    r = cluster.run(["scontrol", "release", str(theirs)], user=users[0], check=False)
    assert r.returncode != 0
    r = cluster.run(["scontrol", "update", "NodeName=cpu01", "State=DRAIN", "Reason=x"],
                    user=users[0], check=False)
    assert r.returncode != 0
    assert "permission" in r.stderr.lower()
    cluster.run(["scancel", str(mine)], user=users[0])
    cluster.run(["scancel", str(theirs)])  # root may
    assert cluster.job(theirs)["state"] == "CANCELLED"


def test_squeue_unknown_users_warn_from_musterd(cluster):
    # The CLI looks no user up (it is a static binary without NSS code):
    # musterd resolves -u and sends squeue's warning with the listing, which
    # squeue prints to stderr as Slurm 22.05 does (checked on the oracle).
    job = cluster.sbatch("-H", "--wrap", "true")
    r = cluster.run(["squeue", "-h", "-o", "%i", "-u", "nosuchuser,root"])
    assert r.returncode == 0
    assert r.stderr == "squeue: error: Invalid user: nosuchuser\n\n"
    assert r.stdout.split() == [str(job)]
    # A name with a line break stays text on stderr (a carriage return as
    # '?'); it never becomes a header of the reply.
    r = cluster.run(["squeue", "-u", "nosuch\r\nX-Evil: 1"])
    assert r.stderr == "squeue: error: Invalid user: nosuch?\nX-Evil: 1\n\n", r.stderr
    assert r.stdout.splitlines() == [r.stdout.splitlines()[0]]  # the header only
    cluster.run(["scancel", str(job)])


def test_cli_is_static():
    # No dynamic loader at every sbatch's start: the multi-call binary has no
    # PT_INTERP program header (ELF64, little-endian).
    data = (BIN / "muster").read_bytes()
    assert data[:6] == b"\x7fELF\x02\x01"
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    types = [struct.unpack_from("<I", data, phoff + i * phentsize)[0] for i in range(phnum)]
    pt_interp, pt_load = 3, 1
    assert pt_load in types and pt_interp not in types


def test_squeue_long_and_running(cluster):
    job = cluster.sbatch("-J", "runner", "-t", "5", "--wrap", "sleep 30")
    cluster.wait_state(job, "RUNNING")
    r = cluster.run(["squeue", "-l", "-j", str(job)])
    lines = r.stdout.splitlines()
    assert re.match(r"^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$", lines[0])
    assert "TIME_LIMI" in lines[1]
    row = lines[2].split()
    assert row[0] == str(job) and row[4] == "RUNNING" and row[6] == "5:00"
    r = cluster.run(["squeue", "-h", "-j", str(job), "-o", "%N %D %C %R"])
    node, n, cpus, reason = r.stdout.split()
    assert n == "1" and cpus == "1" and reason == node
    cluster.run(["scancel", str(job)])
    cluster.wait_done(job)


def test_sinfo_views(cluster):
    r = cluster.run(["sinfo"])
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["PARTITION", "AVAIL", "TIMELIMIT", "NODES", "STATE", "NODELIST"]
    assert any(l.startswith("short*") for l in lines)
    assert any(l.startswith("train ") for l in lines)
    r = cluster.run(["sinfo", "-o", "%P"])
    assert r.stdout.split() == ["PARTITION", "short*", "train"]
    r = cluster.run(["sinfo", "-a", "-h", "-o", "%P %G %l %p %c %m"])  # Toil
    assert "train gpu:h100:8 3-00:00:00 1 32 64000" in r.stdout.splitlines()
    r = cluster.run(["sinfo", "-N", "-h", "-o", "%N %c %m %G"])
    assert "gpu01 32 64000 gpu:h100:8" in r.stdout.splitlines()
    r = cluster.run(["sinfo", "-s"])
    assert "NODES(A/I/O/T)" in r.stdout


def test_scontrol_show_records(cluster):
    job = cluster.sbatch("-H", "-J", "showme", "--comment", "hi there", "--wrap", "true")
    out = cluster.run(["scontrol", "show", "job", str(job)]).stdout
    assert out.startswith(f"JobId={job} JobName=showme")
    assert re.search(r"JobState=PENDING Reason=JobHeldUser", out)
    assert "Comment=hi there" in out
    # Snakemake's fallback regex
    out = cluster.run(["scontrol", "show", "jobid", "-dd", str(job)]).stdout
    assert re.search(r"JobState=(\w+)", out).group(1) == "PENDING"
    one = cluster.run(["scontrol", "-o", "show", "job", str(job)]).stdout
    assert one.count("\n") == 1 and f"JobId={job}" in one
    r = cluster.run(["scontrol", "show", "job", "999999"], check=False)
    assert r.returncode == 1 and "Invalid job id specified" in r.stderr
    node = cluster.run(["scontrol", "show", "node", "gpu01"]).stdout
    assert node.startswith("NodeName=gpu01 ") and "Gres=gpu:h100:8" in node and "CPUTot=32" in node
    part = cluster.run(["scontrol", "show", "partition", "train"]).stdout
    assert part.startswith("PartitionName=train") and "MaxTime=3-00:00:00" in part
    conf = cluster.run(["scontrol", "show", "config"]).stdout
    assert re.search(r"^MinJobAge\s+= 300", conf, re.M)
    assert re.search(r"^ClusterName\s+= e2e", conf, re.M)
    cluster.run(["scancel", str(job)])


def test_scontrol_hostlists(cluster):
    r = cluster.run(["scontrol", "show", "hostnames", "gpu[01-03,10],cpu1"])
    assert r.stdout.split() == ["gpu01", "gpu02", "gpu03", "gpu10", "cpu1"]
    r = cluster.run(["scontrol", "show", "hostlist", "gpu01,gpu02,gpu03,gpu10"])
    assert r.stdout.strip() == "gpu[01-03,10]"
    r = cluster.run(["scontrol", "show", "hostnames"], env={"SLURM_JOB_NODELIST": "n[1-2]"})
    assert r.stdout.split() == ["n1", "n2"]


def test_scancel_filters_and_signal(cluster):
    a = cluster.sbatch("-H", "-J", "grp", "--wrap", "true")
    b = cluster.sbatch("-H", "-J", "grp", "--wrap", "true")
    c = cluster.sbatch("-H", "-J", "other", "-p", "train", "--wrap", "true")
    cluster.run(["scancel", "-n", "grp"])
    assert cluster.job(a)["state"] == cluster.job(b)["state"] == "CANCELLED"
    assert cluster.job(c)["state"] == "PENDING"
    cluster.run(["scancel", "-p", "train", "-t", "PENDING"])
    assert cluster.job(c)["state"] == "CANCELLED"
    script = cluster.work / "trap.sh"
    script.write_text("#!/bin/bash\ntrap 'echo got USR1; exit 0' USR1\n"
                      "echo ready\nwhile true; do sleep 0.1; done\n")
    j = cluster.sbatch(str(script))
    cluster.wait_state(j, "RUNNING")
    out = cluster.work / f"slurm-{j}.out"
    deadline = time.time() + 10
    while time.time() < deadline and "ready" not in (out.read_text() if out.exists() else ""):
        time.sleep(0.05)
    cluster.run(["scancel", "--signal=USR1", "--batch", str(j)])
    assert cluster.wait_done(j) == "COMPLETED"
    assert "got USR1" in out.read_text()
    r = cluster.run(["scancel", "999999"], check=False)
    assert r.returncode == 0 and r.stderr == ""  # Slurm 22.05 is silent here
    r = cluster.run(["scancel", "-v", "999999"], check=False)
    assert "Kill job error on job id 999999: Invalid job id specified" in r.stderr
    r = cluster.run(["scancel", str(j)], check=False)
    assert r.returncode == 0, "cancelling an ended job is not an error" 


def wait_until_ready(cluster, job, timeout=20):
    """Waits for the job's script to write ready_<job> in the work dir."""
    ready = cluster.work / f"ready_{job}"
    deadline = time.time() + timeout
    while time.time() < deadline and not ready.exists():
        time.sleep(0.05)
    assert ready.exists(), cluster.job(job)


def test_scancel_signal_reaches_steps_not_the_batch_shell(cluster):
    # submitit's pattern: the work runs under srun and traps the signal; the
    # batch shell has none, so as in Slurm it must not be signalled (-b, -f
    # reach it).
    script = cluster.work / "steps.sh"
    script.write_text(
        "#!/bin/bash\n"
        "srun -n1 /bin/bash -c \"trap 'echo step got USR2; exit 0' USR2; echo up > ready_$SLURM_JOB_ID;"
        " while true; do sleep 0.1; done\"\n"
        "echo shell went on\n")
    j = cluster.sbatch("-o", "steps_%j.out", str(script))
    wait_until_ready(cluster, j)
    cluster.run(["scancel", str(j), "--signal", "USR2"])
    assert cluster.wait_done(j) == "COMPLETED"
    text = (cluster.work / f"steps_{j}.out").read_text()
    assert "step got USR2" in text and "shell went on" in text, text

    # -f: the shell and what it started get it too.
    script.write_text("#!/bin/bash\ntrap 'echo shell got USR2; exit 3' USR2\n"
                      "echo up > ready_$SLURM_JOB_ID\nwhile true; do sleep 0.1; done\n")
    j = cluster.sbatch("-o", "full_%j.out", str(script))
    wait_until_ready(cluster, j)
    cluster.run(["scancel", "--signal=USR2", str(j)])  # no steps: nothing happens
    time.sleep(0.3)
    assert cluster.job(j)["state"] == "RUNNING"
    cluster.run(["scancel", "-f", "--signal=USR2", str(j)])
    assert cluster.wait_done(j) == "FAILED"
    assert "shell got USR2" in (cluster.work / f"full_{j}.out").read_text()


def test_snakemake_style_submission(cluster):
    logdir = cluster.work / ".snakemake" / "slurm_logs" / "rule_a"
    logdir.mkdir(parents=True)
    r = cluster.run(["sbatch", "-J", "snakejob", "-o", f"{logdir}/%j.log", "--export=ALL",
                     "-p", "short", "-t", "10", "--mem-per-cpu", "100", "--ntasks=1",
                     "--cpus-per-task=2", "-D", str(cluster.work), "--wrap=echo $SLURM_CPUS_ON_NODE"])
    job = int(r.stdout.split()[-1])
    assert r.stdout.startswith("Submitted batch job ")
    assert cluster.wait_done(job) == "COMPLETED"
    assert (logdir / f"{job}.log").read_text().strip() == "2"


def test_nextflow_style_script(cluster):
    script = cluster.work / ".command.run"
    script.write_text("#!/bin/bash\n#SBATCH -J nf-task\n#SBATCH -o /dev/null\n#SBATCH --no-requeue\n"
                      "#SBATCH --signal B:USR2@30\n#SBATCH -c 2\n#SBATCH -t 00:10:00\n#SBATCH --mem 1024M\n"
                      "echo done > nf.out\n")
    r = cluster.run(["sbatch", str(script)])
    job = int(re.search(r"Submitted batch job (\d+)", r.stdout).group(1))
    assert cluster.wait_done(job) == "COMPLETED"
    assert (cluster.work / "nf.out").read_text() == "done\n"
    r = cluster.run(["squeue", "--noheader", "-o", "%i %t", "-t", "all"])
    assert f"{job} CD" in r.stdout.splitlines()


def test_directives_and_overrides(cluster):
    script = cluster.work / "dirs.sh"
    script.write_text("#!/bin/bash\n#SBATCH --job-name=fromscript\n#SBATCH -c 2 # two cpus\n"
                      "\n# a plain comment\n#SBATCH --comment=kept\n"
                      "echo $SLURM_JOB_NAME $SLURM_CPUS_PER_TASK\n"
                      "#SBATCH --job-name=ignored-after-command\n")
    job = cluster.sbatch("-c", "3", str(script))
    assert cluster.wait_done(job) == "COMPLETED"
    assert (cluster.work / f"slurm-{job}.out").read_text().strip() == "fromscript 3"
    r = cluster.run(["sbatch", "--bogus", "--wrap", "true"], check=False)
    assert r.returncode == 255 and "unrecognized option '--bogus'" in r.stderr
    bad = cluster.work / "noshebang.sh"
    bad.write_text("echo hi\n")
    r = cluster.run(["sbatch", str(bad)], check=False)
    assert r.returncode == 1 and "This does not look like a batch script" in r.stderr
