"""The repair loop in one command: scontrol reboot [ASAP] [nextstate=...]
[reason=...] NODES|ALL, scontrol cancel_reboot, RebootProgram and
ResumeTimeout; Slurm's REBOOT_REQUESTED and REBOOT_ISSUED flags; a node
back from its reboot is health-checked before it takes a job. Emulated
nodes' reboots are played by their agent (away for <control>/boot_seconds,
never back with <control>/boot_fails); and every node is health-checked
when it joins (its agent registers, it is resumed), before any job, with
HealthCheckNodeState's flags."""

import os
import time

from conftest import DEFAULT_CONF, make_cluster, wait_for


def control(c, node):
    spool = next((c.root / "spool").iterdir())  # the agent's spool
    d = spool / "gpus" / node
    d.mkdir(parents=True, exist_ok=True)
    return d


def show_node(c, node):
    """scontrol show node's Key=Value tokens; Reason= whole (it holds
    blanks), without its [user@time]."""
    fields = {}
    for line in c.run(["scontrol", "show", "node", node]).stdout.splitlines():
        if line.strip().startswith("Reason="):
            fields["Reason"] = line.strip()[len("Reason="):].rsplit(" [", 1)[0]
            continue
        for tok in line.split():
            k, _, v = tok.partition("=")
            fields.setdefault(k, v)
    return fields


def sinfo_state(c, node):
    return c.run(["sinfo", "-h", "-N", "-n", node, "-o", "%t"]).stdout.split()[0]


def checked_cluster(tmp_path, extra=""):
    """A cluster with a HealthCheckProgram that fails on a node while a
    file broken-<node> exists, logging each run."""
    os.chmod(tmp_path, 0o755)
    program = tmp_path / "check.sh"
    program.write_text(f"#!/bin/sh\necho \"$SLURMD_NODENAME $(date +%s.%N)\" >> {tmp_path}/checks.log\n"
                       f"if [ -e {tmp_path}/broken-$SLURMD_NODENAME ]; then echo \"bad disk on "
                       "$SLURMD_NODENAME\"; exit 1; fi\nexit 0\n")
    program.chmod(0o755)
    return make_cluster(DEFAULT_CONF + f"HealthCheckProgram={program}\nRebootProgram=/bin/true\n"
                        "ResumeTimeout=4\n" + extra)


def checks(tmp_path, node):
    log = tmp_path / "checks.log"
    return [l for l in log.read_text().splitlines() if l.split()[0] == node] if log.exists() else []


def test_reboot_of_an_idle_node_comes_back_checked(tmp_path):
    c = checked_cluster(tmp_path)
    try:
        # Every node was checked as its agent registered (no interval set).
        wait_for(lambda: all(checks(tmp_path, n) for n in ("gpu01", "gpu02", "cpu01")),
                 what="checks at registration")
        boot = show_node(c, "cpu01")["BootTime"]
        (control(c, "cpu01") / "boot_seconds").write_text("2\n")
        before = len(checks(tmp_path, "cpu01"))
        c.run(["scontrol", "reboot", "cpu01"])
        # Issued at once (it runs nothing), away while it boots.
        wait_for(lambda: "REBOOT_ISSUED" in show_node(c, "cpu01")["State"], what="REBOOT_ISSUED")
        assert sinfo_state(c, "cpu01") == "boot^"
        job = c.sbatch("-w", "cpu01", "-t", "1", "--wrap", "true")
        time.sleep(0.5)
        assert c.job(job)["state"] == "PENDING"
        # Back: checked again, then given the job.
        assert c.wait_done(job, timeout=20) == "COMPLETED"
        assert len(checks(tmp_path, "cpu01")) > before
        assert show_node(c, "cpu01")["State"] == "IDLE"
        assert show_node(c, "cpu01")["BootTime"] != boot
    finally:
        c.teardown()


