"""Advance reservations through scontrol and sbatch (the handbook's
"a reservation for team-ml"): their layout and refusals as the oracle
prints them, jobs in and out of them, and survival of a musterd crash."""
import getpass
import os
import re
import signal
import time

import pytest

ME = getpass.getuser()


def scontrol(cluster, *args):
    return cluster.run(["scontrol", *args], check=False)


def test_reservation_for_team_ml(fresh_cluster):
    c = fresh_cluster
    r = scontrol(c, "create", "reservation", "ReservationName=team-ml", "StartTime=now",
                 "Duration=60", f"Users={ME}", "Nodes=gpu01")
    assert (r.returncode, r.stdout) == (0, "Reservation created: team-ml\n"), r.stderr
    shown = scontrol(c, "show", "reservation", "team-ml").stdout
    lines = shown.split("\n")
    assert lines[0].startswith("ReservationName=team-ml StartTime="), shown
    assert lines[0].endswith(" Duration=01:00:00"), shown
    assert lines[1:5] == [
        "   Nodes=gpu01 NodeCnt=1 CoreCnt=32 Features=(null) PartitionName=(null) "
        "Flags=SPEC_NODES",
        "   TRES=cpu=32",
        f"   Users={ME} Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE "
        "BurstBuffer=(null) Watts=n/a",
        "   MaxStartDelay=(null)"], shown
    assert shown.endswith("\n\n"), shown

    # What Slurm refuses, in its words.
    cases = [
        (["create", "reservation", "ReservationName=team-ml", "StartTime=now", "Duration=60",
          f"Users={ME}", "Nodes=gpu02"],
         "Error creating the reservation: Duplicate reservation name\n"),
        (["create", "reservation", "ReservationName=x", "StartTime=now", "Duration=60"],
         "scontrol: error: CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be "
         "specified.  No reservation created.\n"),
        (["create", "reservation", "ReservationName=x", "StartTime=now", "Duration=60",
          "Nodes=gpu02"],
         "scontrol: error: Either Users/Groups and/or Accounts must be specified.  No "
         "reservation created.\n"),
        (["create", "reservation", "ReservationName=x", "StartTime=bogus", "Duration=60",
          f"Users={ME}", "Nodes=gpu02"],
         "Invalid time specification (pos=0): bogus\nscontrol: error: Invalid start time "
         "StartTime=bogus.  No reservation created.\n"),
        (["create", "reservation", "ReservationName=x", "StartTime=now", "Duration=60",
          f"Users={ME}", "Nodes=gpu09"],
         "Error creating the reservation: Invalid node name specified\n"),
        (["create", "reservation", "ReservationName=x", "StartTime=now", "Duration=60",
          f"Users={ME}", "Nodes=gpu01"],
         "Error creating the reservation: Requested reservation overlaps with another "
         "reservation\n"),
        (["create", "reservation", "ReservationName=x", "StartTime=now", "Duration=60",
          f"Users={ME}", "Nodes=gpu02", "Flags=BOGUS"],
         "scontrol: error: Error parsing flags BOGUS.  No reservation created.\n"),
        (["update", "ReservationName=nope", "Duration=5"],
         "Error updating the reservation: Requested reservation is invalid\n"
         "slurm_update error: Requested reservation is invalid\n"),
        (["delete", "ReservationName=nope"],
         "delete_reservation ReservationName=nope: Requested reservation is invalid\n"),
    ]
    for args, err in cases:
        r = scontrol(c, *args)
        assert (r.returncode, r.stderr) == (1, err), (args, r.stderr)
    r = scontrol(c, "show", "reservation", "nope")
    assert (r.returncode, r.stdout) == (1, "Reservation nope not found\n")

    # In its window gpu01 takes only team-ml's jobs, and they only gpu01.
    inside = c.sbatch("-p", "train", "--reservation=team-ml", "--gres=gpu:8", "--wrap",
                      "sleep 30")
    c.wait_state(inside, "RUNNING")
    assert c.job(inside)["nodelist"] == "gpu01"
    outsider = c.sbatch("-p", "train", "-w", "gpu01", "-t", "5", "--wrap", "true")
    elsewhere = c.sbatch("-p", "train", "--gres=gpu:8", "-t", "5", "--wrap", "sleep 30")
    c.wait_state(elsewhere, "RUNNING")
    assert c.job(elsewhere)["nodelist"] == "gpu02"
    time.sleep(0.5)
    assert c.job(outsider)["state"] == "PENDING"
    r = c.run(["squeue", "-h", "-j", str(outsider), "-o", "%r"])
    assert r.stdout.strip() == "ReqNodeNotAvail, May be reserved for other job", r.stdout
    r = c.run(["squeue", "-h", "-j", str(inside), "-o", "%v"])
    assert r.stdout.strip() == "team-ml"
    assert "\n   Reservation=team-ml\n" in c.run(["scontrol", "show", "job", str(inside)]).stdout
    r = c.run(["sbatch", "--reservation=nope", "--wrap", "true"], check=False)
    assert r.returncode == 1
    assert "Requested reservation is invalid" in r.stderr, r.stderr

    # In use: it stays.
    r = scontrol(c, "delete", "ReservationName=team-ml")
    assert (r.returncode, r.stderr) == (
        1, "delete_reservation ReservationName=team-ml: Requested reservation is in use\n")
    r = scontrol(c, "update", "ReservationName=team-ml", "Duration=30")
    assert (r.returncode, r.stdout) == (0, "Reservation updated.\n"), r.stderr
    assert " Duration=00:30:00\n" in scontrol(c, "show", "res").stdout

    # A reservation by count, for an account, in a partition, later on.
    r = scontrol(c, "create", "res", "StartTime=now+1hour", "Duration=1-0", f"Accounts={ME}",
                 "NodeCnt=1", "PartitionName=short", "Flags=MAINT,DAILY")
    assert r.returncode == 0, r.stderr
    name = r.stdout.strip().rsplit(" ", 1)[1]
    assert name.startswith(f"{ME}_"), r.stdout
    later = scontrol(c, "show", "-o", "reservation", name).stdout
    # Off the GPU nodes where one will do, as idle nodes go first.
    assert " Nodes=cpu01 NodeCnt=1 CoreCnt=16 " in later, later
    assert " PartitionName=short Flags=MAINT,DAILY " in later, later
    assert " State=INACTIVE " in later and " Duration=1-00:00:00 " in later, later

    # A job of it waits for its start and is planned for that moment on its
    # node (squeue --start), as backfill plans every waiting job.
    waiting = c.sbatch("-p", "short", f"--reservation={name}", "-t", "10", "--wrap", "true")
    deadline = time.time() + 10
    while c.job(waiting)["reason"] != "Reservation" and time.time() < deadline:
        time.sleep(0.05)
    assert c.job(waiting)["reason"] == "Reservation"
    begins = re.search(r"StartTime=(\S+)", later).group(1)
    r = c.run(["squeue", "--start", "-h", "-j", str(waiting), "-o", "%S %Y"])
    assert r.stdout.split() == [begins, "cpu01"], (r.stdout, begins)

    # A crash of musterd loses none of them.
    os.kill(c.daemon_pids()["musterd"], signal.SIGKILL)
    time.sleep(0.5)
    c.up()
    after = scontrol(c, "show", "reservation").stdout
    assert "ReservationName=team-ml " in after and f"ReservationName={name} " in after, after

    c.run(["scancel", str(inside), str(outsider), str(elsewhere), str(waiting)], check=False)
    c.wait_done(inside)
    r = scontrol(c, "delete", "reservation", "team-ml")
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert "team-ml" not in scontrol(c, "show", "reservation").stdout


