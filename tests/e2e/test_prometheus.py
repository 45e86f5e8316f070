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
    c = make_cluster(DEFAULT_CONF.replace(
        "GresTypes=gpu\n",
        "GresTypes=gpu\nJobAcctGatherFrequency=1\nHealthCheckInterval=1\nMusterHealthChecks=ecc\n")
        + f"MusterMetricsAddress=127.0.0.1:{metrics_port}\n")
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


def label_values(base, query):
    """Grafana's label_values(METRIC, LABEL) variable query, answered by
    the server."""
    m = re.fullmatch(r"label_values\((\w+), (\w+)\)", query)
    assert m, query
    _, body = get(base + f"/api/v1/label/{m.group(2)}/values?"
                  + urllib.parse.urlencode({"match[]": m.group(1)}))
    return json.loads(body)["data"]


def test_dashboards_query_what_prometheus_has(scraped):
    """Every query of the Grafana dashboards in monitoring/grafana/ is
    valid PromQL for the real server, over series musterd exports, and
    the "my job" and node dashboards show a running job's GPUs."""
    c, metrics_port, base = scraped
    wait_for(base, 'up{job="muster"}', 1)
    job = c.sbatch("-p", "train", "-w", "gpu02", "--gres=gpu:2", "-t", "5", "--wrap",
                   'for i in $(echo $CUDA_VISIBLE_DEVICES | tr , " "); do '
                   'echo 50 > $MUSTER_GPU_CONTROL_DIR/$i/utilization; done; sleep 120')
    c.wait_state(job, {"RUNNING"})
    wait_for(base, f'count(muster_gpu_utilization_ratio{{hpc_job="{job}"}} == 0.5)', 2)
    _, text = get(f"http://127.0.0.1:{metrics_port}/metrics")
    exported = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    dashboards = sorted(DASHBOARDS.glob("*.json"))
    assert {p.name for p in dashboards} >= {"muster-operator.json", "muster-my-job.json",
                                            "muster-node.json"}
    shown = {}
    for path in dashboards:
        dash = json.loads(path.read_text())
        values = {"__rate_interval": "1m", "__interval": "15s"}
        for var in dash["templating"]["list"]:
            if var["type"] == "query":
                found = label_values(base, var["query"]["query"])
                assert found, f"{path.name}: ${var['name']} has no values"
                values[var["name"]] = str(job) if var["name"] == "job" else "gpu02"
                assert values[var["name"]] in found, (var["name"], found)
        exprs = [t["expr"] for panel in dash["panels"] for t in panel.get("targets", [])]
        assert exprs, path.name
        for expr in exprs:
            used = set(re.findall(r"\b(muster_[a-z_]+?)(?:_bucket|_sum|_count)?\b", expr))
            assert used <= exported, f"{path.name}: {expr}: not exported: {used - exported}"
            for name, v in values.items():
                expr = expr.replace("$" + name, v)
            # Valid PromQL, evaluated by the server (an error is a 400).
            shown[(path.name, expr)] = query(base, expr)
    # A panel shows the cluster once scraped.
    gpus = shown[("muster-operator.json", "sum by (partition, state) (muster_gpus)")]
    assert {(m["partition"], m["state"]) for m, _ in gpus} >= {("train", "idle")}
    mine = shown[("muster-my-job.json", f'muster_gpu_utilization_ratio{{hpc_job="{job}"}}')]
    assert sorted(v for _, v in mine) == [0.5, 0.5]
    assert {m["node"] for m, _ in mine} == {"gpu02"}
    node = shown[("muster-node.json", 'muster_gpu_utilization_ratio{node="gpu02"}')]
    assert len(node) == 8 and sum(v for _, v in node) == 1.0
