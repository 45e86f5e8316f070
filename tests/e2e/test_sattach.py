"""sattach: joining a running srun step's I/O. The step's srun keeps the
latest output for a sattach that comes later and sends what sattach reads
to the tasks; the messages, the --layout text and the exit codes below were
taken from the oracle's sattach (Slurm 22.05)."""

import os
import shutil
import subprocess
import time

from conftest import BIN, end_input, kill9, wait_for

# Two tasks that print, wait, print to both streams and fail (3 and 4).
FAILING = ("srun -n2 bash -c 'echo start $SLURM_PROCID; sleep 4; echo x$SLURM_PROCID; "
           "echo e$SLURM_PROCID >&2; exit $((SLURM_PROCID+3))'")


def sattach(c, *args, check=False, user=None, input=""):
    return c.run(["sattach", *args], check=check, user=user, input=input)


def popen_sattach(c, *args, stdin=subprocess.DEVNULL):
    return subprocess.Popen([str(BIN / "sattach"), *args], env=c.env, cwd=str(c.work),
                            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_attachable(c, step, user=None):
    wait_for(lambda: sattach(c, "--layout", step, user=user).returncode == 0,
             what=f"step {step} to be attachable")


def test_sattach_is_musters_own():
    found = shutil.which("sattach", path=f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    assert found is not None and os.path.realpath(found).startswith(os.path.realpath(BIN))


def test_sattach_replays_follows_filters_and_exits_with_the_tasks(cluster):
    c = cluster
    job = c.sbatch("-n2", "-N1", "-w", "cpu01", "--wrap", FAILING)
    wait_attachable(c, f"{job}.0")
    # Two sattach's at once: one with labels, one with a filter per stream.
    labelled = popen_sattach(c, "-l", f"{job}.0")
    filtered = popen_sattach(c, "--output-filter=1", "--error-filter", "0", f"{job}.0")
    out, err = labelled.communicate(timeout=30)
    # What the tasks printed before sattach came is replayed.
    assert sorted(out.splitlines()) == ["0: start 0", "0: x0", "1: start 1", "1: x1"], out
    err_lines = err.splitlines()
    assert sorted(l for l in err_lines if not l.startswith("sattach:")) == ["0: e0", "1: e1"]
    assert "sattach: error: task 0 exited with exit code 3" in err_lines
    assert "sattach: error: task 1 exited with exit code 4" in err_lines
    assert labelled.returncode == 4  # the highest, as the oracle's
    out, err = filtered.communicate(timeout=30)
    assert out.splitlines() == ["start 1", "x1"], out
    assert [l for l in err.splitlines() if not l.startswith("sattach:")] == ["e0"]
    assert filtered.returncode == 4
    # The step has ended: Slurm's message.
    c.wait_done(job)
    r = sattach(c, f"{job}.0")
    assert r.returncode == 1
    assert r.stderr == "sattach: error: Could not get job step info: Job/step already completing or completed\n"


def test_sattach_input_reaches_the_task_it_names(cluster):
    # An interactive srun whose stdin stays open; sattach's stdin goes to
    # task 1 alone, and its end ends task 1's stdin (as the oracle's).
    c = cluster
    srun = subprocess.Popen(
        [str(BIN / "srun"), "-N1", "-n2", "-w", "cpu01", "-J", "attach-input", "bash", "-c",
         "echo start $SLURM_PROCID; while read l; do echo got$SLURM_PROCID:$l; done; "
         "echo end$SLURM_PROCID"],
        env=c.env, cwd=str(c.work), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        job = wait_for(lambda: c.run(["squeue", "-h", "-n", "attach-input", "-o", "%i"]).stdout.strip(),
                       what="srun's allocation")
        wait_attachable(c, f"{job}.0")
        att = popen_sattach(c, "-l", "--input-filter=1", f"{job}.0", stdin=subprocess.PIPE)
        end_input(att, "hello\nworld\n")
        time.sleep(1)
        # Task 0 still reads srun's stdin: the step and sattach go on.
        assert att.poll() is None and srun.poll() is None
        end_input(srun, "from-srun\n")
        out, err = att.communicate(timeout=30)
        assert att.returncode == 0, err
        lines = out.splitlines()
        assert [l for l in lines if l.startswith("1: ")] == [
            "1: start 1", "1: got1:hello", "1: got1:world", "1: end1"], out
        assert "0: got0:from-srun" in lines and "0: got0:hello" not in lines
        srun_out, _ = srun.communicate(timeout=30)
        assert "got1:hello" in srun_out and "got0:hello" not in srun_out
        assert "got0:from-srun" in srun_out and "got1:from-srun" not in srun_out
    finally:
        if srun.poll() is None:
            srun.kill()
            srun.communicate()


def test_sattach_layout_is_slurms(cluster):
    c = cluster
    job = c.sbatch("-n3", "-N2", "-w", "gpu[01-02]", "--wrap", "srun -n3 -m cyclic sleep 60")
    wait_attachable(c, f"{job}.0")
    r = sattach(c, "--layout", f"{job}.0", check=True)
    assert r.stdout == ("Job step layout:\n\t3 tasks, 2 nodes (gpu[01-02])\n\n"
                        "\tNode 0 (gpu01), 2 task(s): 0 2 \n"
                        "\tNode 1 (gpu02), 1 task(s): 1 \n")
    c.cancel([job])


def test_sattach_errors_are_slurms(cluster, users):
    c = cluster
    usage = "Usage: sattach [options] <jobid.stepid>\n"
    cases = [
        (["999999.0"], "", "sattach: error: Could not get job step info: Invalid job id specified\n"),
        (["12"], usage, "sattach: error: Failed to parse stepid from command line options\n"),
        (["abc"], usage, "sattach: error: Failed to parse stepid from command line options\n"),
        (["1.0", "2.0"], usage, "sattach: error: too many parameters\n"),
        (["--output-filter=x", "1.0"], "",
         "sattach: error: Invalid numeric value \"x\" for output-filter.\n"),
    ]
    for args, out, err in cases:
        r = sattach(c, *args)
        assert (r.returncode, r.stdout, r.stderr) == (1, out, err), args
    # A pending job; another user's step (Slurm says nothing and exits 0;
    # Muster refuses); the batch step, which has no I/O to join.
    hold = c.sbatch("-w", "cpu01", "--exclusive", "--wrap", "srun sleep 60", user=users[0])
    pending = c.sbatch("-w", "cpu01", "--exclusive", "--wrap", "true", user=users[0])
    wait_attachable(c, f"{hold}.0", user=users[0])
    r = sattach(c, f"{pending}.0", user=users[0])
    assert (r.returncode, r.stderr) == (
        1, "sattach: error: Could not get job step info: Job is pending execution\n")
    r = sattach(c, f"{hold}.0", user=users[1])
    assert (r.returncode, r.stderr) == (
        1, "sattach: error: Could not get job step info: Access/permission denied\n")
    r = sattach(c, f"{hold}.batch", user=users[0])
    assert r.returncode == 1 and "has no I/O to attach to" in r.stderr
    assert sattach(c, "--pty", f"{hold}.0").returncode == 1
    c.cancel([hold, pending])


def test_sattach_help_usage_version(cluster):
    c = cluster
    r = sattach(c, "--help", check=True)
    lines = r.stdout.splitlines()
    assert lines[0] == "Usage: sattach [options] <jobid.stepid>"
    assert any(l.startswith("      --input-filter=taskid") for l in lines)
    assert "Help options:" in lines
    assert sattach(c, "--usage", check=True).stdout == "Usage: sattach [options] <jobid.stepid>\n"
    assert sattach(c, "-V", check=True).stdout.startswith("slurm 22.05.8")


def test_sattach_joins_a_step_that_was_running_when_musterd_restarted(fresh_cluster):
    c = fresh_cluster
    job = c.sbatch("-n1", "-w", "cpu01", "--wrap",
                   "srun bash -c 'echo before; sleep 6; echo after'")
    wait_attachable(c, f"{job}.0")
    kill9(c.daemon_pids()["musterd"])
    c.up()
    r = sattach(c, "-l", f"{job}.0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["0: before", "0: after"]
