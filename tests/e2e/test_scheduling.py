"""Placement and refusals: sharing, GPUs, multi-node, exclusive, drained
nodes, impossible requests, holds, srun steps."""

import re
import time


def gpus_of(cluster, job):
    out = (cluster.work / f"slurm-{job}.out").read_text().split()
    return out[0], set(out[1].split(","))


def test_two_jobs_on_one_node_never_share_a_gpu(cluster):
    cmd = "echo $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES; sleep 2"
    jobs = [cluster.sbatch("-p", "train", "-w", "gpu01", "--gres=gpu:3", "-c", "1", "--wrap", cmd)
            for _ in range(2)]
    for j in jobs:
        assert cluster.wait_done(j) == "COMPLETED"
    (n1, g1), (n2, g2) = gpus_of(cluster, jobs[0]), gpus_of(cluster, jobs[1])
    assert n1 == n2 == "gpu01"
    assert len(g1) == len(g2) == 3
    assert not (g1 & g2), f"GPU indices shared: {g1} {g2}"
    assert all(0 <= int(g) < 8 for g in g1 | g2)


def test_many_jobs_share_a_node(cluster):
    jobs = [cluster.sbatch("-w", "cpu01", "-c", "4", "--wrap", "sleep 3") for _ in range(4)]
    for j in jobs:
        cluster.wait_state(j, "RUNNING")
    r = cluster.run(["sinfo", "-h", "-N", "-n", "cpu01", "-o", "%t"])
    assert r.stdout.strip() == "alloc"
    fifth = cluster.sbatch("-w", "cpu01", "-c", "4", "--wrap", "true")
    time.sleep(0.3)
    assert cluster.job(fifth)["state"] == "PENDING"
    assert cluster.wait_done(fifth) == "COMPLETED"


def test_nodes_allocated_together_or_wait(cluster):
    blocker = cluster.sbatch("-p", "train", "-w", "gpu02", "--exclusive", "--wrap", "sleep 2")
    cluster.wait_state(blocker, "RUNNING")
    job = cluster.sbatch("-p", "train", "-N", "2", "--wrap", "echo $SLURM_JOB_NODELIST $SLURM_NNODES")
    time.sleep(0.3)
    j = cluster.job(job)
    assert j["state"] == "PENDING"
    assert j["reason"] == "Resources"
    r = cluster.run(["squeue", "-h", "-j", str(job), "-o", "%r"])
    assert r.stdout.strip() == "Resources"
    assert cluster.wait_done(job) == "COMPLETED"
    assert (cluster.work / f"slurm-{job}.out").read_text().strip() == "gpu[01-02] 2"


def test_exclusive_takes_whole_node(cluster):
    job = cluster.sbatch("-w", "cpu01", "--exclusive", "--wrap", "echo $SLURM_CPUS_ON_NODE; sleep 1")
    cluster.wait_state(job, "RUNNING")
    other = cluster.sbatch("-w", "cpu01", "--wrap", "true")
    time.sleep(0.3)
    assert cluster.job(other)["state"] == "PENDING"
    assert cluster.wait_done(job) == "COMPLETED"
    assert (cluster.work / f"slurm-{job}.out").read_text().strip() == "16"
    assert cluster.wait_done(other) == "COMPLETED"


