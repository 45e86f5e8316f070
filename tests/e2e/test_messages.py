"""Slurm's own words where scripts grep for them: submission refusals,
scancel and scontrol error lines with their exit codes, and -V/--version.
Each expected line was printed by the Slurm 22.05 oracle for the same
command (the detail lines after them are Muster's)."""

import re
import subprocess

import pytest

from conftest import BIN


def err_lines(r):
    return r.stderr.splitlines()


def queued(cluster):
    return cluster.run(["squeue", "-h", "-t", "all", "-o", "%i"]).stdout.split()


# -- sbatch refusals --------------------------------------------------------

NOT_AVAILABLE = "sbatch: error: Batch job submission failed: " \
                "Requested node configuration is not available"


@pytest.mark.parametrize("options, slurm_line, detail", [
    (["-c", "64"], "sbatch: error: CPU count per node can not be satisfied",
     "sbatch: error: cpus: requested 64 per node, the most any node in partition short has is 32"),
    (["--ntasks-per-node=40"], "sbatch: error: CPU count per node can not be satisfied",
     "sbatch: error: cpus: requested 40 per node, the most any node in partition short has is 32"),
    (["-c", "64", "--mem=999999"], "sbatch: error: CPU count per node can not be satisfied",
     "sbatch: error: cpus: requested 64 per node, the most any node in partition short has is 32"),
    (["--mem=999999"], "sbatch: error: Memory specification can not be satisfied",
     "sbatch: error: memory: requested 999999M per node, the most any node in partition short "
     "has is 64000M"),
    (["--mem-per-cpu=64001"], "sbatch: error: Memory specification can not be satisfied",
     "sbatch: error: memory: requested 64001M per node, the most any node in partition short "
     "has is 64000M"),
])
def test_refusal_prints_slurms_line_first(cluster, options, slurm_line, detail):
    before = queued(cluster)
    r = cluster.run(["sbatch", *options, "--wrap", "true"], check=False)
    assert r.returncode == 1 and r.stdout == ""
    assert err_lines(r) == [slurm_line, NOT_AVAILABLE, detail], r.stderr
    assert queued(cluster) == before


def test_refusal_without_a_slurm_line_keeps_two(cluster):
    # Slurm derives -n 33 over one node later: "not available" alone.
    r = cluster.run(["sbatch", "-N", "1", "-n", "33", "--wrap", "true"], check=False)
    assert r.returncode == 1
    assert err_lines(r) == [NOT_AVAILABLE, "sbatch: error: cpus: requested 33 per node, the most "
                            "any node in partition short has is 32"], r.stderr
    r = cluster.run(["sbatch", "--gres=gpu:9", "--wrap", "true"], check=False)
    assert err_lines(r)[0] == NOT_AVAILABLE, r.stderr


@pytest.mark.parametrize("partition, named", [
    ("nosuch", "nosuch"), ("short,nosuch", "nosuch"), ("train,nosuch2,nosuch3", "nosuch2"),
    (",", "(null)"),
])
def test_unknown_partition_is_named(cluster, partition, named):
    r = cluster.run(["sbatch", "-p", partition, "--wrap", "true"], check=False)
    assert r.returncode == 1
    lines = err_lines(r)
    assert lines[:2] == [f"sbatch: error: invalid partition specified: {named}",
                         "sbatch: error: Batch job submission failed: "
                         "Invalid partition name specified"], r.stderr
    assert lines[2].endswith("(short, train)"), r.stderr


def test_unknown_gres_is_refused_by_sbatch_itself(cluster):
    # Slurm's sbatch checks GRES names against the configuration: one line,
    # no "Batch job submission failed".
    r = cluster.run(["sbatch", "--gres=nic:1", "--wrap", "true"], check=False)
    assert r.returncode == 1
    assert err_lines(r) == ["sbatch: error: Invalid generic resource (gres) specification",
                            "sbatch: error: gres/nic: not a GRES of this cluster"], r.stderr
    # musterd says the same to an API caller that skips sbatch.
    status, body = cluster.api("POST", "/v1/jobs", {
        "script": "#!/bin/sh\ntrue\n", "work_dir": str(cluster.work),
        "gres": [{"name": "nic", "count": 1}]})
    assert status == 400 and body["error"] == "Invalid generic resource (gres) specification", body


