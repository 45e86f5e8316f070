"""Debian's real Prometheus server scrapes a running cluster at its
MusterMetricsAddress and answers queries about it."""

import json
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from conftest import DEFAULT_CONF, make_cluster

DASHBOARDS = Path(__file__).resolve().parents[2] / "monitoring" / "grafana"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


@pytest.fixture
def scraped():
    """A cluster serving /metrics on TCP and a Prometheus scraping it each
    second: (cluster, metrics port, Prometheus' base URL)."""
    prometheus = shutil.which("prometheus")
    assert prometheus, "prometheus missing: scripts/build.sh installs Debian's prometheus"
    metrics_port = free_port()
    c = make_cluster(DEFAULT_CONF + f"MusterMetricsAddress=127.0.0.1:{metrics_port}\n")
    work = Path(tempfile.mkdtemp(prefix="muster-prom-"))
    proc = None
    try:
        (work / "prometheus.yml").write_text(
            "global:\n  scrape_interval: 1s\n"
            "scrape_configs:\n  - job_name: muster\n"
            f"    static_configs:\n      - targets: ['127.0.0.1:{metrics_port}']\n")
        web_port = free_port()
        proc = subprocess.Popen(
            [prometheus, f"--config.file={work / 'prometheus.yml'}",
             f"--storage.tsdb.path={work / 'data'}", f"--web.listen-address=127.0.0.1:{web_port}"],
            stdout=subprocess.DEVNULL, stderr=open(work / "prometheus.log", "w"))
        base = f"http://127.0.0.1:{web_port}"
        deadline = time.time() + 60
        while True:
            try:
                if get(base + "/-/ready")[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            assert proc.poll() is None, (work / "prometheus.log").read_text()
            assert time.time() < deadline, "Prometheus not ready in 60 s"
            time.sleep(0.3)
        yield c, metrics_port, base
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        c.teardown()
        shutil.rmtree(work, ignore_errors=True)


def query(base, expr):
    """The instant vector of `expr`: [(labels, value)]."""
    _, body = get(base + "/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    data = json.loads(body)
    assert data["status"] == "success", data
    return [(r["metric"], float(r["value"][1])) for r in data["data"]["result"]]


def wait_for(base, expr, want, timeout=30):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = query(base, expr)
        if last and last[0][1] == want:
            return last
        time.sleep(0.5)
    raise AssertionError(f"{expr}: {last}, not {want}")


def test_prometheus_scrapes_the_cluster(scraped):
    c, metrics_port, base = scraped
    # Only /metrics is served on that port, to anyone, without credentials.
    status, text = get(f"http://127.0.0.1:{metrics_port}/metrics")
    assert status == 200 and "# TYPE muster_gpus gauge" in text
    with pytest.raises(urllib.error.HTTPError) as refused:
        get(f"http://127.0.0.1:{metrics_port}/v1/jobs")
    assert refused.value.code == 404

    wait_for(base, 'up{job="muster"}', 1)
    wait_for(base, 'muster_gpus{state="idle",partition="train"}', 16)
    job = c.sbatch("-p", "train", "--gres=gpu:3", "-t", "5", "--wrap", "sleep 60")
    c.wait_state(job, {"RUNNING"})
    wait_for(base, 'muster_gpus{state="allocated",partition="train"}', 3)
    wait_for(base, 'muster_jobs{state="RUNNING"}', 1)
    wait_for(base, "muster_jobs_started_total", 1)
    c.cancel([job])
    wait_for(base, 'muster_gpus{state="allocated",partition="train"}', 0)


def test_dashboards_query_what_prometheus_has(scraped):
    """Every query of the Grafana dashboards in monitoring/grafana/ is
    valid PromQL for the real server, over series musterd exports."""
    c, metrics_port, base = scraped
    _, text = get(f"http://127.0.0.1:{metrics_port}/metrics")
    exported = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    wait_for(base, 'up{job="muster"}', 1)
    dashboards = sorted(DASHBOARDS.glob("*.json"))
    assert dashboards
    for path in dashboards:
        dash = json.loads(path.read_text())
        exprs = [t["expr"] for panel in dash["panels"] for t in panel.get("targets", [])]
        assert exprs, path.name
        for expr in exprs:
            used = set(re.findall(r"\b(muster_[a-z_]+?)(?:_bucket|_sum|_count)?\b", expr))
            assert used <= exported, f"{path.name}: {expr}: not exported: {used - exported}"
            # Valid PromQL, evaluated by the server (an error is a 400).
            query(base, expr)
    # A panel shows the cluster once scraped.
    gpus = query(base, "sum by (partition, state) (muster_gpus)")
    assert {(m["partition"], m["state"]) for m, _ in gpus} >= {("train", "idle")}