def test_impossible_requests_refused_at_submit(cluster):
    cases = [
        (["-p", "train", "--gres=gpu:16"], "gres/gpu"),
        (["-c", "64"], "cpu"),
        (["--mem=200G"], "mem"),
        (["-N", "5"], "node"),
    ]
    before = cluster.run(["squeue", "-h", "-t", "all", "-o", "%i"]).stdout.split()
    for args, word in cases:
        r = cluster.run(["sbatch", *args, "--wrap", "true"], check=False)
        assert r.returncode == 1, args
        # After Slurm's own line where it has one (-c 64, --mem=200G): see
        # test_messages.py.
        lines = r.stderr.strip().splitlines()
        failed = lines.index("sbatch: error: Batch job submission failed: "
                             "Requested node configuration is not available")
        assert failed <= 1 and len(lines) == failed + 2, r.stderr
        assert word in lines[failed + 1].lower(), r.stderr
        assert r.stdout == ""
    r = cluster.run(["sbatch", "-p", "nosuch", "--wrap", "true"], check=False)
    assert r.returncode == 1
    assert "invalid partition name specified" in r.stderr.lower()
    r = cluster.run(["sbatch", "-p", "train", "--gres=gpu:a100:1", "--wrap", "true"], check=False)
    assert r.returncode == 1
    assert "a100" in r.stderr
    after = cluster.run(["squeue", "-h", "-t", "all", "-o", "%i"]).stdout.split()
    assert before == after, "a refused request must queue nothing"


def test_gpus_detail_names_most_any_node_offers(cluster):
    r = cluster.run(["sbatch", "-p", "train", "--gpus-per-node=9", "--wrap", "true"], check=False)
    assert r.returncode == 1
    assert "9" in r.stderr and "8" in r.stderr.splitlines()[-1]


def test_hold_and_release(cluster):
    job = cluster.sbatch("-H", "--wrap", "echo released")
    time.sleep(0.2)
    j = cluster.job(job)
    assert j["state"] == "PENDING"
    f = cluster.scontrol_job(job)
    assert f["Reason"] == "JobHeldUser"
    assert f["Priority"] == "0"
    cluster.run(["scontrol", "release", str(job)])
    assert cluster.wait_done(job) == "COMPLETED"
    h = cluster.sbatch("--begin=now+1hour", "--wrap", "true")
    cluster.run(["scontrol", "hold", str(h)])
    f = cluster.scontrol_job(h)
    assert f["JobState"] == "PENDING"
    cluster.run(["scancel", str(h)])


def test_srun_tasks_across_nodes(cluster):
    script = cluster.work / "steps.sh"
    script.write_text("#!/bin/bash\n#SBATCH -p train -N 2 --ntasks-per-node=2 -c 1\n"
                      "srun bash -c 'echo $SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID $SLURM_STEP_ID "
                      "$SLURM_NTASKS $SLURMD_NODENAME' | sort -n\n"
                      "srun -n 1 bash -c 'exit 0'; echo first=$?\n"
                      "srun bash -c 'exit $SLURM_PROCID'; echo second=$?\n")
    job = cluster.sbatch(str(script))
    assert cluster.wait_done(job) == "COMPLETED"
    lines = (cluster.work / f"slurm-{job}.out").read_text().splitlines()
    tasks = [l.split() for l in lines if l[0].isdigit()]
    assert [t[0] for t in tasks] == ["0", "1", "2", "3"]
    assert [t[1] for t in tasks] == ["0", "1", "0", "1"]
    assert [t[2] for t in tasks] == ["0", "0", "1", "1"]
    assert all(t[3] == "0" and t[4] == "4" for t in tasks)
    assert [t[5] for t in tasks] == ["gpu01", "gpu01", "gpu02", "gpu02"]
    assert "first=0" in lines
    assert "second=3" in lines


def test_drained_node_finishes_jobs_and_takes_no_new_ones(cluster):
    job = cluster.sbatch("-w", "cpu01", "--wrap", "sleep 2")
    cluster.wait_state(job, "RUNNING")
    cluster.run(["scontrol", "update", "NodeName=cpu01", "State=DRAIN", "Reason=bad fan"])
    r = cluster.run(["sinfo", "-h", "-N", "-n", "cpu01", "-o", "%t"])
    assert r.stdout.strip() == "drng"
    r = cluster.run(["sinfo", "-R", "-h", "-o", "%E|%N"])
    assert "bad fan|cpu01" in r.stdout
    new = cluster.sbatch("-w", "cpu01", "--wrap", "true")
    assert cluster.wait_done(job) == "COMPLETED"
    time.sleep(0.3)
    assert cluster.job(new)["state"] == "PENDING"
    r = cluster.run(["sinfo", "-h", "-N", "-n", "cpu01", "-o", "%t"])
    assert r.stdout.strip() == "drain"
    f = cluster.run(["scontrol", "show", "node", "cpu01"]).stdout
    assert "Reason=bad fan [root@" in f
    cluster.run(["scontrol", "update", "NodeName=cpu01", "State=RESUME"])
    assert cluster.wait_done(new) == "COMPLETED"
    r = cluster.run(["scontrol", "update", "NodeName=cpu01", "State=DRAIN"], check=False)
    assert r.returncode != 0
    assert "reason" in r.stderr.lower()


