"""Backfill planning through the CLI: a big job waiting for whole nodes is
given its start, small jobs that end before it run in the gap, and those
that would not wait behind it (the handbook's "big job reserved while
small ones backfill")."""
import datetime


def start_and_nodes(cluster, job_ids):
    """squeue --start's START_TIME (None for N/A) and SCHEDNODES per job."""
    r = cluster.run(["squeue", "--start", "-h", "-j", ",".join(map(str, job_ids)),
                     "-o", "%i %S %Y"])
    out = {}
    for line in r.stdout.splitlines():
        job, start, nodes = line.split()
        out[int(job)] = (None if start == "N/A" else datetime.datetime.fromisoformat(start),
                         nodes)
    return out


def test_big_job_is_reserved_while_small_ones_backfill(cluster):
    # gpu01 frees up within 2 minutes, gpu02 within 3: the big job, which
    # needs both whole, is planned for then.
    busy = [cluster.sbatch("-p", "train", "-w", "gpu01", "-c", "16", "-t", "2", "--wrap",
                           "sleep 300"),
            cluster.sbatch("-p", "train", "-w", "gpu02", "-c", "16", "-t", "3", "--wrap",
                           "sleep 300")]
    for j in busy:
        cluster.wait_state(j, "RUNNING")
    big = cluster.sbatch("-p", "train", "-N", "2", "--exclusive", "-t", "10", "--wrap", "true")
    long_small = cluster.sbatch("-p", "train", "-c", "8", "-t", "30", "--wrap", "sleep 300")
    short_small = cluster.sbatch("-p", "train", "-c", "8", "-t", "1", "--wrap", "sleep 20")
    try:
        # The short one ends before the big one's start: it runs at once, on
        # the CPUs the running jobs leave free.
        cluster.wait_state(short_small, "RUNNING")
        j = cluster.job(big)
        assert (j["state"], j["reason"]) == ("PENDING", "Resources")
        # The long one would hold a node past that start: it waits its turn.
        j = cluster.job(long_small)
        assert (j["state"], j["reason"]) == ("PENDING", "Priority")
        starts = start_and_nodes(cluster, [big, long_small])
        big_start, big_nodes = starts[big]
        assert big_start is not None, starts
        assert big_nodes == "gpu[01-02]", starts
        # Planned when gpu02's job reaches its 3-minute limit, give or take
        # the planner's resolution (a minute).
        started = datetime.datetime.fromtimestamp(cluster.job(busy[1])["start_time"])
        assert datetime.timedelta(minutes=2) < big_start - started <= \
            datetime.timedelta(minutes=4, seconds=1), (starts, started)
        # The long small job is planned after the big one ends (exclusive).
        small_start, _ = starts[long_small]
        assert small_start is not None and small_start >= big_start + \
            datetime.timedelta(minutes=10), starts
        # scontrol show job agrees.
        shown = cluster.scontrol_job(big)
        assert shown["StartTime"] == big_start.isoformat(), shown
    finally:
        cluster.run(["scancel", *map(str, busy + [big, long_small, short_small])], check=False)
