"""muster sim: a workload replayed through the scheduler on a virtual clock.
Every format (SWF, Batsim, CSV with the GPU traces' headers, a live
cluster's sacct dump), the comparison of policies, byte-for-byte
repeatability, and errors that name the file and line."""

import csv
import io
import subprocess
from pathlib import Path

import pytest

from conftest import BIN

SHARED = Path(__file__).resolve().parents[3] / "shared" / "traces"

CONF = """ClusterName=simtest
SlurmctldHost=localhost
GresTypes=gpu
NodeName=n[01-16] CPUs=8 RealMemory=64000 Gres=gpu:4
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""

SWF = """; Version: 2
; MaxProcs: 128
1 0 0 100 16 -1 -1 16 200 -1 1 1 1 -1 1 -1 -1 -1
2 5 0 50 128 -1 -1 128 100 -1 1 2 1 -1 1 -1 -1 -1
3 10 0 20 8 -1 -1 8 40 -1 1 3 1 -1 1 -1 -1 -1
4 12 0 3000 8 -1 -1 8 3600 -1 1 1 1 -1 1 -1 -1 -1
"""

BATSIM = """{"nb_res": 16, "jobs": [
 {"id": "a", "subtime": 0, "walltime": 300, "res": 8, "profile": "p100"},
 {"id": "b", "subtime": 1, "walltime": 300, "res": 16, "profile": "p100"},
 {"id": "c", "subtime": 2, "walltime": 60, "res": 8, "profile": "p30"}],
 "profiles": {"p100": {"type": "delay", "delay": 100}, "p30": {"type": "delay", "delay": 30}}}
"""

CSV = """id,submit,run,cpus,gpus,time_limit,user,account
j1,0,600,8,4,1200,ann,physics
j2,10,300,4,2,600,bob,chem
j3,20,100,64,16,600,ann,physics
j4,30,50,2,0,120,cat,chem
"""


def sim(*args, cwd=None, check=True):
    """Muster's own `muster sim` (never anything else on PATH)."""
    p = subprocess.run([str(BIN / "muster"), "sim", "--quiet", *args], cwd=cwd,
                       capture_output=True, text=True, timeout=300)
    if check:
        assert p.returncode == 0, p.stderr
    return p


@pytest.fixture
def work(tmp_path):
    (tmp_path / "muster.conf").write_text(CONF)
    (tmp_path / "t.swf").write_text(SWF)
    (tmp_path / "t.json").write_text(BATSIM)
    (tmp_path / "t.csv").write_text(CSV)
    return tmp_path


def jobs_csv(path):
    return {row["job_id"]: row for row in csv.DictReader(io.StringIO(path.read_text()))}