def test_fixed_node_count_fills_the_first_node(cluster):
    # The oracle (slurm 22.05) on free nodes: -N2 -n4 holds 3 CPUs on the
    # first node and 1 on the second (scontrol -d: CPU_IDs per node, Mem 3000
    # and 1000 at DefMemPerCPU=1000); --ntasks-per-node counts that many
    # tasks on every node (-N2 -n3 --ntasks-per-node=2: NumTasks=4,
    # SLURM_TASKS_PER_NODE=2(x2), SLURM_NTASKS=3).
    job = cluster.sbatch("-p", "train", "-N2", "-n4", "--wrap", "sleep 30")
    cluster.wait_state(job, "RUNNING")
    f = cluster.scontrol_job(job)
    assert f["NumNodes"] == "2" and f["NumCPUs"] == "4" and f["NumTasks"] == "4", f
    detail = cluster.run(["scontrol", "show", "job", "-d", str(job)]).stdout
    per_node = re.findall(r"Nodes=(\S+) CPU_IDs=(\S+) Mem=(\d+)", detail)
    assert [(n, m) for n, _, m in per_node] == [("gpu01", "3000"), ("gpu02", "1000")], detail
    assert [count_ids(cpus) for _, cpus, _ in per_node] == [3, 1], detail
    cluster.run(["scancel", str(job)])
    cluster.wait_done(job)
    tpn = cluster.sbatch("-p", "train", "-N2", "-n3", "--ntasks-per-node=2", "--wrap",
                         "echo $SLURM_TASKS_PER_NODE $SLURM_NTASKS $SLURM_JOB_CPUS_PER_NODE; sleep 5")
    cluster.wait_state(tpn, "RUNNING")
    f = cluster.scontrol_job(tpn)
    assert f["NumTasks"] == "4" and f["NumCPUs"] == "4", f
    assert cluster.wait_done(tpn) == "COMPLETED"
    assert (cluster.work / f"slurm-{tpn}.out").read_text().split() == ["2(x2)", "3", "2(x2)"]


def count_ids(ids):
    """How many CPUs a CPU_IDs= list ("0-2,5") names."""
    total = 0
    for part in ids.split(","):
        lo, _, hi = part.partition("-")
        total += int(hi or lo) - int(lo) + 1
    return total