@pytest.mark.parametrize("options, stderr, code", [
    (["-t", "abc"], ["sbatch: error: Invalid --time specification"], 255),
    (["--time-min=abc"], ["sbatch: error: Invalid --time-min specification"], 255),
    (["--mem=12Q"], ["sbatch: error: Invalid --mem specification"], 255),
    (["-N", "x"], ['sbatch: error: "x" is not a valid node count'], 255),
    (["-N", "3-1"], ["sbatch: error: Maximum node count 1 is less than minimum node count 3"], 255),
    (["-c", "0"], ['sbatch: error: Invalid numeric value "0" for --cpus-per-task.'], 1),
    (["-n", "-1"], ['sbatch: error: Invalid numeric value "-1" for --ntasks.'], 1),
    (["--ntasks-per-node=x"], ['sbatch: error: Invalid numeric value "x" for --ntasks-per-node.'], 1),
    (["--open-mode=x"], ["sbatch: error: Invalid --open-mode specification"], 255),
    (["--exclusive=maybe"], ["sbatch: error: Invalid --exclusive specification"], 255),
    (["--kill-on-invalid-dep=maybe"], ["sbatch: error: Invalid --kill-on-invalid-dep specification"], 255),
    (["--bogus"], ["sbatch: unrecognized option '--bogus'",
                   'Try "sbatch --help" for more information'], 255),
])
def test_sbatch_option_errors(cluster, options, stderr, code):
    # Slurm 22.05's sbatch (on the oracle): a refused value is its "error:"
    # line alone; only an option it does not know gets getopt's line and the
    # hint. A count out of range exits 1, everything else 255. Nothing is
    # submitted.
    before = queued(cluster)
    r = cluster.run(["sbatch", *options, "--wrap", "true"], check=False)
    assert r.returncode == code
    assert err_lines(r) == stderr, r.stderr
    # The same in a directive.
    script = cluster.work / "bad-directive.sh"
    script.write_text("#!/bin/sh\n#SBATCH " + " ".join(options) + "\ntrue\n")
    r = cluster.run(["sbatch", str(script)], check=False)
    assert r.returncode == code and err_lines(r)[0] == stderr[0], r.stderr
    assert queued(cluster) == before


# -- scancel ----------------------------------------------------------------

def test_scancel_signal_errors(cluster):
    pending = cluster.sbatch("-H", "--wrap", "true")
    running = cluster.sbatch("--wrap", "sleep 60")
    done = cluster.sbatch("--wrap", "true")
    cluster.wait_state(running, "RUNNING")
    cluster.wait_done(done)
    # A pending job: Slurm's scancel retries ~90 s, then prints this and
    # exits 228 (ESLURM_TRANSITION_STATE_NO_UPDATE); Muster answers at once.
    for sig in ("99", "USR1"):
        r = cluster.run(["scancel", "-s", sig, str(pending)], check=False)
        assert r.returncode == 228, r
        assert err_lines(r) == [f"scancel: error: Kill job error on job id {pending}: "
                                "Job can not be altered now, try again later"], r.stderr
    assert cluster.job(pending)["state"] == "PENDING"
    # An ended or unknown job is an error once a signal is asked for.
    for job in (done, 999999):
        r = cluster.run(["scancel", "--signal=USR1", str(job)], check=False)
        assert r.returncode == 1
        assert err_lines(r) == [f"scancel: error: Kill job error on job id {job}: "
                                "Invalid job id specified"], r.stderr
    r = cluster.run(["scancel", "-v", "999999"], check=False)
    assert r.returncode == 0
    assert err_lines(r) == ["scancel: Terminating job 999999",
                            "scancel: error: Kill job error on job id 999999: "
                            "Invalid job id specified"], r.stderr
    # Names and 0 are checked by scancel itself, as in Slurm.
    for sig in ("BOGUS", "0"):
        r = cluster.run(["scancel", "-s", sig, str(running)], check=False)
        assert r.returncode == 1 and r.stderr == f"Unknown job signal: {sig}\n"
    # Slurm passes 99 on and reports nothing while nothing happens; Muster
    # says why it cannot be sent.
    r = cluster.run(["scancel", "-s", "99", str(running)], check=False)
    assert r.returncode == 1
    assert err_lines(r) == [f"scancel: error: Kill job error on job id {running}: "
                            "Invalid signal 99: Linux signals are 1-64"], r.stderr
    r = cluster.run(["scancel", "-v", "-s", "USR2", str(running)])
    assert err_lines(r) == [f"scancel: Signal 12 to job {running}"]
    assert cluster.job(running)["state"] == "RUNNING"
    cluster.run(["scancel", str(pending), str(running)])