def test_swf_replay_backfills_and_writes_batsim_csvs(work):
    p = sim("--conf", work / "muster.conf", "--trace", work / "t.swf", "--out", work / "out")
    assert "Trace" in p.stdout and "4 jobs" in p.stdout
    jobs = jobs_csv(work / "out" / "out_jobs.csv")
    assert set(jobs) == {"1", "2", "3", "4"}
    # Job 2 takes the whole cluster: it waits for job 1 (until 100); job 3
    # ends by then and passes it (backfill); job 4 would delay it and waits.
    assert jobs["2"]["starting_time"] == "100"
    assert jobs["3"]["starting_time"] == "10"
    assert jobs["4"]["starting_time"] == "150"
    assert jobs["1"]["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert jobs["1"]["waiting_time"] == "0"
    schedule = (work / "out" / "out_schedule.csv").read_text().splitlines()
    assert "nb_jobs_finished" in schedule[0].split(",") and len(schedule) == 2
    assert "backfilled 1" in p.stdout


def test_batsim_and_csv_traces_replay(work):
    p = sim("--conf", work / "muster.conf", "--trace", work / "t.json", "--out", work / "b")
    jobs = jobs_csv(work / "b" / "out_jobs.csv")
    # Batsim's resources are nodes of one CPU each.
    assert jobs["a"]["starting_time"] == "0" and jobs["c"]["starting_time"] == "2"
    assert jobs["b"]["finish_time"] == str(int(jobs["b"]["starting_time"]) + 100)
    assert all(j["final_state"] == "COMPLETED_SUCCESSFULLY" for j in jobs.values())
    p = sim("--conf", work / "muster.conf", "--trace", work / "t.csv", "--out", work / "c")
    # Per account, and the GPUs the jobs held count in the utilisation.
    assert "physics" in p.stdout and "chem" in p.stdout
    assert "GPU utilisation 0.0%" not in p.stdout
    jobs = jobs_csv(work / "c" / "out_jobs.csv")
    assert jobs["j3"]["starting_time"] == "20"  # 16 GPUs of 64 free at 20


@pytest.mark.parametrize("trace,options", [
    ("pwa-nasa-ipsc-1993-excerpt/NASA-iPSC-1993-3.swf", []),
    ("batsim-hpc-seed1-250/example_workload_hpc_seed1_jobs250.json", []),
    ("msft-itp-elasticflow-2021/cluster10.csv", []),
    ("alibaba-gpu-v2023/openb_pod_list_default.csv", ["--cpus-per-gpu", "1"]),
])
def test_the_shared_traces_replay(work, trace, options):
    path = SHARED / trace
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    big = work / "big.conf"
    big.write_text(CONF.replace("n[01-16]", "n[001-128]").replace("CPUs=8", "CPUs=96"))
    p = sim("--conf", big, "--trace", path, *options)
    assert "Jobs " in p.stdout and "(started " in p.stdout


def test_a_sacct_dump_of_a_live_cluster_replays(fresh_cluster, work):
    c = fresh_cluster
    ids = [c.sbatch("-t", "2", "-n", "1", "--wrap", "sleep 1") for _ in range(3)]
    for j in ids:
        c.wait_done(j)
    dump = c.run([str(BIN / "sacct"), "--parsable2", "-a", "-X", "-o",
                  "JobID,User,Account,Submit,Start,End,Elapsed,Timelimit,NCPUS,"
                  "NNodes,ReqTRES,State"]).stdout
    (work / "last_month.txt").write_text(dump)
    p = sim("--conf", work / "muster.conf", "--trace", work / "last_month.txt",
            "--format", "sacct", "--partition", "batch", "--out", work / "s")
    jobs = jobs_csv(work / "s" / "out_jobs.csv")
    assert set(jobs) == {str(j) for j in ids}
    assert all(j["final_state"] == "COMPLETED_SUCCESSFULLY" for j in jobs.values())


def test_runs_repeat_byte_for_byte(work):
    rows = ["id,submit,run,cpus,time_limit"]
    rows += [f"{i},{i * 7 % 500},{20 + i * 37 % 700},{1 + i * 5 % 32},900" for i in range(400)]
    (work / "many.csv").write_text("\n".join(rows) + "\n")
    outs = []
    for k in range(2):
        p = sim("--conf", work / "muster.conf", "--trace", work / "many.csv", "--out", work / f"r{k}")
        outs.append(p.stdout)
    assert outs[0] == outs[1]
    for name in ("out_jobs.csv", "out_schedule.csv"):
        assert (work / "r0" / name).read_bytes() == (work / "r1" / name).read_bytes()


def test_passes_skipped_when_only_the_time_moved_change_nothing(work):
    # A queue that waits (more CPUs asked than the cluster has free) under
    # multifactor priorities and a short bf_window: the timer's passes that
    # the replay skips would have decided what it decided without them.
    rows = ["id,submit,run,cpus,time_limit,user"]
    rows += [f"{i},{i * 11 % 900},{60 + i * 53 % 1500},{1 + i * 7 % 48},1800,u{i % 5}"
             for i in range(300)]
    (work / "deep.csv").write_text("\n".join(rows) + "\n")
    conf = work / "mf.conf"
    conf.write_text(CONF + "PriorityType=priority/multifactor\nPriorityWeightAge=1000\n"
                    "PriorityWeightFairshare=5000\nPriorityDecayHalfLife=01:00:00\n"
                    "SchedulerParameters=bf_window=30\n")
    fast = sim("--conf", conf, "--trace", work / "deep.csv", "--out", work / "fast")
    every = sim("--conf", conf, "--trace", work / "deep.csv", "--every-pass", "--out", work / "all")
    skipped = [l for l in fast.stderr.splitlines() if "more skipped" in l]
    assert skipped and " (0 more skipped" not in skipped[-1], fast.stderr
    assert "(0 more skipped" in every.stderr
    assert fast.stdout == every.stdout
    for name in ("out_jobs.csv", "out_schedule.csv"):
        assert (work / "fast" / name).read_bytes() == (work / "all" / name).read_bytes()


def test_enforced_associations_are_made_for_the_trace(work):
    conf = work / "enforce.conf"
    conf.write_text(CONF + "AccountingStorageEnforce=associations,limits\n")
    p = sim("--conf", conf, "--trace", work / "t.csv")
    assert "refused" not in p.stdout, p.stdout
    assert "AccountingStorageEnforce=associations" in p.stdout and "3 made" in p.stdout
    assert "(started 4)" in p.stdout


def test_compare_and_sweep_show_policies_side_by_side(work):
    rows = ["id,submit,run,cpus,time_limit"]
    rows += [f"{i},{i * 3},{30 + i * 53 % 600},{1 + i * 11 % 96},900" for i in range(150)]
    (work / "w.csv").write_text("\n".join(rows) + "\n")
    fifo = work / "fifo.conf"
    fifo.write_text(CONF + "SchedulerType=sched/builtin\n")
    p = sim("--conf", work / "muster.conf", "--trace", work / "w.csv", "--compare", fifo)
    table = p.stdout.split("Difference", 1)
    assert len(table) == 2, p.stdout
    assert "muster.conf" in table[0] and "fifo.conf" in table[0]
    assert "Wait mean (s)" in table[1] and "Backfilled" in table[1]
    # sched/builtin never backfills.
    assert "Policy fifo.conf" in p.stdout
    fifo_part = p.stdout.split("Policy fifo.conf", 1)[1]
    assert "backfilled 0;" in fifo_part
    p = sim("--conf", work / "muster.conf", "--trace", work / "w.csv",
            "--sweep", "SchedulerType=sched/backfill,sched/builtin", "--out", work / "sw")
    assert "SchedulerType=sched/backfill" in p.stdout and "SchedulerType=sched/builtin" in p.stdout
    assert (work / "sw" / "SchedulerType_sched_backfill" / "out_jobs.csv").exists()
    assert (work / "sw" / "SchedulerType_sched_builtin" / "out_jobs.csv").exists()


def test_errors_name_what_was_wrong(work):
    bad = work / "bad.swf"
    bad.write_text(SWF + "5 20 0 x 8 -1 -1 8 40 -1 1 1 1 -1 1 -1 -1 -1\n")
    p = sim("--conf", work / "muster.conf", "--trace", bad, "--out", work / "none", check=False)
    assert p.returncode != 0
    assert "bad.swf:7" in p.stderr, p.stderr
    assert not (work / "none").exists()
    p = sim("--conf", work / "muster.conf", "--trace", work / "t.swf", "--set", "Nonsense",
            check=False)
    assert p.returncode != 0 and "--set Nonsense" in p.stderr
    p = sim("--conf", work / "muster.conf", "--trace", work / "t.swf", "--set", "NoSuchKey=1",
            check=False)
    assert p.returncode != 0 and "NoSuchKey" in p.stderr
    p = sim("--conf", work / "nope.conf", "--trace", work / "t.swf", check=False)
    assert p.returncode != 0 and "nope.conf" in p.stderr
    p = sim("--trace", work / "t.swf", check=False)
    assert p.returncode != 0 and "--conf" in p.stderr
