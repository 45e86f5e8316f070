"""strigger: triggers set, listed and cleared as on Slurm 22.05 (the table,
the messages and the program's arguments below were taken from the
oracle), fired as the events are committed, run as the user who set
them, once unless PERM, and kept across a musterd restart."""

import os
import signal
import time

from conftest import wait_for

# The oracle's `strigger --get` header.
HEADER = ("TRIG_ID RES_TYPE   RES_ID TYPE                                OFFSET USER     FLAGS "
          "PROGRAM\n")


def recorder(c, name):
    """A trigger program that appends its arguments and user to a file."""
    out = c.work / f"{name}.out"
    prog = c.work / f"{name}.sh"
    prog.write_text(f'#!/bin/bash\necho "args=[$*] user=$(id -un)" >> {out}\n')
    prog.chmod(0o755)
    return prog, out


def lines(path):
    return path.read_text().splitlines() if path.exists() else []


def test_node_and_job_triggers_fire_once_with_slurms_arguments(fresh_cluster):
    c = fresh_cluster
    prog, out = recorder(c, "events")
    c.run(["strigger", "--set", "--node", "--down", f"--program={prog}"])
    c.run(["strigger", "--set", "--node=gpu02", "--drained", f"--program={prog}", "--flags=PERM"])
    job = c.sbatch("-w", "cpu01", "-t", "5", "--wrap", "sleep 300")
    c.wait_state(job, "RUNNING")
    r = c.run(["strigger", "--set", f"--jobid={job}", "--fini", f"--program={prog} extra"])
    assert r.stdout == "" and r.stderr == ""
    r = c.run(["strigger", "--get"])
    assert r.stdout == HEADER + (
        "      1 node            * down                                     0 root           "
        f"{prog}\n"
        "      2 node        gpu02 drained                                  0 root     PERM  "
        f"{prog}\n"
        f"      3 job      {job:>8} fini                                     0 root           "
        f"{prog} extra\n")

    c.run(["scontrol", "update", "nodename=gpu02", "state=drain", "reason=test"])
    c.run(["scontrol", "update", "nodename=gpu01", "state=down", "reason=test"])
    c.cancel([job])
    wait_for(lambda: len(lines(out)) == 3, what="three triggers to run")
    assert sorted(lines(out)) == sorted(["args=[gpu02] user=root", "args=[gpu01] user=root",
                                         f"args=[extra {job}] user=root"])
    # Only the PERM one is left; it fires again, the others do not.
    r = c.run(["strigger", "--get", "-N"])
    assert r.stdout == (f"      2 node        gpu02 drained                                  0 root"
                        f"     PERM  {prog}\n")
    c.run(["scontrol", "update", "nodename=gpu02,gpu01", "state=resume"])
    c.run(["scontrol", "update", "nodename=gpu01", "state=down", "reason=again"])
    c.run(["scontrol", "update", "nodename=gpu02", "state=drain", "reason=again"])
    wait_for(lambda: len(lines(out)) == 4, what="the PERM trigger again")
    time.sleep(0.5)
    assert lines(out)[3] == "args=[gpu02] user=root" and len(lines(out)) == 4

    c.run(["strigger", "--clear", "--id=2"])
    r = c.run(["strigger", "--get"])
    assert r.returncode == 0 and r.stdout == ""  # nothing at all without triggers
    r = c.run(["strigger", "--clear", "--id=2"], check=False)
    assert r.returncode == 1 and r.stderr == "slurm_clear_trigger: No such process\n"


def test_fail_trigger_fires_when_a_node_is_set_fail(fresh_cluster):
    # As the oracle: State=FAIL keeps new jobs off the node (ReqNodeNotAvail
    # for one that names it), its running ones go on, sinfo shows "fail"
    # ("failing" while jobs run), scontrol IDLE+FAIL; RESUME ends it.
    c = fresh_cluster
    prog, out = recorder(c, "fail")
    c.run(["strigger", "--set", "--node=cpu01", "--fail", f"--program={prog}"])
    assert " fail " in c.run(["strigger", "--get"]).stdout
    running = c.sbatch("-w", "cpu01", "--wrap", "sleep 300")
    c.wait_state(running, "RUNNING")
    r = c.run(["scontrol", "update", "nodename=cpu01", "state=fail"], check=False)
    assert r.returncode == 1 and "You must specify a reason" in r.stderr
    c.run(["scontrol", "update", "nodename=cpu01", "state=fail", "reason=disk dying"])
    wait_for(lambda: lines(out) == ["args=[cpu01] user=root"], what="the fail trigger")
    assert c.run(["sinfo", "-h", "-N", "-n", "cpu01", "-o", "%t %T %E"]).stdout.split() == [
        "failg", "failing", "disk", "dying"]
    assert c.job(running)["state"] == "RUNNING"
    waits = c.sbatch("-w", "cpu01", "--wrap", "true")
    time.sleep(1)
    r = c.run(["squeue", "-h", "-j", str(waits), "-o", "%r"])
    assert r.stdout.strip() == "ReqNodeNotAvail, UnavailableNodes:cpu01"
    c.cancel([running])
    assert c.run(["sinfo", "-h", "-N", "-n", "cpu01", "-o", "%t"]).stdout.strip() == "fail"
    show = c.run(["scontrol", "show", "node", "cpu01"]).stdout
    assert "State=IDLE+FAIL " in show and "Reason=disk dying" in show
    c.run(["scontrol", "update", "nodename=cpu01", "state=resume"])
    assert c.wait_done(waits) == "COMPLETED"
    assert c.run(["sinfo", "-h", "-N", "-n", "cpu01", "-o", "%t"]).stdout.strip() == "idle"