def test_reboot_asap_drains_waits_for_the_jobs_and_resumes(tmp_path):
    c = checked_cluster(tmp_path)
    try:
        running = c.sbatch("-w", "gpu01", "-t", "1", "--wrap", "sleep 3")
        c.wait_state(running, "RUNNING")
        c.run(["scontrol", "reboot", "ASAP", "nextstate=RESUME", "reason=firmware", "gpu01"])
        f = show_node(c, "gpu01")
        assert f["State"] == "MIXED+DRAIN+REBOOT_REQUESTED", f["State"]
        assert f["Reason"] == "firmware" and f["NextState"] == "RESUME", f
        assert sinfo_state(c, "gpu01") == "drng@"
        # No new job goes there meanwhile.
        later = c.sbatch("-w", "gpu01", "-t", "1", "--wrap", "true")
        time.sleep(1)
        assert c.job(later)["state"] == "PENDING"
        # Once the job ends it reboots, comes back resumed, and the waiting
        # job runs.
        assert c.wait_done(running, timeout=20) == "COMPLETED"
        assert c.wait_done(later, timeout=20) == "COMPLETED"
        f = show_node(c, "gpu01")
        assert f["State"] == "IDLE", f["State"]
        assert "Reason" not in f
    finally:
        c.teardown()


def test_cancel_reboot_undrains_and_nextstate_down_stays_down(tmp_path):
    c = checked_cluster(tmp_path)
    try:
        running = c.sbatch("-w", "gpu02", "-t", "1", "--wrap", "sleep 30")
        c.wait_state(running, "RUNNING")
        c.run(["scontrol", "reboot", "ASAP", "gpu02"])
        f = show_node(c, "gpu02")
        assert "REBOOT_REQUESTED" in f["State"] and f["Reason"].startswith("Reboot ASAP"), f
        c.run(["scontrol", "cancel_reboot", "gpu02"])
        f = show_node(c, "gpu02")
        assert f["State"] == "MIXED", f["State"]
        assert "Reason" not in f
        c.cancel([running])
        # A second cancel has nothing to cancel.
        r = c.run(["scontrol", "cancel_reboot", "gpu02"], check=False)
        assert r.returncode == 1 and r.stderr == "slurm_update error: Invalid node state specified\n"

        c.run(["scontrol", "reboot", "nextstate=DOWN", "cpu01"])
        wait_for(lambda: show_node(c, "cpu01")["State"].startswith("DOWN") and
                 "REBOOT" not in show_node(c, "cpu01")["State"], what="back DOWN")
        assert show_node(c, "cpu01")["Reason"].startswith("reboot requested : reboot issued")
    finally:
        c.teardown()


def test_a_node_that_does_not_come_back_goes_down_and_one_failing_its_check_is_drained(tmp_path):
    c = checked_cluster(tmp_path)
    try:
        (control(c, "cpu01") / "boot_fails").write_text("")
        c.run(["scontrol", "reboot", "cpu01"])
        # Away (DOWN+REBOOT_ISSUED), then DOWN for good after ResumeTimeout.
        assert show_node(c, "cpu01")["State"] == "DOWN+REBOOT_ISSUED"
        wait_for(lambda: show_node(c, "cpu01")["State"] == "DOWN", timeout=15, what="ResumeTimeout")
        assert show_node(c, "cpu01")["Reason"].startswith(
            "reboot requested : reboot issued : reboot timed out"), show_node(c, "cpu01")

        # A node that comes back failing its health check is drained, not
        # given work.
        (tmp_path / "broken-gpu02").write_text("")
        c.run(["scontrol", "reboot", "gpu02"])
        wait_for(lambda: "DRAIN" in show_node(c, "gpu02")["State"], what="the check's drain")
        assert "bad disk on gpu02" in show_node(c, "gpu02")["Reason"]
    finally:
        c.teardown()


