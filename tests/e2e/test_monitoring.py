"""The Prometheus alert rules shipped in monitoring/prometheus/: valid for
promtool, their unit tests pass, and every series they read is one musterd
really exports. The Alertmanager configuration in monitoring/alertmanager/:
valid for amtool, routing by node, and silencing a node an operator took
out of service, on a real Alertmanager fed by a real Prometheus scraping a
cluster."""

import json
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from conftest import DEFAULT_CONF, make_cluster, wait_for

MONITORING = Path(__file__).resolve().parents[2] / "monitoring"
RULES_DIR = MONITORING / "prometheus"
ALERTMANAGER_YML = MONITORING / "alertmanager" / "alertmanager.yml"


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
    # The agents' GPU and filesystem series come with their first samples;
    # the health series with health checks configured.
    c = make_cluster(DEFAULT_CONF.replace(
        "GresTypes=gpu\n",
        "GresTypes=gpu\nJobAcctGatherFrequency=1\nHealthCheckInterval=1\nMusterHealthChecks=ecc\n"
        "MusterWatchedFilesystems=/\n"))
    try:
        deadline = time.time() + 20
        while True:
            status, metrics = c.api("GET", "/metrics")
            assert status == 200
            if ("muster_gpu_temperature_celsius{" in metrics
                    and "muster_node_filesystem_avail_bytes{" in metrics) or time.time() > deadline:
                break
            time.sleep(0.2)
    finally:
        c.teardown()
    exported = set(re.findall(r"^# TYPE (\S+) ", metrics, re.M))
    assert wanted <= exported, f"not exported: {sorted(wanted - exported)}"


# -- Alertmanager -------------------------------------------------------------

def tool(name, package):
    path = shutil.which(name)
    assert path, f"{name} missing: scripts/build.sh installs Debian's {package}"
    return path


def amtool(*args):
    return subprocess.run([tool("amtool", "prometheus-alertmanager"), *args],
                          capture_output=True, text=True, timeout=60)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read().decode()) if "/api/" in url else r.read().decode()


def wait_ready(base, proc, log, what):
    deadline = time.time() + 60
    while True:
        try:
            http_get(base + "/-/ready")
            return
        except (urllib.error.URLError, ConnectionError):
            pass
        assert proc.poll() is None, f"{what} exited:\n" + log.read_text()
        assert time.time() < deadline, f"{what} not ready in 60 s:\n" + log.read_text()
        time.sleep(0.2)