def test_time_trigger_runs_before_the_limit_as_the_jobs_user(fresh_cluster, users):
    c = fresh_cluster
    user = users[0] if users else None
    prog, out = recorder(c, "time")
    os.chmod(c.work, 0o1777)
    job = c.sbatch("-t", "1", "--wrap", "sleep 300", user=user)
    c.wait_state(job, "RUNNING")
    c.run(["strigger", "--set", f"--jobid={job}", "--time", "--offset=-57", f"--program={prog}"],
          user=user)
    wait_for(lambda: lines(out), timeout=15, what="the time trigger")
    assert lines(out) == [f"args=[{job}] user={user or 'root'}"]
    assert c.run(["strigger", "--get"]).stdout == ""
    c.cancel([job])


def test_refusals_are_slurms_or_name_what_muster_lacks(fresh_cluster, users):
    c = fresh_cluster
    prog, _ = recorder(c, "refused")
    r = c.run(["strigger", "--set", "--get"], check=False)
    assert r.returncode == 1 and "exactly one of the following options: --set, --get or --clear" in r.stderr
    r = c.run(["strigger", "--set", "--node", "--down"], check=False)
    assert r.stderr == "strigger: error: You must specify a --program value\n"
    r = c.run(["strigger", "--set", "--node", "--down", "--program=relative.sh"], check=False)
    assert r.stderr == 'strigger: error: The --program value must start with "/"\n'
    r = c.run(["strigger", "--set", "--time", f"--program={prog}"], check=False)
    assert r.stderr == "strigger: error: You must specify a --jobid value\n"
    r = c.run(["strigger", "--set", "--jobid=999999", "--fini", f"--program={prog}"], check=False)
    assert r.returncode == 1 and r.stderr == "slurm_set_trigger: Invalid job id specified\n"
    r = c.run(["strigger", "--set", "--node=nosuch", "--down", f"--program={prog}"], check=False)
    assert r.returncode == 1 and r.stderr.startswith("slurm_set_trigger: Invalid node name specified")
    r = c.run(["strigger", "--set", "--backup_slurmctld_failure", f"--program={prog}"],
              check=False)
    assert r.returncode == 1
    assert r.stderr == ("strigger: error: --backup_slurmctld_failure is not supported by Muster: "
                        "there is no backup controller\n")
    if users:
        # Node triggers are the operators'; a user may watch their own jobs.
        r = c.run(["strigger", "--set", "--node", "--down", f"--program={prog}"], user=users[0],
                  check=False)
        assert r.returncode == 1 and "Access/permission denied" in r.stderr
        job = c.sbatch("-t", "5", "--wrap", "sleep 60")
        r = c.run(["strigger", "--set", f"--jobid={job}", "--fini", f"--program={prog}"],
                  user=users[0], check=False)
        assert r.returncode == 1 and "Access/permission denied" in r.stderr
        c.cancel([job])
    assert c.run(["strigger", "--get"]).stdout == ""


def test_triggers_survive_a_restart_and_fire_when_musterd_is_back(fresh_cluster):
    c = fresh_cluster
    prog, out = recorder(c, "restart")
    c.run(["strigger", "--set", "--primary_slurmctld_resumed_operation", f"--program={prog}"])
    c.run(["strigger", "--set", "--node=cpu01", "--down", f"--program={prog}", "--flags=PERM"])
    before = c.run(["strigger", "--get"]).stdout
    os.kill(c.daemon_pids()["musterd"], signal.SIGKILL)
    time.sleep(0.2)
    c.up()
    wait_for(lambda: lines(out), what="the resumed_operation trigger")
    assert lines(out) == ["args=[] user=root"]
    after = c.run(["strigger", "--get"]).stdout
    assert "primary_slurmctld_resumed_operation" in before
    assert "primary_slurmctld_resumed_operation" not in after  # fired once
    assert "cpu01 down" in " ".join(after.split())  # the PERM node trigger is kept
    # Ids go on from where they were.
    c.run(["strigger", "--set", "--node", "--up", f"--program={prog}"])
    assert c.run(["strigger", "--get", "--id=3", "-N"]).stdout.split()[0] == "3"