def test_scancel_of_another_users_job_exits_210(cluster, users):
    if not users:
        pytest.skip("needs root for the test users")
    theirs = cluster.sbatch("-H", "--wrap", "true", user=users[1])
    r = cluster.run(["scancel", "-v", str(theirs)], user=users[0], check=False)
    assert r.returncode == 210
    assert err_lines(r) == [f"scancel: Terminating job {theirs}",
                            f"scancel: error: Kill job error on job id {theirs}: "
                            "Access/permission denied"], r.stderr
    cluster.run(["scancel", str(theirs)])


# -- scontrol hold / release / update ---------------------------------------

def test_hold_release_error_lines(cluster, users):
    held = cluster.sbatch("-H", "--wrap", "true")
    done = cluster.sbatch("--wrap", "true")
    cluster.wait_done(done)
    cases = [
        (["hold", str(done)], [f"Job has already finished for job {done}",
                               "slurm_suspend error: Job has already finished"]),
        (["uhold", "999999"], ["Invalid job id specified for job 999999",
                               "slurm_suspend error: Invalid job id specified"]),
        (["release", "abc"], ["Invalid job id specified for job abc",
                              "slurm_suspend error: Invalid job id specified"]),
        # One slurm_suspend line per argument, naming the last job's outcome.
        (["hold", "999998,999999"], ["Invalid job id specified for job 999998",
                                     "Invalid job id specified for job 999999",
                                     "slurm_suspend error: Invalid job id specified"]),
        (["hold", "999998", "999999"], ["Invalid job id specified for job 999998",
                                        "slurm_suspend error: Invalid job id specified",
                                        "Invalid job id specified for job 999999",
                                        "slurm_suspend error: Invalid job id specified"]),
        (["hold", f"999999,{held}"], ["Invalid job id specified for job 999999",
                                      "slurm_suspend error: No error"]),
        # An array task's id: "<id>: <error>" and no slurm_suspend line.
        (["release", f"{held}_3"], [f"{held}_3: Invalid job id specified"]),
        # requeue has no second line.
        (["requeue", "999999"], ["Invalid job id specified for job 999999"]),
    ]
    for argv, want in cases:
        r = cluster.run(["scontrol", *argv], check=False)
        assert r.returncode == 1 and err_lines(r) == want, (argv, r.stderr)
    if users:
        # Slurm's job update refuses another user with "Invalid user id".
        for argv in (["release", str(held)], ["hold", str(held)], ["uhold", str(held)]):
            r = cluster.run(["scontrol", *argv], user=users[0], check=False)
            assert r.returncode == 1
            assert err_lines(r) == [f"Invalid user id for job {held}",
                                    "slurm_suspend error: Invalid user id"], (argv, r.stderr)
        r = cluster.run(["scontrol", "update", f"JobId={held}", "Comment=x"], user=users[0],
                        check=False)
        assert r.returncode == 1 and err_lines(r) == [f"Invalid user id for job {held}"], r.stderr
    cluster.run(["scancel", str(held)])


# -- versions ---------------------------------------------------------------

SLURM_VERSION = re.compile(r"slurm (\d+)\.(\d+)")


def check_version_line(text):
    line = text.strip()
    m = SLURM_VERSION.search(line)
    assert m and (m.group(1), m.group(2)) == ("22", "05"), line
    words = line.split()
    assert words[0] == "slurm" and words[1] == "22.05.8", line
    assert re.fullmatch(r"slurm 22\.05\.8 \(muster \d+\.\d+\.\d+\)", line), line
    return line


def test_every_command_prints_its_version(cluster):
    lines = set()
    for cmd in ("sbatch", "srun", "squeue", "sinfo", "scancel", "scontrol", "sacct", "sreport",
                "seff", "sprio", "sshare", "sacctmgr", "muster"):
        for flag in ("-V", "--version"):
            r = cluster.run([cmd, flag], check=False)
            assert r.returncode == 0 and r.stderr == "", (cmd, flag, r.stderr)
            lines.add(check_version_line(r.stdout))
    lines.add(check_version_line(cluster.run(["scontrol", "version"]).stdout))
    for daemon in ("musterd", "muster-agent"):
        r = subprocess.run([str(BIN / daemon), "-V"], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        lines.add(check_version_line(r.stdout))
    assert len(lines) == 1, lines  # one version, from one place
    # What tools read elsewhere is the same Slurm release.
    show = cluster.run(["scontrol", "show", "config"]).stdout
    assert re.search(r"^SLURM_VERSION\s+= 22\.05\.8$", show, re.M), show
    assert set(cluster.run(["sinfo", "-h", "-o", "%v"]).stdout.split()) == {"22.05.8"}