def test_jobs_held_back_by_unavailable_nodes_name_them(cluster):
    # The oracle (slurm 22.05), squeue %r: "ReqNodeNotAvail,
    # UnavailableNodes:gpu03" for -w gpu03 (and -w gpu[03-04]) with gpu03
    # drained or down, "...:cpu[01-02]" for -C cpu with both cpu nodes
    # drained, and Slurm's error text for a job that needs more nodes than
    # are up but asked for none in particular; scontrol writes the spaces
    # as underscores.
    def reason(job):
        deadline = time.time() + 10
        while time.time() < deadline:
            r = cluster.run(["squeue", "-h", "-j", str(job), "-o", "%r"]).stdout.strip()
            if r not in ("None", "Priority", "Resources", ""):
                return r
            time.sleep(0.1)
        return r

    cluster.run(["scontrol", "update", "NodeName=gpu02", "State=DRAIN", "Reason=flaky"])
    cluster.run(["scontrol", "update", "NodeName=cpu01", "State=DRAIN", "Reason=flaky"])
    jobs = []
    try:
        named = cluster.sbatch("-w", "gpu[01-02]", "--wrap", "true")
        feature = cluster.sbatch("-C", "cpu", "--wrap", "true")
        many = cluster.sbatch("-p", "train", "-N2", "--wrap", "true")
        jobs = [named, feature, many]
        assert reason(named) == "ReqNodeNotAvail, UnavailableNodes:gpu02"
        assert reason(feature) == "ReqNodeNotAvail, UnavailableNodes:cpu01"
        assert reason(many) == ("Nodes required for job are DOWN, DRAINED or reserved for jobs "
                                "in higher priority partitions")
        f = cluster.scontrol_job(named)
        assert f["Reason"] == "ReqNodeNotAvail,_UnavailableNodes:gpu02", f
        r = cluster.run(["squeue", "-h", "-j", str(named), "-O", "Explanation:200"]).stdout
        assert "gpu02" in r and "drained" in r, r
        # Down rather than drained: the same.
        cluster.run(["scontrol", "update", "NodeName=gpu02", "State=DOWN", "Reason=dead"])
        cluster.run(["scontrol", "update", "NodeName=gpu02", "State=UNDRAIN"])
        assert reason(named) == "ReqNodeNotAvail, UnavailableNodes:gpu02"
    finally:
        for node in ("gpu02", "cpu01"):
            cluster.run(["scontrol", "update", f"NodeName={node}", "State=RESUME"])
    for job in jobs:
        assert cluster.wait_done(job) == "COMPLETED"


def test_a_cpu_job_is_not_held_behind_a_gpu_job_waiting_for_gpus(cluster):
    # Every GPU of train busy, a GPU job waiting for them: a CPU-only job in
    # train starts on the free CPUs at once (SchedulerType's default,
    # sched/backfill, as Slurm's), where the strict order kept it Priority.
    busy = [cluster.sbatch("-p", "train", "-w", node, "--gres=gpu:8", "-t", "5", "--wrap",
                           "sleep 60") for node in ("gpu01", "gpu02")]
    for j in busy:
        cluster.wait_state(j, "RUNNING")
    gpu_job = cluster.sbatch("-p", "train", "--gres=gpu:4", "-t", "10", "--wrap", "true")
    cpu_job = cluster.sbatch("-p", "train", "-c", "4", "-t", "10", "--wrap", "sleep 30")
    try:
        cluster.wait_state(cpu_job, "RUNNING")
        j = cluster.job(gpu_job)
        assert (j["state"], j["reason"]) == ("PENDING", "Resources")
        # A GPU job behind it waits its turn.
        long_gpu = cluster.sbatch("-p", "train", "--gres=gpu:1", "-t", "60", "--wrap", "true")
        time.sleep(0.5)
        j = cluster.job(long_gpu)
        assert (j["state"], j["reason"]) == ("PENDING", "Priority")
        r = cluster.run(["squeue", "-h", "-j", str(long_gpu), "-O", "Explanation:300"])
        assert (f"waits behind job {gpu_job} (higher priority), which waits for resources in "
                "partition train; this job is planned to start at about ") in r.stdout, r.stdout
        assert " on gpu01, as what frees up before then is held for jobs of higher priority" \
            in r.stdout, r.stdout
        # Backfill planned both: each has its start in squeue --start.
        r = cluster.run(["squeue", "--start", "-h", "-j", f"{gpu_job},{long_gpu}",
                         "-o", "%i %S %Y"])
        starts = dict(line.split(" ", 1) for line in r.stdout.splitlines())
        for j in (gpu_job, long_gpu):
            assert starts[str(j)].split()[0] != "N/A", r.stdout
            assert starts[str(j)].split()[1] == "gpu01", r.stdout
    finally:
        cluster.run(["scancel", *map(str, busy + [gpu_job, cpu_job])], check=False)
        cluster.run(["scancel", "-p", "train"], check=False)


