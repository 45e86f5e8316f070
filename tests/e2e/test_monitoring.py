"""The Prometheus alert rules shipped in monitoring/prometheus/: valid for
promtool, their unit tests pass, and every series they read is one musterd
really exports."""

import re
import shutil
import subprocess
from pathlib import Path

import time

from conftest import DEFAULT_CONF, make_cluster

RULES_DIR = Path(__file__).resolve().parents[2] / "monitoring" / "prometheus"


def promtool(*args):
    tool = shutil.which("promtool")
    assert tool, "promtool missing: scripts/build.sh installs Debian's prometheus"
    return subprocess.run([tool, *args], cwd=RULES_DIR, capture_output=True, text=True)


def test_rules_are_valid_and_their_unit_tests_pass():
    rules = sorted(p.name for p in RULES_DIR.glob("*.yml") if not p.name.endswith("_test.yml"))
    tests = sorted(p.name for p in RULES_DIR.glob("*_test.yml"))
    assert rules and tests
    r = promtool("check", "rules", *rules)
    assert r.returncode == 0, r.stdout + r.stderr
    r = promtool("test", "rules", *tests)
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr


def test_rules_read_only_series_musterd_exports():
    # The rules themselves, without their comments.
    text = "".join(line + "\n" for p in RULES_DIR.glob("*.yml") if not p.name.endswith("_test.yml")
                   for line in p.read_text().splitlines() if not line.lstrip().startswith("#"))
    wanted = set(re.findall(r"\b(muster_[a-z_]+)", text))
    assert wanted
    # The agents' GPU series come with their first samples; the health
    # series with health checks configured.
    c = make_cluster(DEFAULT_CONF.replace(
        "GresTypes=gpu\n",
        "GresTypes=gpu\nJobAcctGatherFrequency=1\nHealthCheckInterval=1\nMusterHealthChecks=ecc\n"))
    try:
        deadline = time.time() + 20
        while True:
            status, metrics = c.api("GET", "/metrics")
            assert status == 200
            if "muster_gpu_temperature_celsius{" in metrics or time.time() > deadline:
                break
            time.sleep(0.2)
    finally:
        c.teardown()
    exported = set(re.findall(r"^# TYPE (\S+) ", metrics, re.M))
    assert wanted <= exported, f"not exported: {sorted(wanted - exported)}"