def test_sinfo_lists_reservations_as_slurm_does(fresh_cluster):
    # sinfo -T on the oracle: a table in the order the reservations were
    # made, the name column as wide as the longest name (only under the
    # header), the rest fixed; ACTIVE in its window, INACTIVE before it.
    c = fresh_cluster
    r = c.run(["sinfo", "-T"])
    assert (r.stdout, r.stderr) == ("No reservations in the system\n", "")
    made = [("zz_first", "StartTime=now+2hours", "Duration=30", "Nodes=gpu01"),
            ("team-ml", "StartTime=now", "Duration=60", "Nodes=gpu01"),
            ("a_much_longer_window_name", "StartTime=now+1hour", "Duration=1-02:03:00",
             "Nodes=gpu02,cpu01")]
    for name, *args in made:
        r = scontrol(c, "create", "reservation", f"ReservationName={name}", f"Users={ME}", *args)
        assert r.returncode == 0, r.stderr

    def row(name, width):
        fields = dict(kv.split("=", 1) for kv in scontrol(c, "show", "reservation", name).stdout.split()
                      if "=" in kv)
        return (f"{name:<{width}}  {fields['State']:>8}  {fields['StartTime']:>19}  "
                f"{fields['EndTime']:>19}  {fields['Duration']:>11}  {fields['Nodes']}")

    header = (f"{'RESV_NAME':<25}  {'STATE':>8}  {'START_TIME':>19}  {'END_TIME':>19}  "
              f"{'DURATION':>11}  NODELIST")
    r = c.run(["sinfo", "-T"])
    assert r.stdout.splitlines() == [header] + [row(m[0], 25) for m in made], r.stdout
    assert r.stdout.splitlines()[2].split()[:2] == ["team-ml", "ACTIVE"], r.stdout
    assert r.stdout.splitlines()[3].split()[-2:] == ["1-02:03:00", "cpu01,gpu02"], r.stdout
    r = c.run(["sinfo", "--reservation", "--noheader"])
    assert r.stdout.splitlines() == [row(m[0], 9) for m in made], r.stdout
    r = c.run(["sinfo", "-T", "-l"])
    assert re.fullmatch(r"\w{3} \w{3} \d\d \d\d:\d\d:\d\d \d{4}", r.stdout.splitlines()[0]), r.stdout
    assert r.stdout.splitlines()[1] == header, r.stdout
