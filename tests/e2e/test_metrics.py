"""musterd's /metrics on its API socket: Prometheus' text exposition format,
with the scheduler's jobs, nodes, resources, passes, queue waits and RPCs."""

import re
import shutil
import subprocess

from conftest import BIN

SAMPLE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
                    r'(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*)\})? (\S+)')


def parse(text):
    """{family: {"type", "help", "samples": [(name, {labels}, value)]}}, checking
    the format as Prometheus reads it: HELP and TYPE before a family's
    samples, a family's samples together, every value a number."""
    families = {}
    current = None
    seen_done = set()
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, help_text = line[7:].split(" ", 1)
            assert name not in families, f"family {name} twice"
            if current:
                seen_done.add(current)
            current = name
            families[name] = {"help": help_text, "type": None, "samples": []}
            continue
        if line.startswith("# TYPE "):
            name, kind = line[7:].split(" ")
            assert name == current and kind in {"counter", "gauge", "histogram", "summary"}
            families[name]["type"] = kind
            continue
        m = SAMPLE.fullmatch(line)
        assert m, f"not a sample line: {line!r}"
        name, labels, value = m.group(1), m.group(3) or "", m.group(4)
        float(value)  # +Inf, NaN and numbers
        base = re.sub(r"_(bucket|sum|count)$", "", name) if name not in families else name
        assert base == current, f"{name} outside its family ({current})"
        pairs = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', labels))
        families[current]["samples"].append((name, pairs, float(value)))
    return families


def value(families, family, name=None, **labels):
    for n, l, v in families[family]["samples"]:
        if (name or family) == n and all(l.get(k) == w for k, w in labels.items()):
            return v
    raise AssertionError(f"no {name or family} {labels} in {families[family]['samples']}")


def metrics(c):
    status, text = c.api("GET", "/metrics")
    assert status == 200
    # Prometheus' own linter (scripts/build.sh installs it) finds nothing.
    promtool = shutil.which("promtool")
    assert promtool, "promtool missing: scripts/build.sh installs Debian's prometheus"
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    assert r.returncode == 0 and not r.stdout and not r.stderr, r.stdout + r.stderr
    return parse(text)


def test_metrics_follow_the_cluster(fresh_cluster):
    c = fresh_cluster
    m = metrics(c)
    # Three idle nodes: two GPU nodes of 8 GPUs in both partitions, cpu01 in short.
    assert value(m, "muster_nodes", state="idle", partition="short") == 3
    assert value(m, "muster_gpus", state="idle", partition="train") == 16
    assert value(m, "muster_largest_free_gpus_on_a_node", partition="train") == 8
    assert value(m, "muster_free_whole_nodes", partition="short") == 3
    assert m["muster_jobs_started_total"]["type"] == "counter"

    busy = c.sbatch("-p", "train", "-w", "gpu01", "--gres=gpu:6", "-c", "4", "-t", "5",
                    "--wrap", "sleep 60")
    c.wait_state(busy, {"RUNNING"})
    wide = c.sbatch("-p", "train", "-N", "2", "--exclusive", "-t", "5", "--wrap", "true")
    held = c.sbatch("-H", "-t", "1", "--wrap", "true")
    m = metrics(c)
    assert value(m, "muster_jobs", state="RUNNING", partition="train") == 1
    assert value(m, "muster_jobs", state="PENDING", partition="train") == 1
    assert value(m, "muster_jobs_pending", reason="Resources", partition="train") == 1
    assert value(m, "muster_jobs_pending", reason="JobHeldUser", partition="short") == 1
    assert value(m, "muster_gpus", state="allocated", partition="train") == 6
    assert value(m, "muster_gpus", state="idle", partition="train") == 10
    assert value(m, "muster_cpus", state="allocated", partition="train") == 4
    # The largest GPU job that could start: 8 on gpu02, and one whole node.
    assert value(m, "muster_largest_free_gpus_on_a_node", partition="train") == 8
    assert value(m, "muster_free_whole_nodes", partition="train") == 1
    assert value(m, "muster_nodes", state="mixed", partition="train") == 1
    assert value(m, "muster_jobs_submitted_total") == 3
    assert value(m, "muster_scheduler_cycles_total") >= 2
    assert value(m, "muster_backfill_cycles_total") >= 1
    # The started job's wait, in the histogram: cumulative buckets, +Inf the count.
    assert m["muster_job_queue_wait_seconds"]["type"] == "histogram"
    inf = value(m, "muster_job_queue_wait_seconds", "muster_job_queue_wait_seconds_bucket", le="+Inf")
    assert inf == value(m, "muster_job_queue_wait_seconds", "muster_job_queue_wait_seconds_count") == 1
    buckets = [v for n, l, v in m["muster_job_queue_wait_seconds"]["samples"]
               if n.endswith("_bucket")]
    assert buckets == sorted(buckets)
    # RPCs by sdiag's message types, with their times.
    assert value(m, "muster_rpc_duration_seconds", "muster_rpc_duration_seconds_count",
                 type="REQUEST_SUBMIT_BATCH_JOB") == 3
    assert value(m, "muster_rpc_duration_seconds", "muster_rpc_duration_seconds_sum",
                 type="REQUEST_SUBMIT_BATCH_JOB") > 0

    # Counters never go back: sdiag -r resets sdiag's figures only.
    c.run([str(BIN / "sdiag"), "-r"])
    c.cancel([busy, wide, held])
    m = metrics(c)
    assert value(m, "muster_jobs_submitted_total") == 3
    assert value(m, "muster_jobs_canceled_total") == 3
    assert value(m, "muster_gpus", state="allocated", partition="train") == 0