def test_reboot_is_refused_without_reboot_program_and_to_users(tmp_path, users):
    c = make_cluster(DEFAULT_CONF)
    try:
        # The oracle's words, each.
        r = c.run(["scontrol", "reboot", "cpu01"], check=False)
        assert r.returncode == 1 and r.stderr == ("scontrol: error: RebootProgram isn't defined\n"
                                                  "scontrol_reboot_nodes error: Unspecified error\n"), r.stderr
        r = c.run(["scontrol", "reboot"], check=False)
        assert r.returncode == 1 and r.stderr == "Missing node list. Specify ALL|<NodeList>\n", r.stderr
        r = c.run(["scontrol", "reboot", "nextstate=UP", "cpu01"], check=False)
        assert r.returncode == 1 and r.stderr == "Invalid state: UP\nValid states: DOWN, RESUME\n", r.stderr
        if users:
            r = c.run(["scontrol", "reboot", "cpu01"], user=users[0], check=False)
            assert r.returncode == 1
            assert r.stderr == "scontrol_reboot_nodes error: Permission denied\n", r.stderr
        assert "REBOOT" not in show_node(c, "cpu01")["State"]
    finally:
        c.teardown()


def test_a_node_is_checked_as_it_joins_before_any_job(tmp_path):
    # gpu02 is broken from the start: drained by its first check, at
    # registration, though no interval is set; a job for it never runs.
    os.chmod(tmp_path, 0o755)
    (tmp_path / "broken-gpu02").write_text("")
    c = checked_cluster(tmp_path)
    try:
        wait_for(lambda: "DRAIN" in show_node(c, "gpu02")["State"], what="drained at registration")
        assert "bad disk on gpu02" in show_node(c, "gpu02")["Reason"]
        job = c.sbatch("-w", "gpu02", "-t", "1", "--wrap", "true")
        # Resumed by an operator but still broken: checked again, drained again.
        c.run(["scontrol", "update", "NodeName=gpu02", "State=RESUME"])
        wait_for(lambda: "DRAIN" in show_node(c, "gpu02")["State"], what="drained again")
        assert c.job(job)["state"] == "PENDING"
        # Fixed and resumed: it passes and takes the job.
        (tmp_path / "broken-gpu02").unlink()
        c.run(["scontrol", "update", "NodeName=gpu02", "State=RESUME"])
        assert c.wait_done(job, timeout=20) == "COMPLETED"
    finally:
        c.teardown()


def test_health_check_node_state_cycle_and_start_only(tmp_path):
    # CYCLE: one node at a time, a third of the interval apart, rather
    # than all three together.
    c = checked_cluster(tmp_path, "HealthCheckInterval=3\nHealthCheckNodeState=CYCLE\n")
    try:
        def runs():
            log = tmp_path / "checks.log"
            return [(l.split()[0], float(l.split()[1])) for l in log.read_text().splitlines()] \
                if log.exists() else []
        # Past the checks every node had as it joined (all at once).
        wait_for(lambda: {n for n, _ in runs()} == {"gpu01", "gpu02", "cpu01"}, what="join checks")
        start = len(runs())
        wait_for(lambda: len(runs()) >= start + 4, timeout=15, what="cycled checks")
        later = runs()[start:]
        # Consecutive periodic checks are of different nodes, spread in time.
        for (n1, t1), (n2, t2) in zip(later, later[1:]):
            assert n1 != n2, later
            assert t2 - t1 > 0.5, later
    finally:
        c.teardown()
    # START_ONLY: checked when it joins, never on the interval.
    (tmp_path / "checks.log").unlink()
    c = checked_cluster(tmp_path, "HealthCheckInterval=1\nHealthCheckNodeState=START_ONLY\n")
    try:
        wait_for(lambda: len(checks(tmp_path, "cpu01")) == 1, what="the check at registration")
        time.sleep(2.5)
        assert len(checks(tmp_path, "cpu01")) == 1
    finally:
        c.teardown()