def test_cpus_and_memory_per_gpu(cluster, tmp_path):
    # As the oracle runs them: CPUs and memory follow the GPUs allocated.
    out = tmp_path / "env.out"
    job = cluster.sbatch("-p", "train", "--gres=gpu:2", "--cpus-per-gpu=4", "--mem-per-gpu=10G",
                         "-o", str(out), "--wrap", "env")
    assert cluster.wait_done(job) == "COMPLETED"
    shown = cluster.run(["scontrol", "show", "job", str(job)]).stdout
    assert "NumCPUs=8 " in shown, shown
    assert "TRES=cpu=8,mem=20G,node=1,billing=8,gres/gpu=2" in shown, shown
    assert "MinMemoryNode=0 " in shown, shown
    assert "\n   CpusPerTres=gres:gpu:4\n   MemPerTres=gres:gpu:10240\n" in shown, shown
    env = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    assert env["SLURM_CPUS_PER_GPU"] == "4" and env["SLURM_MEM_PER_GPU"] == "10240", env
    assert env["SLURM_CPUS_ON_NODE"] == "8", env
    # What Slurm refuses, in its words and with its exit statuses.
    cases = [
        (["--gres=gpu:2", "--cpus-per-gpu=4", "-c", "2"], 1,
         "sbatch: error: --cpus-per-gpu is mutually exclusive with --cpus-per-task\n"
         "sbatch: error: Invalid generic resource (gres) specification\n"),
        (["--gres=gpu:2", "--mem-per-gpu=10G", "--mem=1G"], 1,
         "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n"),
        (["--mem-per-gpu=4G"], 1,
         "sbatch: error: Requested mem_per_tres=gres:gpu:4096 but did not request any GPU.\n"
         "sbatch: error: Invalid generic resource (gres) specification\n"),
        (["--gres=gpu:2", "--cpus-per-gpu=x"], 1,
         "sbatch: error: Invalid numeric value \"x\" for --cpus-per-gpu.\n"),
        (["--gres=gpu:2", "--mem-per-gpu=zz"], 255,
         "sbatch: error: Invalid --mem-per-gpu specification\n"),
        # (Slurm says the first line only; Muster adds which resource.)
        (["--gres=gpu:3", "--cpus-per-gpu=16"], 1,
         "sbatch: error: Batch job submission failed: Requested node configuration is not "
         "available\nsbatch: error: cpus: requested 48 per node (3 GPUs x --cpus-per-gpu=16), "
         "the most any node in partition train has is 32\n"),
    ]
    for args, rc, err in cases:
        r = cluster.run(["sbatch", "-p", "train", *args, "--wrap", "true"], check=False)
        assert (r.returncode, r.stderr) == (rc, err), (args, r.returncode, r.stderr)


def test_srun_sizes_its_own_allocation_by_gpu(cluster):
    # Outside an allocation srun's --cpus-per-gpu and --mem-per-gpu size the
    # allocation it asks for, as sbatch's do.
    r = cluster.run(["srun", "-p", "train", "--gres=gpu:2", "--cpus-per-gpu=3",
                     "--mem-per-gpu=2G", "sh", "-c",
                     "echo $SLURM_CPUS_ON_NODE $SLURM_CPUS_PER_GPU $SLURM_MEM_PER_GPU"])
    assert r.stdout.split() == ["6", "3", "2048"], (r.stdout, r.stderr)
    # Inside one a step cannot take them yet: refused by name, not ignored.
    job = cluster.sbatch("-p", "train", "--gres=gpu:1", "--wrap", "sleep 300")
    try:
        cluster.wait_state(job, "RUNNING")
        r = cluster.run(["srun", "--jobid", str(job), "--cpus-per-gpu=2", "true"], check=False)
        assert r.returncode == 1
        assert "srun: error: --cpus-per-gpu sizes a new allocation" in r.stderr, r.stderr
    finally:
        cluster.cancel([job])
