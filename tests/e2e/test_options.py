"""Every command's --help and --usage, and the options Slurm has that Muster
does not do: refused by name (nothing submitted or changed), or taken with a
warning when they change nothing in Muster; never ignored silently."""

import os
import shutil

import pytest

from conftest import BIN

COMMANDS = ["sbatch", "srun", "salloc", "squeue", "sinfo", "scancel", "scontrol", "sacct",
            "sreport", "sstat", "sprio", "sshare", "sacctmgr", "sdiag"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_usage_and_version_of_every_command(cluster, command):
    path = shutil.which(command, path=cluster.env["PATH"])
    assert os.path.realpath(path).startswith(os.path.realpath(BIN))
    for flag in ("--help", "--usage"):
        r = cluster.run([command, flag])
        assert r.returncode == 0 and r.stderr == "", (command, flag, r.stderr)
        first = r.stdout.splitlines()[0]
        # Slurm's layout: the usage line first.
        assert first.startswith(("Usage:", "usage:", command)), (command, flag, first)
    r = cluster.run([command, "-V"])
    assert r.stdout.startswith("slurm 22.05"), (command, r.stdout)


def test_job_commands_help_lists_the_option_groups(cluster):
    text = cluster.run(["sbatch", "--help"]).stdout
    assert text.startswith("Usage: sbatch ")
    for group in ("Parallel run options:", "Constraint options:",
                  "Consumable resources related options:", "GPU scheduling options:",
                  "Help options:"):
        assert "\n" + group + "\n" in text
    assert "  -a, --array=indexes" in text
    assert "--bb=<spec>" in text and "[not in Muster]" in text
    assert "--pty" in cluster.run(["srun", "--help"]).stdout
    assert "--pty" not in text


def queued(cluster):
    return cluster.run(["squeue", "-h", "-o", "%i"]).stdout.split()


def test_an_option_muster_lacks_is_refused_by_name_and_nothing_is_submitted(cluster):
    before = queued(cluster)
    r = cluster.run(["sbatch", "--bb=capacity=1G", "--wrap", "true"], check=False)
    assert r.returncode != 0
    assert r.stderr == "sbatch: error: --bb is not supported by Muster: burst buffers are not managed\n"
    script = "#!/bin/bash\n#SBATCH --tmp=10G\ntrue\n"
    r = cluster.run(["sbatch"], input=script, check=False)
    assert r.returncode != 0 and "--tmp is not supported by Muster" in r.stderr
    assert queued(cluster) == before
    r = cluster.run(["srun", "--multi-prog", "conf"], check=False)
    assert r.returncode != 0 and r.stderr == "srun: error: --multi-prog is not supported by Muster yet\n"
    r = cluster.run(["salloc", "--gid=0", "true"], check=False)
    assert r.returncode != 0 and "salloc: error: --gid is not supported by Muster" in r.stderr
    r = cluster.run(["scancel", "-q", "normal", "1"], check=False)
    assert r.returncode == 1 and r.stderr == "scancel: error: --qos is not supported by Muster yet\n"
    r = cluster.run(["sacct", "-T"], check=False)
    assert r.returncode == 1 and "--truncate is not supported by Muster" in r.stderr


def test_an_option_without_effect_is_taken_with_a_warning(cluster):
    script = "#!/bin/bash\n#SBATCH --mail-type=END\n#SBATCH --mail-user=someone\ntrue\n"
    r = cluster.run(["sbatch", "--parsable"], input=script)
    job = int(r.stdout.strip())
    assert r.stderr.splitlines() == [
        "sbatch: warning: --mail-type has no effect in Muster: no mail is sent yet",
        "sbatch: warning: --mail-user has no effect in Muster: no mail is sent yet",
    ]
    assert cluster.wait_done(job) == "COMPLETED"
    r = cluster.run(["srun", "-v", "-n1", "true"])
    assert r.stderr == "srun: warning: --verbose has no effect in Muster: there is no more detail to print\n"


def test_sacct_filters_that_used_to_be_ignored(cluster):
    one = cluster.sbatch("-w", "cpu01", "-n1", "--wrap", "true")
    two = cluster.sbatch("-w", "gpu01,gpu02", "-N2", "-n2", "--wrap",
                         "/usr/bin/python3 -c 'x = bytearray(60 << 20)'")
    for job in (one, two):
        assert cluster.wait_done(job) == "COMPLETED"
    ids = f"{one},{two}"

    def listed(*args):
        r = cluster.run(["sacct", "-X", "-n", "-P", "-o", "JobID", "-j", ids, *args])
        return [int(x) for x in r.stdout.split()]

    assert listed() == [one, two]
    assert listed("-N", "gpu02") == [two]
    assert listed("-N", "cpu01,gpu[05-06]") == [one]
    assert listed("--nnodes=2") == [two]
    assert listed("-i", "1") == [one]
    assert listed("-I", "2-8") == [two]
    assert listed("-q", "normal") == [one, two]
    assert listed("-q", "bogus") == []
    if os.geteuid() == 0:
        assert listed("-g", "root") == [one, two]
    r = cluster.run(["sacct", "-i", "x"], check=False)
    assert r.returncode == 1 and r.stderr == "sacct: error: --nnodes=x: give a count or min-max\n"
    # --noconvert: bytes, no unit.
    r = cluster.run(["sacct", "-j", f"{two}.batch", "-n", "-P", "--noconvert", "-o", "MaxRSS"])
    assert int(r.stdout.strip()) >= 60 << 20
    assert cluster.run(["sacct", "-e"]).stdout.startswith("Account             AdminComment")
