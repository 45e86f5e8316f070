#!/usr/bin/python3
"""How closely `muster sim` foresees a live cluster: a slice of a workload
runs on a real Muster cluster (bench/trace_replay.py's way: time-compressed
sleep jobs, submitted at their scaled arrivals), then `muster sim` replays
the same jobs, with the same configuration, and each job's simulated start
is set beside its real one.

  bench/sim_fidelity.py [--jobs 150] [--scale 360] [--skip 0] [--out DIR]
  bench/sim_fidelity.py --report DIR     the comparison again, from a saved run

The replay's workload is what the live cluster recorded (sacct): each job's
submission time and its elapsed time (its sleep plus the launch), with the
request it was submitted with (CPUs, GPUs, nodes, memory, time limit). So
what differs is only the scheduling: the live passes against the simulated
ones, and the live system's latencies (sbatch, launch, the end's report).

It prints, per job and in total: the start difference (simulated - real),
the share of jobs within one scheduling interval (bf_interval) and within
1 and 5 seconds, the mean wait of each and their relative difference, and
the jobs that differ most. The goals (issue 36): 95% of the jobs within one
interval, mean wait within 5%.
"""

import argparse
import csv
import json
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import trace_replay as tr  # noqa: E402  (the live side, as trace_replay runs it)


def live_run(args, out_dir: Path):
    """Runs the slice on a private Muster cluster; saves its jobs and configuration."""
    plan = tr.plan_jobs(args)
    work = Path(tempfile.mkdtemp(prefix="sim-fidelity-"))
    system = tr.System("muster", work)
    submitted = {}
    done = False
    try:
        print(f"sim_fidelity: {len(plan)} jobs on a live cluster (scale {args.scale})", flush=True)
        res = tr.replay(system, plan, args.poll, lambda m: print(m, flush=True), submitted)
        res["jobs"] = tr.accounting(system, list(submitted)) if submitted else {}
        done = True
        # The configuration the cluster ran with, and the files beside it.
        conf = Path(system.conf)
        for name in ("muster.conf", "gres.conf", "topology.conf"):
            if (conf.parent / name).exists():
                shutil.copy(conf.parent / name, out_dir / name)
        shutil.copy(conf, out_dir / "muster.conf")
    finally:
        system.close([] if done else list(submitted))
        shutil.rmtree(work, ignore_errors=True)
    res["plan"] = plan
    tr.save(out_dir, "live", res)
    return tr.load(out_dir, "live")


def write_workload(live, path: Path):
    """The live jobs as muster sim's CSV: what sacct recorded of each."""
    plan = {p["swf_id"]: p for p in live["plan"]}
    rows = []
    for jid, acct in live["jobs"].items():
        if acct["start"] is None or acct["end"] is None:
            continue
        p = plan[live["submitted"][jid]["swf_id"]]
        rows.append((acct["submit"], jid, acct, p))
    rows.sort(key=lambda r: (r[0], r[1]))
    first = rows[0][0]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "submit", "run", "cpus", "gpus", "nodes", "mem_mb", "time_limit",
                    "partition"])
        for submit, jid, acct, p in rows:
            mem = tr.MEM_PER_GPU_MB * p["gpus"]
            w.writerow([jid, int(submit - first), int(acct["end"] - acct["start"]), p["cpus"],
                        p["gpus"], p["nodes"], mem, p["limit_min"] * 60, "train"])
    return first


def simulate(out_dir: Path, workload: Path):
    sim_dir = out_dir / "sim"
    r = subprocess.run([str(tr.BIN / "muster"), "sim", "--quiet", "--conf",
                        str(out_dir / "muster.conf"), "--trace", str(workload), "--format", "csv",
                        "--out", str(sim_dir)], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"sim_fidelity: muster sim failed:\n{r.stderr}")
    starts = {}
    with open(sim_dir / "out_jobs.csv") as f:
        for row in csv.DictReader(f):
            if row["starting_time"] not in ("", "-1"):
                starts[int(row["job_id"])] = float(row["starting_time"])
    return starts, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""


