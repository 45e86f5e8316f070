#!/usr/bin/python3
"""Muster's benchmarks, printed as figures; the same workloads can run on the
real Slurm of ../shared/slurm-oracle (--slurm) for a side-by-side.

  bench/muster_bench.py sbatch   [--jobs 1000]          serial sbatch submissions per second
  bench/muster_bench.py throughput [--jobs 2000]        trivial jobs completed per second
  bench/muster_bench.py latency  [--jobs 200]           submit-to-start on an idle cluster
  bench/muster_bench.py squeue   [--queued 10000,100000] squeue time with N queued jobs
  bench/muster_bench.py api      [--jobs 8000]          durable API submissions (bench/api_bench.cc),
                                                         serially and 8 concurrent clients, and
                                                         trivial jobs submitted through the API
  bench/muster_bench.py restart  [--jobs 100000]        musterd restart with N jobs in the journal
  bench/muster_bench.py sacct    [--jobs 1000000]       sacct over N recorded jobs
  bench/muster_bench.py array    [--jobs 10000]         an N-task array with %50: submit time,
                                                         run time, most tasks seen running at once
  bench/muster_bench.py all

Muster runs on a private cluster in a temporary directory (build/bin is
used); with --slurm the commands in /usr/bin talk to the running oracle.
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(os.environ.get("MUSTER_BIN", ROOT / "build" / "bin"))


class Target:
    def __init__(self, slurm: bool):
        self.slurm = slurm
        self.env = dict(os.environ)
        self.work = Path(tempfile.mkdtemp(prefix="muster-bench-"))
        if slurm:
            self.env["PATH"] = "/usr/bin:/bin"
            self.env.pop("MUSTER_CONF", None)
            self.env.pop("SLURM_CONF", None)
        else:
            self.env["PATH"] = f"{BIN}:{self.env['PATH']}"
            r = subprocess.run([str(BIN / "muster"), "up", "--state-dir", str(self.work / "state")],
                               env=self.env, capture_output=True, text=True, check=True)
            self.env["MUSTER_CONF"] = r.stdout.strip().split("=", 1)[1]
        self.name = "slurm" if slurm else "muster"

    def run(self, *argv, check=True):
        return subprocess.run(list(argv), env=self.env, cwd=self.work, capture_output=True,
                              text=True, check=check)

    def close(self):
        if not self.slurm:
            subprocess.run([str(BIN / "muster"), "down", "--conf", self.env["MUSTER_CONF"]],
                           env=self.env, capture_output=True)
        else:
            self.run("scancel", "-u", os.environ.get("USER", "root"), check=False)
        shutil.rmtree(self.work, ignore_errors=True)

    def submit(self, *args):
        r = self.run("sbatch", "--parsable", "-o", "/dev/null", *args)
        return int(r.stdout.strip().split(";")[0])

    def active(self):
        r = self.run("squeue", "-h", "-o", "%i", check=False)
        return len(r.stdout.split())

    def wait_empty(self, timeout=3600):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.active() == 0:
                return
            time.sleep(0.05)
        raise RuntimeError("queue did not drain")


def sbatch_loop(t: Target, jobs: int, extra=""):
    """A shell loop of sbatch calls, so the harness adds no interpreter cost."""
    return subprocess.Popen(["bash", "-c", f"for i in $(seq {jobs}); do sbatch -o /dev/null {extra} "
                             f"--wrap true >/dev/null || exit 1; done"], env=t.env, cwd=t.work)


def bench_sbatch(t: Target, jobs: int):
    # Held jobs first: the submission path alone (durable, acknowledged
    # after fdatasync), without the same two cores also running each job.
    t0 = time.perf_counter()
    assert sbatch_loop(t, jobs, "-H").wait() == 0
    dt = time.perf_counter() - t0
    print(f"[{t.name}] sbatch serial, held jobs: {jobs} submissions in {dt:.2f} s = {jobs / dt:.0f} sbatch/s")
    t.run("scancel", "-u", os.environ.get("USER", "root"), check=False)
    t.wait_empty()
    t0 = time.perf_counter()
    assert sbatch_loop(t, jobs).wait() == 0
    dt = time.perf_counter() - t0
    t.wait_empty()
    print(f"[{t.name}] sbatch serial, jobs running meanwhile: {jobs} submissions in {dt:.2f} s = {jobs / dt:.0f} sbatch/s")


def bench_throughput(t: Target, jobs: int):
    # Submitted by 4 concurrent sbatch loops, so submission is not the bottleneck.
    t0 = time.perf_counter()
    loops = [sbatch_loop(t, jobs // 4) for _ in range(4)]
    assert all(p.wait() == 0 for p in loops)
    t_sub = time.perf_counter() - t0
    t.wait_empty()
    dt = time.perf_counter() - t0
    print(f"[{t.name}] throughput: {jobs} trivial jobs completed in {dt:.2f} s = {jobs / dt:.0f} jobs/s "
          f"(submission took {t_sub:.2f} s)")


def bench_latency(t: Target, jobs: int):
    """Submit-to-start: the job writes its start time; compare with the
    moment sbatch returned."""
    lat = []
    for i in range(jobs):
        out = t.work / f"lat{i}"
        t0 = time.time()
        t.run("sbatch", "-o", "/dev/null", "--wrap", f"date +%s.%N > {out}")
        sub_done = time.time()
        deadline = time.time() + 30
        while not out.exists() or not out.read_text().strip():
            if time.time() > deadline:
                raise RuntimeError("job did not start")
            time.sleep(0.001)
        started = float(out.read_text())
        lat.append((started - sub_done) * 1000)
    lat.sort()
    print(f"[{t.name}] submit-to-start over {jobs} jobs: median {statistics.median(lat):.1f} ms, "
          f"p90 {lat[int(len(lat) * 0.9)]:.1f} ms (from sbatch returning to the script's first line)")


def api_submit_held(t: Target, count: int):
    """Muster only: held submissions straight to the API over one kept-alive
    connection, to fill a queue quickly (the figure measured is squeue's)."""
    state = Path(t.env["MUSTER_CONF"]).parent
    _api_client((str(state / "ctld" / "musterd.sock"), str(t.work), count))


def fill_held(t: Target, n: int, via_api: bool):
    have = t.active()
    need = n - have
    if need <= 0:
        return
    t0 = time.perf_counter()
    if via_api and not t.slurm:
        api_submit_held(t, need)
        print(f"[{t.name}]   queued {need} held jobs through the API in {time.perf_counter() - t0:.1f} s")
        return
    loops = [sbatch_loop(t, need // 4 + (1 if i < need % 4 else 0), "-H") for i in range(4)]
    assert all(p.wait() == 0 for p in loops)
    print(f"[{t.name}]   queued {need} held jobs in {time.perf_counter() - t0:.1f} s")


def time_cmd(t: Target, argv, reps=7):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = t.run(*argv)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, len(r.stdout.splitlines())


def time_cmd_devnull(t: Target, argv, reps=7):
    """The command's own time, its output to /dev/null (as hyperfine times
    commands): what Python's capture of megabytes adds is left out."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(list(argv), env=t.env, cwd=t.work, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def capture_cost(nbytes: int, reps=7):
    """What capturing nbytes of text from a child costs Python itself: the
    same capture of `cat` of a file that size (its floor for any command)."""
    with tempfile.NamedTemporaryFile("w") as f:
        f.write(("x" * 79 + "\n") * (nbytes // 80))
        f.flush()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            subprocess.run(["cat", f.name], capture_output=True, text=True, check=True)
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def bench_squeue(t: Target, sizes, via_api):
    for n in sizes:
        fill_held(t, n, via_api)
        full, lines = time_cmd(t, ["squeue"])
        nbytes = len(t.run("squeue").stdout)
        own = time_cmd_devnull(t, ["squeue"])
        mine, _ = time_cmd(t, ["squeue", "-u", "nobody"])
        fmt, _ = time_cmd(t, ["squeue", "-h", "-o", "%i %t"])
        print(f"[{t.name}] squeue with {n} queued jobs: full {full:.0f} ms captured by Python "
              f"({lines} lines, {nbytes / 1e6:.1f} MB; Python's capture of `cat` of as many bytes: "
              f"{capture_cost(nbytes):.0f} ms), full to /dev/null {own:.0f} ms, "
              f"'-h -o \"%i %t\"' {fmt:.0f} ms, filtered by user {mine:.1f} ms")
    # One held array of 100,000 tasks (both clusters allow MaxArraySize=100001),
    # listed one line per task; it comes after the RSS figure's queue.
    rss = controller_rss(t)
    tasks = 100000
    t.run("scancel", "-u", os.environ.get("USER", "root"), check=False)
    t.wait_empty()
    t.submit("-H", f"--array=0-{tasks - 1}", "--wrap", "true")
    unfold, lines = time_cmd(t, ["squeue", "-r"])
    unfold_own = time_cmd_devnull(t, ["squeue", "-r"])
    print(f"[{t.name}] squeue -r over a held {tasks}-task array: {unfold:.0f} ms captured by Python "
          f"({lines} lines), to /dev/null {unfold_own:.0f} ms")
    if rss:
        print(f"[{t.name}] controller RSS with {sizes[-1]} pending jobs: {rss / 1024:.0f} MiB "
              f"= {rss * 1024 / sizes[-1]:.0f} bytes per job (including the empty daemon)")


def controller_rss(t: Target):
    if t.slurm:
        name = "slurmctld"
    else:
        name = "musterd"
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            if (p / "comm").read_text().strip() != name:
                continue
            if not t.slurm and str(t.work).encode() not in (p / "cmdline").read_bytes():
                continue
            for line in (p / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            continue
    return None


def _api_client(args):
    sock_path, work, count = args
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(sock_path)
    body = json.dumps({"script": "#!/bin/sh\ntrue\n", "work_dir": work, "hold": True,
                       "name": "api", "std_out": "/dev/null"}).encode()
    req = (b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: " + str(len(body)).encode() +
           b"\r\n\r\n" + body)
    buf = b""
    for _ in range(count):
        sock.sendall(req)
        while True:
            head, sep, rest = buf.partition(b"\r\n\r\n")
            if sep:
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                if len(rest) >= length:
                    buf = rest[length:]
                    break
            buf += sock.recv(65536)
    sock.close()


def bench_api(t: Target, jobs: int):
    """Submissions straight through the API (bench/api_bench.cc: C++ clients
    on kept-alive connections, no CLI process per job), so the controller's
    own ceiling shows: serially and from 8 concurrent clients, each reply
    waiting for the journal's fdatasync; then trivial jobs run to their end
    from 4 clients."""
    state = Path(t.env["MUSTER_CONF"]).parent
    sock = str(state / "ctld" / "musterd.sock")
    runs = [(["--clients", "1", "--jobs", str(max(1, jobs // 4))], "serial"),
            (["--clients", "8", "--jobs", str(jobs)], "8 clients"),
            (["--clients", "4", "--jobs", str(max(4, jobs // 4)), "--run"], "jobs run")]
    for args, _ in runs:
        r = subprocess.run([str(BIN / "api_bench"), sock, str(t.work)] + args, env=t.env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"api_bench failed: {r.stderr.strip()}")
        print(f"[{t.name}] API: {r.stdout.strip()}")
        if "--run" not in args:
            t.run("scancel", "-u", os.environ.get("USER", "root"), check=False)
            t.wait_empty()


def wait_ready(sock_path, timeout=600):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sock_path)
            s.sendall(b"GET /v1/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            if b"200" in s.recv(100):
                return time.perf_counter() - t0
        except OSError:
            pass
        time.sleep(0.01)
    raise RuntimeError("musterd did not come back")


def bench_restart(t: Target, jobs: int):
    state = Path(t.env["MUSTER_CONF"]).parent
    ctld = state / "ctld"
    api_submit_held(t, jobs)
    conf = t.env["MUSTER_CONF"]
    for how in ("kill -9 (journal replay)", "clean stop (snapshot)"):
        pid = int((ctld / "musterd.pid").read_text())
        os.kill(pid, 9 if how.startswith("kill") else 15)
        while Path(f"/proc/{pid}").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z":
            time.sleep(0.01)
        size = sum(f.stat().st_size for f in ctld.glob("journal.log")) / 1e6
        snap = (ctld / "snapshot.json").stat().st_size / 1e6 if (ctld / "snapshot.json").exists() else 0
        t0 = time.perf_counter()
        subprocess.Popen([str(BIN / "musterd"), "--conf", conf], stdout=subprocess.DEVNULL,
                         stderr=open(ctld / "log" / "bench-restart.log", "a"), start_new_session=True)
        dt = wait_ready(str(ctld / "musterd.sock"))
        print(f"[{t.name}] musterd restart with {jobs} jobs after {how}: {dt:.2f} s "
              f"(journal {size:.0f} MB, snapshot {snap:.0f} MB)")


def bench_sacct(t: Target, jobs: int):
    state = Path(t.env["MUSTER_CONF"]).parent / "ctld"
    subprocess.run([str(BIN / "muster"), "down", "--conf", t.env["MUSTER_CONF"]], env=t.env,
                   capture_output=True)
    r = subprocess.run([str(BIN / "acct_fill"), str(state / "accounting.db"), str(jobs), "100", "30"],
                       capture_output=True, text=True, check=True)
    print(f"[{t.name}] {r.stdout.strip()}")
    subprocess.run([str(BIN / "muster"), "up", "--conf", t.env["MUSTER_CONF"]], env=t.env,
                   capture_output=True, check=True)
    one_user, lines = time_cmd(t, ["sacct", "-X", "-n", "-P", "-u", "20007", "-S", "now-30days",
                                   "-o", "JobID,State,Elapsed"], reps=5)
    print(f"[{t.name}] sacct over {jobs} jobs, one user, 30 days: {one_user:.0f} ms ({lines} rows)")
    day, lines = time_cmd(t, ["sacct", "-a", "-X", "-n", "-P", "-S", "now-3days", "-E", "now-2days",
                              "-o", "JobID,User,State"], reps=5)
    print(f"[{t.name}] sacct over {jobs} jobs, all users, one day: {day:.0f} ms ({lines} rows)")


def bench_array(t: Target, tasks: int, throttle: int = 50):
    """One sbatch --array=0-(N-1)%50 of 0.2 s tasks, each logging its start
    and end; the log says how many ran at once (never more than 50)."""
    log = t.work / "array.log"
    script = f"bash -c 's=$EPOCHREALTIME; sleep 0.2; echo \"$s $EPOCHREALTIME\" >> {log}'"
    t0 = time.perf_counter()
    job = t.submit(f"--array=0-{tasks - 1}%{throttle}", "--mem=100M", "-c", "1", "--wrap", script)
    t_sub = time.perf_counter() - t0
    t.wait_empty()
    dt = time.perf_counter() - t0
    spans = []
    for line in log.read_text().splitlines():
        parts = line.replace(",", ".").split()
        if len(parts) == 2:
            spans.append((float(parts[0]), float(parts[1])))
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    most = running = 0
    for _, d in events:
        running += d
        most = max(most, running)
    print(f"[{t.name}] array of {tasks} tasks %{throttle} (job {job}): submitted in {t_sub * 1000:.0f} ms, "
          f"all done in {dt:.1f} s = {tasks / dt:.0f} tasks/s; {len(spans)} ran, at most {most} at once")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["sbatch", "throughput", "latency", "squeue", "api", "restart",
                                     "sacct", "array", "all"])
    ap.add_argument("--slurm", action="store_true", help="run against the real Slurm oracle")
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--queued", default="10000,100000")
    ap.add_argument("--fill-api", action="store_true",
                    help="squeue: fill Muster's queue through the API instead of sbatch")
    a = ap.parse_args()
    todo = ["sbatch", "throughput", "latency", "squeue"] if a.what == "all" else [a.what]
    for what in todo:
        t = Target(a.slurm)
        try:
            if what == "sbatch":
                bench_sbatch(t, a.jobs or 1000)
            elif what == "throughput":
                bench_throughput(t, a.jobs or 2000)
            elif what == "latency":
                bench_latency(t, a.jobs or 200)
            elif what == "api":
                if a.slurm:
                    raise SystemExit("api: Muster only (Slurm's REST API is not set up on the oracle)")
                bench_api(t, a.jobs or 8000)
            elif what == "restart":
                bench_restart(t, a.jobs or 100000)
            elif what == "sacct":
                bench_sacct(t, a.jobs or 1000000)
            elif what == "array":
                bench_array(t, a.jobs or 10000)
            elif what == "squeue":
                bench_squeue(t, [int(x) for x in a.queued.split(",")], a.fill_api)
        finally:
            t.close()


if __name__ == "__main__":
    main()