@contextmanager
def running(argv, work, what, base):
    """`argv` started with its log in `work`, until it answers /-/ready at
    `base`; stopped at the end."""
    log = work / f"{what}.log"
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    try:
        wait_ready(base, proc, log, what)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def alertmanager():
    """Debian's Alertmanager with the shipped configuration on a loopback
    port (no cluster peers): its base URL."""
    work = Path(tempfile.mkdtemp(prefix="muster-am-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    try:
        with running([tool("prometheus-alertmanager", "prometheus-alertmanager"),
                      f"--config.file={ALERTMANAGER_YML}", f"--storage.path={work / 'data'}",
                      f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="],
                     work, "alertmanager", base):
            yield base
    finally:
        shutil.rmtree(work, ignore_errors=True)


def alerts(base):
    """{(alertname, node, extra label values...): (state, receivers)} of
    every alert the Alertmanager holds."""
    out = {}
    for a in http_get(base + "/api/v2/alerts"):
        l = a["labels"]
        key = (l["alertname"], l.get("node", ""), l.get("gpu", ""))
        out[key] = (a["status"]["state"], sorted(r["name"] for r in a["receivers"]))
    return out


def test_alertmanager_configuration_is_valid_and_routes_each_node_apart():
    r = amtool("check-config", str(ALERTMANAGER_YML))
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr
    assert "2 inhibit rules" in r.stdout

    def route(*labels):
        r = amtool("config", "routes", "test", f"--config.file={ALERTMANAGER_YML}", *labels)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout.strip()

    assert route("alertname=MusterGpuXid", "node=gpu01", "severity=critical") == "operators"
    assert route("alertname=MusterFilesystemFull", "node=gpu01", "severity=warning") == "operators"
    assert route("alertname=MusterControllerDown", "severity=critical") == "operators"
    # The maintenance alert only silences: it reaches nobody.
    assert route("alertname=MusterNodeMaintenance", "node=gpu01", "severity=info") == "blackhole"
    # --verify.receivers fails when the route is not the one named.
    r = amtool("config", "routes", "test", f"--config.file={ALERTMANAGER_YML}",
               "--verify.receivers=operators", "alertname=MusterNodeMaintenance", "node=gpu01")
    assert r.returncode != 0


def test_alertmanager_groups_by_node_and_silences_a_node_in_maintenance():
    with alertmanager() as base:
        url = f"--alertmanager.url={base}"
        for labels in (["alertname=MusterGpuXid", "node=gpu01", "gpu=3", "severity=critical"],
                       ["alertname=MusterFilesystemFull", "node=gpu01", "mountpoint=/scratch",
                        "severity=warning"],
                       ["alertname=MusterGpuXid", "node=gpu02", "gpu=0", "severity=critical"],
                       ["alertname=MusterControllerDown", "severity=critical"]):
            r = amtool("alert", "add", url, *labels)
            assert r.returncode == 0, r.stdout + r.stderr
        wait_for(lambda: len(alerts(base)) == 4, what="the alerts posted")
        assert {k: v[0] for k, v in alerts(base).items()} == {
            ("MusterGpuXid", "gpu01", "3"): "active",
            ("MusterFilesystemFull", "gpu01", ""): "active",
            ("MusterGpuXid", "gpu02", "0"): "active",
            ("MusterControllerDown", "", ""): "active",
        }
        # One group per alert name and node.
        groups = {tuple(sorted(g["labels"].items())): g["receiver"]["name"]
                  for g in http_get(base + "/api/v2/alerts/groups")}
        assert groups == {
            (("alertname", "MusterGpuXid"), ("node", "gpu01")): "operators",
            (("alertname", "MusterGpuXid"), ("node", "gpu02")): "operators",
            (("alertname", "MusterFilesystemFull"), ("node", "gpu01")): "operators",
            (("alertname", "MusterControllerDown"),): "operators",
        }, groups

        # An operator drains gpu01: its alerts are suppressed, inhibited by
        # the maintenance alert; gpu02's and the controller's are not.
        r = amtool("alert", "add", url, "alertname=MusterNodeMaintenance", "node=gpu01",
                   "by=operator", "severity=info")
        assert r.returncode == 0, r.stdout + r.stderr
        want = {
            ("MusterGpuXid", "gpu01", "3"): ("suppressed", ["operators"]),
            ("MusterFilesystemFull", "gpu01", ""): ("suppressed", ["operators"]),
            ("MusterGpuXid", "gpu02", "0"): ("active", ["operators"]),
            ("MusterControllerDown", "", ""): ("active", ["operators"]),
            ("MusterNodeMaintenance", "gpu01", ""): ("active", ["blackhole"]),
        }
        wait_for(lambda: alerts(base) == want, what="gpu01's alerts suppressed")
        inhibited = [a for a in http_get(base + "/api/v2/alerts")
                     if a["labels"].get("node") == "gpu01" and a["status"]["state"] == "suppressed"]
        assert len(inhibited) == 2 and all(a["status"]["inhibitedBy"] for a in inhibited)
        # amtool lists them as inhibited.
        r = amtool("alert", "query", url, "--inhibited", "-o", "json", "node=gpu01")
        assert r.returncode == 0, r.stderr
        assert {a["labels"]["alertname"] for a in json.loads(r.stdout)
                if a["status"]["state"] == "suppressed"} == {"MusterGpuXid", "MusterFilesystemFull"}

        # A node whose agent is gone goes DOWN: the agent is what is reported.
        for name in ("MusterAgentDown", "MusterNodeDown"):
            r = amtool("alert", "add", url, f"alertname={name}", "node=gpu03", "severity=warning")
            assert r.returncode == 0, r.stdout + r.stderr
        wait_for(lambda: {k: v[0] for k, v in alerts(base).items() if k[1] == "gpu03"} == {
            ("MusterAgentDown", "gpu03", ""): "active",
            ("MusterNodeDown", "gpu03", ""): "suppressed",
        }, what="gpu03's DOWN covered by its agent's absence")


def test_the_repair_loop_an_xid_alerts_until_an_operator_drains_the_node():
    """A cluster scraped by Prometheus evaluating the shipped rules and
    sending to Alertmanager with the shipped configuration: an Xid on a GPU
    alerts; an operator draining its node silences the node's alerts, and
    resuming it brings them back."""
    metrics_port = free_port()
    c = make_cluster(DEFAULT_CONF.replace("GresTypes=gpu\n", "GresTypes=gpu\nJobAcctGatherFrequency=1\n")
                     + f"MusterMetricsAddress=127.0.0.1:{metrics_port}\n")
    work = Path(tempfile.mkdtemp(prefix="muster-loop-"))
    try:
        with alertmanager() as am:
            prom_port = free_port()
            (work / "prometheus.yml").write_text(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                f"rule_files: ['{RULES_DIR / 'muster_rules.yml'}']\n"
                "alerting:\n  alertmanagers:\n    - static_configs:\n"
                f"        - targets: ['{am.removeprefix('http://')}']\n"
                "scrape_configs:\n  - job_name: muster\n    static_configs:\n"
                f"      - targets: ['127.0.0.1:{metrics_port}']\n")
            with running([tool("prometheus", "prometheus"), f"--config.file={work / 'prometheus.yml'}",
                          f"--storage.tsdb.path={work / 'data'}",
                          f"--web.listen-address=127.0.0.1:{prom_port}"],
                         work, "prometheus", f"http://127.0.0.1:{prom_port}"):
                # A hardware Xid on gpu01's GPU 3, an application's on gpu02's GPU 0.
                control = next((c.root / "spool").iterdir()) / "gpus"
                for node, gpu, xid in (("gpu01", "3", "79"), ("gpu02", "0", "13")):
                    (control / node / gpu).mkdir(parents=True, exist_ok=True)
                    (control / node / gpu / "xid").write_text(xid + "\n")

                def loop_alerts():
                    return {k: v for k, v in alerts(am).items()
                            if k[0] in ("MusterGpuXid", "MusterNodeMaintenance")}
                firing = {("MusterGpuXid", "gpu01", "3"): ("active", ["operators"]),
                          ("MusterGpuXid", "gpu02", "0"): ("active", ["operators"])}
                wait_for(lambda: loop_alerts() == firing, timeout=60, what="the Xid alerts")
                severity = {a["labels"]["node"]: a["labels"]["severity"]
                            for a in http_get(am + "/api/v2/alerts")
                            if a["labels"]["alertname"] == "MusterGpuXid"}
                assert severity == {"gpu01": "critical", "gpu02": "warning"}

                c.run(["scontrol", "update", "NodeName=gpu01", "State=DRAIN",
                       "Reason=maintenance: replace GPU 3"])
                wait_for(lambda: loop_alerts() == {
                    ("MusterGpuXid", "gpu01", "3"): ("suppressed", ["operators"]),
                    ("MusterGpuXid", "gpu02", "0"): ("active", ["operators"]),
                    ("MusterNodeMaintenance", "gpu01", ""): ("active", ["blackhole"]),
                }, timeout=60, what="gpu01's Xid silenced by its maintenance")

                c.run(["scontrol", "update", "NodeName=gpu01", "State=RESUME"])
                wait_for(lambda: loop_alerts() == firing, timeout=60,
                         what="gpu01's Xid back once resumed")
    finally:
        c.teardown()
        shutil.rmtree(work, ignore_errors=True)
