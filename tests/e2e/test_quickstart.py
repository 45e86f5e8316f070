"""scripts/quickstart.sh, the first of the README's two commands: it builds
Muster's programs only (scripts/build.sh --programs, the muster_programs
target; scripts/test.sh builds the rest), starts a cluster, runs the
handbook's first three jobs and leaves the cluster running."""

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import BIN

ROOT = Path(__file__).resolve().parents[2]
BUILD = BIN.parent


def built_from_this_tree():
    """The build under test was configured from these sources (the
    quickstart reconfigures it)."""
    cache = BUILD / "CMakeCache.txt"
    if not cache.exists():
        return False
    m = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", cache.read_text(), re.M)
    return m is not None and Path(m.group(1)).resolve() == ROOT


pytestmark = pytest.mark.skipif(not built_from_this_tree(),
                                reason="the build under test is not this tree's")


def test_the_programs_target_holds_the_programs_alone():
    r = subprocess.run(["ninja", "-C", str(BUILD), "-t", "query", "src/muster_programs"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    inputs = r.stdout.split("input: phony")[1].split("outputs:")[0].split()
    assert sorted(inputs) == ["bin/muster", "bin/muster-agent", "bin/muster-step", "bin/musterd"]


def test_quickstart_runs_the_first_three_jobs(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "SBATCH_", "SQUEUE_")) and k != "MUSTER_CONF"}
    env["MUSTER_BUILD_DIR"] = str(BUILD)
    state = tmp_path / "quickstart"
    r = subprocess.run([str(ROOT / "scripts" / "quickstart.sh"), str(state)], env=env,
                       capture_output=True, text=True, timeout=900)
    conf = re.search(r"^MUSTER_CONF=(\S+)$", r.stdout, re.M)
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        assert "build.sh: building muster, musterd, muster-agent and muster-step" in r.stderr
        for line in ("Hello from", "preprocessing on", "done", "task 0 of 1 on",
                     "epoch 1/1 finished", "Stop it with:"):
            assert line in r.stdout, (line, r.stdout)
    finally:
        if conf:
            subprocess.run([str(BIN / "muster"), "down", "--conf", conf.group(1)],
                           capture_output=True, timeout=60)
