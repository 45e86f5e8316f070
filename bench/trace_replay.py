#!/usr/bin/python3
"""Replay a slice of a real workload trace (SWF) on a Muster cluster and on
the Slurm oracle, and print scheduling-quality figures side by side.

  bench/trace_replay.py [--jobs 200] [--scale 360] [--system muster|slurm|both]
  bench/trace_replay.py --report DIR        the table again, from a run's saved results

Each trace job becomes `sbatch -p train ... --wrap "sleep R"`, submitted at
its scaled arrival time by a replayer thread; the same arguments go to both
systems. Submit, start and end times come from each system's own sacct
afterwards; pending reasons are sampled with squeue while the replay runs.

Mapping (see docs/trace-replay.md):
  arrival   (submit - first submit) / scale, in seconds (fractional)
  runtime   max(1, round(runtime / scale)) whole seconds, capped at --max-run if given
  --time    max(1, ceil((runtime * overestimate + slack) / 60)) minutes
  GPUs      K = ceil(procs * 32 / MaxNodes): K <= 8 on one node (4 CPUs and
            7000 MB per GPU); above 8, whole nodes: -N ceil(K/8), 8 GPUs,
            32 CPUs and 56000 MB on each

Muster runs from build/bin on a private cluster (`muster up` in a temporary
directory), its configuration given the oracle's scheduling keys. Slurm is
the oracle of ../shared/slurm-oracle, which must be up (`oracle.sh up`);
its commands run from /usr/bin. Run the systems one after the other (as
`--system both` does) so that they do not compete for the CPUs.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(os.environ.get("MUSTER_BIN", ROOT / "build" / "bin"))
DEFAULT_TRACE = ROOT.parent / "shared" / "traces" / "lublin-256-synthetic" / "lublin_256.swf"

# The partition the trace runs in: gpu[01-04], as in both configurations.
PART_NODES, NODE_GPUS, NODE_CPUS, NODE_MEM_MB = 4, 8, 32, 64000
TOTAL_GPUS, TOTAL_CPUS = PART_NODES * NODE_GPUS, PART_NODES * NODE_CPUS
CPUS_PER_GPU, MEM_PER_GPU_MB = 4, 7000

# The oracle's scheduling keys (start.sh, default flavour), given to Muster
# too. `muster up` already writes DefMemPerCPU=1000. Neither sets
# SchedulerParameters, so both run with their backfill defaults
# (bf_interval=30, bf_resolution=60, bf_window=1 day).
MIRRORED_KEYS = """\
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
PriorityType=priority/multifactor
PriorityDecayHalfLife=7-0
PriorityMaxAge=7-0
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=1000
PriorityWeightPartition=1000
PriorityWeightQOS=2000
AccountingStorageEnforce=associations,limits,qos
"""


# ---------------------------------------------------------------- the trace

def read_swf(path: Path, skip: int, count: int):
    """The first `count` usable jobs after `skip`: (id, submit, runtime, procs)."""
    jobs, max_nodes = [], 256
    with open(path) as f:
        for line in f:
            if line.startswith(";"):
                if "MaxNodes:" in line:
                    max_nodes = int(line.split(":", 1)[1])
                continue
            fields = line.split()
            if len(fields) < 5:
                continue
            jid, submit, run, procs = int(fields[0]), int(fields[1]), int(fields[3]), int(fields[4])
            if run < 0 or procs <= 0:  # cancelled before it ran, or no size: nothing to replay
                continue
            if skip > 0:
                skip -= 1
                continue
            jobs.append((jid, submit, run, procs))
            if len(jobs) == count:
                break
    return jobs, max_nodes


def plan_jobs(args):
    """The replay: one dict per job with its arrival, sleep, limit and sbatch arguments."""
    trace, max_nodes = read_swf(Path(args.trace), args.skip, args.jobs)
    if not trace:
        sys.exit("trace_replay: no jobs in the slice")
    t0 = trace[0][1]
    plan = []
    for jid, submit, run, procs in trace:
        sleep_s = max(1, round(run / args.scale))
        if args.max_run:
            sleep_s = min(sleep_s, args.max_run)
        limit_min = max(1, math.ceil((sleep_s * args.overestimate + args.limit_slack) / 60))
        k = max(1, math.ceil(procs * TOTAL_GPUS / max_nodes))
        if k <= NODE_GPUS:
            nodes, gpus_per_node = 1, k
            shape = ["-N", "1", "-n", "1", "-c", str(CPUS_PER_GPU * k), f"--gres=gpu:{k}",
                     f"--mem={MEM_PER_GPU_MB * k}M"]
        else:
            nodes, gpus_per_node = math.ceil(k / NODE_GPUS), NODE_GPUS
            shape = ["-N", str(nodes), "--ntasks-per-node=1", "-c", str(NODE_CPUS),
                     f"--gres=gpu:{NODE_GPUS}", f"--mem={MEM_PER_GPU_MB * NODE_GPUS}M"]
        plan.append({
            "swf_id": jid, "procs": procs, "trace_run": run,
            "arrival": (submit - t0) / args.scale, "sleep": sleep_s, "limit_min": limit_min,
            "gpus": nodes * gpus_per_node, "cpus": nodes * gpus_per_node * CPUS_PER_GPU,
            "nodes": nodes,
            "sbatch": ["--parsable", "-o", "/dev/null", "-p", "train", "-J", f"swf{jid}",
                       "-t", str(limit_min), *shape, "--wrap", f"sleep {sleep_s}"],
        })
    return plan


# ---------------------------------------------------------------- the systems

class System:
    """One of the two systems: its commands, environment and lifetime."""

    def __init__(self, name: str, work: Path):
        self.name = name
        self.work = work
        self.env = dict(os.environ)
        self.conf = None
        self.env.pop("SLURM_CONF", None)
        if name == "slurm":
            self.env["PATH"] = "/usr/bin:/bin"
            self.env.pop("MUSTER_CONF", None)
            r = self.run("sinfo", "-h", "-p", "train", "-o", "%D %t", check=False)
            if r.returncode != 0:
                sys.exit("trace_replay: the Slurm oracle does not answer; start it with "
                         "../shared/slurm-oracle/oracle.sh up\n" + r.stderr)
            if self.run("squeue", "-h", "-o", "%i").stdout.split():
                sys.exit("trace_replay: the oracle has jobs queued or running; it must be idle")
            return
        self.env["PATH"] = f"{BIN}:/usr/bin:/bin"
        state = work / "muster-state"
        # `muster up` writes its emulated configuration and leaves an existing
        # one alone: write it, stop, add the oracle's keys, start again.
        self.conf = self._up(["--state-dir", str(state)])
        self._down()
        with open(self.conf, "a") as f:
            f.write("# Added by bench/trace_replay.py: the Slurm oracle's scheduling keys.\n")
            f.write(MIRRORED_KEYS)
        self._up(["--conf", self.conf])
        self.env["MUSTER_CONF"] = self.conf

    def _up(self, opts):
        r = subprocess.run([str(BIN / "muster"), "up", *opts], env=self.env, capture_output=True,
                           text=True)
        if r.returncode != 0:
            sys.exit(f"trace_replay: muster up failed:\n{r.stderr}")
        return r.stdout.strip().split("=", 1)[1]

    def _down(self):
        subprocess.run([str(BIN / "muster"), "down", "--conf", self.conf], env=self.env,
                       capture_output=True)

    def run(self, *argv, check=True):
        return subprocess.run(list(argv), env=self.env, cwd=self.work, capture_output=True,
                              text=True, check=check)

    def config_lines(self):
        keys = ("SchedulerType", "SchedulerParameters", "PriorityType", "PriorityWeight",
                "PriorityDecayHalfLife", "PriorityMaxAge", "DefMemPerCPU", "SelectType")
        out = self.run("scontrol", "show", "config", check=False).stdout.splitlines()
        return [" ".join(l.split()) for l in out if l.strip().startswith(keys)]

    def close(self, ids):
        pending = [str(i) for i in ids]
        if pending:
            self.run("scancel", *pending, check=False)
        if self.name == "muster":
            self._down()


# ---------------------------------------------------------------- the replay

def submitter(sys_: System, plan, t0, out, errors):
    """Submits each job at its arrival time (late ones at once, in order)."""
    for job in plan:
        delay = t0 + job["arrival"] - time.time()
        if delay > 0:
            time.sleep(delay)
        sent = time.time()
        r = sys_.run("sbatch", *job["sbatch"], check=False)
        if r.returncode != 0:
            errors.append(f"swf{job['swf_id']}: {r.stderr.strip()}")
            continue
        out[int(r.stdout.strip().split(";")[0])] = {"swf_id": job["swf_id"],
                                                    "lag": sent - t0 - job["arrival"]}


def replay(sys_: System, plan, poll_s: float, log, submitted):
    errors = []
    t0 = time.time() + 1
    load0 = os.getloadavg()
    thread = threading.Thread(target=submitter, args=(sys_, plan, t0, submitted, errors))
    thread.start()
    reasons = {}  # job id -> {reason: samples}
    samples = []  # (t, pending, running) of our jobs
    last_note = 0.0
    loads = []
    while True:
        time.sleep(poll_s)
        r = sys_.run("squeue", "-h", "-o", "%i|%T|%r", check=False)
        pend = run_ = 0
        live = set()
        for line in r.stdout.splitlines():
            parts = line.split("|")
            if len(parts) != 3 or not parts[0].isdigit():
                continue
            jid = int(parts[0])
            if jid not in submitted:
                continue
            live.add(jid)
            if parts[1] == "PENDING":
                pend += 1
                reasons.setdefault(jid, {}).setdefault(parts[2], 0)
                reasons[jid][parts[2]] += 1
            elif parts[1] == "RUNNING":
                run_ += 1
        now = time.time() - t0
        samples.append((round(now, 1), pend, run_))
        loads.append(os.getloadavg()[0])
        if now - last_note >= 30:
            last_note = now
            log(f"[{sys_.name}] t={now:5.0f} s  submitted {len(submitted)}/{len(plan)}  "
                f"pending {pend}  running {run_}  load {os.getloadavg()[0]:.2f}")
        if not thread.is_alive() and r.returncode == 0 and not live:
            break
    wall = time.time() - t0
    return {"submitted": submitted, "errors": errors, "reasons": reasons, "samples": samples,
            "wall": wall, "load_start": load0, "load_end": os.getloadavg(),
            "load_mean": sum(loads) / max(1, len(loads)), "load_max": max(loads, default=0)}


def parse_time(s: str):
    if s in ("", "Unknown", "None", "N/A"):
        return None
    return time.mktime(datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").timetuple())


def parse_tres(s: str):
    out = {}
    for item in s.split(","):
        if "=" in item:
            k, v = item.split("=", 1)
            out[k] = v
    return out


def accounting(sys_: System, ids, timeout=90):
    """Submit, start, end, state and allocation of each job from sacct;
    retried until every job has its end (slurmdbd may lag a little)."""
    deadline = time.time() + timeout
    while True:
        r = sys_.run("sacct", "-P", "-n", "-X", "-j", ",".join(str(i) for i in ids),
                     "-o", "JobID,Submit,Start,End,State,AllocTRES", check=False)
        rows = {}
        for line in r.stdout.splitlines():
            f = line.split("|")
            if len(f) < 6 or not f[0].isdigit():
                continue
            tres = parse_tres(f[5])
            rows[int(f[0])] = {"submit": parse_time(f[1]), "start": parse_time(f[2]),
                               "end": parse_time(f[3]), "state": f[4].split()[0],
                               "gpus": int(tres.get("gres/gpu", 0)), "cpus": int(tres.get("cpu", 0))}
        complete = len(rows) == len(ids) and all(x["end"] and x["start"] for x in rows.values())
        if complete or time.time() > deadline:
            return rows
        time.sleep(2)


# ---------------------------------------------------------------- the figures

def figures(result, tau):
    rows = [dict(r, job_id=jid) for jid, r in result["jobs"].items()
            if r["start"] is not None and r["end"] is not None]
    if not rows:
        return {}
    first = min(r["submit"] for r in rows)
    last = max(r["end"] for r in rows)
    makespan = max(1.0, last - first)
    waits = sorted(r["start"] - r["submit"] for r in rows)
    p90 = waits[max(0, math.ceil(0.9 * len(waits)) - 1)]
    bsld = [max(1.0, (r["start"] - r["submit"] + (r["end"] - r["start"])) /
                max(r["end"] - r["start"], tau)) for r in rows]
    gpu_s = sum(r["gpus"] * (r["end"] - r["start"]) for r in rows)
    cpu_s = sum(r["cpus"] * (r["end"] - r["start"]) for r in rows)
    # A job that starts while one submitted before it still waits: backfill
    # (or the job-size priority factor) at work.
    by_submit = sorted(rows, key=lambda r: (r["submit"], r["job_id"]))
    overtakes = 0
    for i, r in enumerate(by_submit):
        if any(o["start"] > r["start"] for o in by_submit[:i] if o["submit"] < r["submit"]):
            overtakes += 1
    lags = [s["lag"] for s in result["submitted"].values()]
    states = {}
    for r in result["jobs"].values():
        states[r["state"]] = states.get(r["state"], 0) + 1
    return {
        "jobs": len(rows), "makespan": makespan, "mean_wait": sum(waits) / len(waits),
        "p90_wait": p90, "max_wait": waits[-1], "mean_bsld": sum(bsld) / len(bsld),
        "gpu_util": gpu_s / (TOTAL_GPUS * makespan), "cpu_util": cpu_s / (TOTAL_CPUS * makespan),
        "overtakes": overtakes, "max_lag": max(lags, default=0.0),
        "states": " ".join(f"{k}={v}" for k, v in sorted(states.items())),
        "load": f"{result['load_mean']:.2f} / {result['load_max']:.2f}",
    }


ROWS = [
    ("jobs", "jobs replayed", "{:.0f}"),
    ("makespan", "makespan (s)", "{:.0f}"),
    ("mean_wait", "mean wait (s)", "{:.1f}"),
    ("p90_wait", "p90 wait (s)", "{:.0f}"),
    ("max_wait", "max wait (s)", "{:.0f}"),
    ("mean_bsld", "mean bounded slowdown (tau={tau:g} s)", "{:.2f}"),
    ("gpu_util", "GPU utilisation", "{:.1%}"),
    ("cpu_util", "CPU utilisation", "{:.1%}"),
    ("overtakes", "jobs started before an earlier one", "{:.0f}"),
    ("max_lag", "worst submission lag (s)", "{:.1f}"),
    ("states", "final states", "{}"),
    ("load", "load average, mean / max", "{}"),
]


def print_table(results, tau, meta):
    names = [n for n in ("muster", "slurm") if n in results]
    figs = {n: figures(results[n], tau) for n in names}
    print(f"\nTrace {meta['trace']}: {meta['jobs']} jobs from #{meta['first_swf']}, scale 1/{meta['scale']:g}, "
          f"time limit = ceil((run x {meta['overestimate']:g} + {meta['limit_slack']:g} s) / 60) min, "
          f"partition train ({TOTAL_GPUS} GPUs, {TOTAL_CPUS} CPUs)")
    width = max(len(label.format(tau=tau)) for _, label, _ in ROWS) + 2
    print(f"{'':{width}}" + "".join(f"{n:>22}" for n in names))
    for key, label, fmt in ROWS:
        cells = []
        for n in names:
            v = figs[n].get(key)
            cells.append("-" if v is None else fmt.format(v))
        print(f"{label.format(tau=tau):{width}}" + "".join(f"{c:>22}" for c in cells))
    for n in names:
        r = results[n]
        print(f"\n[{n}] run at {r['date']} on {r['host']}; replay wall time {r['wall']:.0f} s")
        conf = [l.replace(" = ", "=") for l in r.get("config", [])]
        for i in range(0, len(conf), 4):
            print(f"[{n}]   " + "  ".join(conf[i:i + 4]))
        if r["errors"]:
            print(f"[{n}] {len(r['errors'])} submissions refused, e.g. {r['errors'][0]}")
    if len(names) == 2:
        compare(results, tau)


def compare(results, tau):
    """The jobs whose wait differs most between the systems, with the
    pending reasons squeue gave for them."""
    def by_swf(res):
        out = {}
        for jid, r in res["jobs"].items():
            swf = res["submitted"][jid]["swf_id"]
            reasons = res["reasons"].get(jid, {})
            out[swf] = dict(r, job_id=jid, reasons=reasons)
        return out
    m, s = by_swf(results["muster"]), by_swf(results["slurm"])
    plan = {p["swf_id"]: p for p in results["muster"]["plan"]}
    diffs = []
    for swf in m.keys() & s.keys():
        if None in (m[swf]["start"], s[swf]["start"]):
            continue
        dm, ds = m[swf]["start"] - m[swf]["submit"], s[swf]["start"] - s[swf]["submit"]
        diffs.append((dm - ds, swf, dm, ds))
    diffs.sort(reverse=True)
    def fmt_reasons(d):
        return ",".join(f"{k}x{v}" for k, v in sorted(d.items(), key=lambda kv: -kv[1])) or "-"
    print("\nLargest waits longer on Muster than on Slurm (wait in s; squeue reasons x samples):")
    print(f"{'swf':>6} {'gpus':>4} {'run':>4} {'lim':>3} {'muster':>7} {'slurm':>6}  muster job / reasons   |   slurm job / reasons")
    for d, swf, dm, ds in diffs[:12]:
        if d <= 0:
            break
        p = plan[swf]
        print(f"{swf:>6} {p['gpus']:>4} {p['sleep']:>4} {p['limit_min']:>3} {dm:>7.0f} {ds:>6.0f}  "
              f"{m[swf]['job_id']} {fmt_reasons(m[swf]['reasons'])}   |   "
              f"{s[swf]['job_id']} {fmt_reasons(s[swf]['reasons'])}")


def save(out_dir: Path, name: str, res):
    data = dict(res)
    data["jobs"] = {str(k): v for k, v in res["jobs"].items()}
    data["submitted"] = {str(k): v for k, v in res["submitted"].items()}
    data["reasons"] = {str(k): v for k, v in res["reasons"].items()}
    (out_dir / f"{name}.json").write_text(json.dumps(data, indent=1))


def load(out_dir: Path, name: str):
    path = out_dir / f"{name}.json"
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    for key in ("jobs", "submitted", "reasons"):
        data[key] = {int(k): v for k, v in data[key].items()}
    return data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default=str(DEFAULT_TRACE))
    ap.add_argument("--jobs", type=int, default=200, help="jobs in the slice (default 200)")
    ap.add_argument("--skip", type=int, default=0, help="trace jobs to skip first (default 0)")
    ap.add_argument("--scale", type=float, default=360,
                    help="divide arrival and run times by this (default 360)")
    ap.add_argument("--overestimate", type=float, default=1.0,
                    help="time limit = scaled runtime x this, before rounding up (default 1.0)")
    ap.add_argument("--limit-slack", type=float, default=5,
                    help="seconds added before rounding the limit up to minutes (default 5), "
                         "for the launch, so no job reaches its limit")
    ap.add_argument("--max-run", type=int, default=0,
                    help="cap on a scaled runtime in seconds (default: none)")
    ap.add_argument("--tau", type=float, default=10, help="bounded-slowdown threshold, scaled seconds")
    ap.add_argument("--system", choices=["muster", "slurm", "both"], default="both")
    ap.add_argument("--poll", type=float, default=2.0, help="squeue sampling interval (s)")
    ap.add_argument("--out", help="folder for the results (default: a new one under /tmp)")
    ap.add_argument("--report", metavar="DIR", help="print the table of a saved run and stop")
    ap.add_argument("--keep", action="store_true", help="keep Muster's state folder (logs)")
    args = ap.parse_args()

    if args.report:
        out_dir = Path(args.report)
        results = {n: r for n in ("muster", "slurm") if (r := load(out_dir, n))}
        if not results:
            sys.exit(f"trace_replay: no results in {out_dir}")
        meta = next(iter(results.values()))["meta"]
        print_table(results, meta["tau"], meta)
        return

    plan = plan_jobs(args)
    out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="trace-replay-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = {"trace": Path(args.trace).name, "jobs": len(plan), "first_swf": plan[0]["swf_id"],
            "scale": args.scale, "overestimate": args.overestimate,
            "limit_slack": args.limit_slack, "tau": args.tau, "max_run": args.max_run}
    span = plan[-1]["arrival"]
    limits = {}
    for p in plan:
        limits[p["limit_min"]] = limits.get(p["limit_min"], 0) + 1
    print(f"trace_replay: {len(plan)} jobs, arrivals over {span:.0f} s, runtimes "
          f"{min(p['sleep'] for p in plan)}-{max(p['sleep'] for p in plan)} s, "
          f"time limits (min: jobs) {dict(sorted(limits.items()))}, "
          f"GPU-seconds offered {sum(p['gpus'] * p['sleep'] for p in plan)} "
          f"(= {sum(p['gpus'] * p['sleep'] for p in plan) / (TOTAL_GPUS * span):.0%} of the partition "
          f"over the arrival span); results in {out_dir}", flush=True)

    def log(msg):
        print(msg, flush=True)

    names = ["muster", "slurm"] if args.system == "both" else [args.system]
    results = {}
    for name in names:
        work = Path(tempfile.mkdtemp(prefix=f"trace-replay-{name}-"))
        sys_ = System(name, work)
        submitted = {}
        done = False
        try:
            config = sys_.config_lines()
            log(f"[{name}] replaying {len(plan)} jobs")
            res = replay(sys_, plan, args.poll, log, submitted)
            res["jobs"] = accounting(sys_, list(submitted)) if submitted else {}
            done = True
        finally:
            # Interrupted: cancel what was submitted (only this replay's jobs).
            sys_.close([] if done else list(submitted))
            if args.keep and name == "muster":
                log(f"[muster] state kept in {work}")
            else:
                shutil.rmtree(work, ignore_errors=True)
        res.update({"config": config, "plan": plan, "meta": meta,
                    "date": datetime.now().strftime("%Y-%m-%d %H:%M"),
                    "host": f"{os.uname().nodename}, {os.cpu_count()} CPUs"})
        save(out_dir, name, res)
        results[name] = res
    # Earlier results of the other system in the same folder make the table whole.
    for name in ("muster", "slurm"):
        if name not in results and (r := load(out_dir, name)):
            results[name] = r
    print_table(results, args.tau, meta)
    print(f"\nresults: {out_dir} (bench/trace_replay.py --report {out_dir})")


if __name__ == "__main__":
    main()