def bf_interval(conf: Path):
    for line in conf.read_text().splitlines():
        if line.strip().lower().startswith("schedulerparameters="):
            for item in line.split("=", 1)[1].split(","):
                if item.startswith("bf_interval="):
                    return int(item.split("=", 1)[1])
    return 30  # Slurm's and Muster's default


def compare(out_dir: Path):
    live = tr.load(out_dir, "live")
    workload = out_dir / "workload.csv"
    first = write_workload(live, workload)
    sim_starts, speed = simulate(out_dir, workload)
    interval = bf_interval(out_dir / "muster.conf")
    diffs, real_waits, sim_waits = [], [], []
    for jid, acct in live["jobs"].items():
        if acct["start"] is None or jid not in sim_starts:
            continue
        submit = acct["submit"] - first
        real = acct["start"] - first
        sim = sim_starts[jid]
        diffs.append((sim - real, jid))
        real_waits.append(real - submit)
        sim_waits.append(sim - submit)
    n = len(diffs)
    if n == 0:
        sys.exit("sim_fidelity: no job both ran and was replayed")

    def share(limit):
        return sum(1 for d, _ in diffs if abs(d) <= limit) / n

    real_mean = sum(real_waits) / n
    sim_mean = sum(sim_waits) / n
    rel = (sim_mean - real_mean) / real_mean if real_mean > 0 else 0.0
    absd = sorted(abs(d) for d, _ in diffs)
    print(f"sim_fidelity: {n} jobs, live run of {live['meta']['jobs']} from "
          f"{live['meta']['trace']} at scale {live['meta']['scale']:g}; bf_interval {interval} s")
    print(f"  start difference (simulated - real): within 1 s {share(1):.0%}, within 5 s "
          f"{share(5):.0%}, within one interval ({interval} s) {share(interval):.0%}")
    print(f"  |difference| p50 {absd[n // 2]:.0f} s, p90 {absd[min(n - 1, math.ceil(0.9 * n) - 1)]:.0f} s, "
          f"max {absd[-1]:.0f} s; mean signed {sum(d for d, _ in diffs) / n:+.1f} s")
    print(f"  mean wait: real {real_mean:.1f} s, simulated {sim_mean:.1f} s ({rel:+.1%})")
    print("  largest differences (job: simulated - real):",
          ", ".join(f"{jid}: {d:+.0f} s" for d, jid in sorted(diffs, key=lambda x: -abs(x[0]))[:8]))
    if speed:
        print(f"  {speed}")
    (out_dir / "fidelity.json").write_text(json.dumps({
        "jobs": n, "interval": interval, "within_1s": share(1), "within_5s": share(5),
        "within_interval": share(interval), "real_mean_wait": real_mean,
        "sim_mean_wait": sim_mean, "mean_wait_rel": rel,
        "per_job": {str(jid): d for d, jid in diffs}}, indent=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default=str(tr.DEFAULT_TRACE))
    ap.add_argument("--jobs", type=int, default=150)
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--scale", type=float, default=360)
    ap.add_argument("--overestimate", type=float, default=1.0)
    ap.add_argument("--limit-slack", type=float, default=5)
    ap.add_argument("--max-run", type=int, default=0)
    ap.add_argument("--tau", type=float, default=10)
    ap.add_argument("--poll", type=float, default=2.0)
    ap.add_argument("--out", help="folder for the results (default: a new one under /tmp)")
    ap.add_argument("--report", metavar="DIR", help="compare a saved live run again and stop")
    args = ap.parse_args()
    if args.report:
        compare(Path(args.report))
        return
    out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="sim-fidelity-out-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    live = live_run(args, out_dir)
    live["meta"] = {"trace": Path(args.trace).name, "jobs": len(live["plan"]), "scale": args.scale}
    tr.save(out_dir, "live", live)
    compare(out_dir)
    print(f"results: {out_dir} (bench/sim_fidelity.py --report {out_dir})")


if __name__ == "__main__":
    main()
