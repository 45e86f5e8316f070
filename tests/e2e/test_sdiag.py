"""sdiag: musterd's job counts, scheduling passes and RPCs in Slurm 22.05's
layout (as the oracle printed it), and sdiag -r."""

import re
import time

from conftest import BIN


def sdiag(c, *args, user=None, check=True):
    """Muster's own sdiag, never a Slurm client's of the same name."""
    return c.run([str(BIN / "sdiag"), *args], user=user, check=check)


def figure(text, label):
    """The number after `label` (the first line that starts with it)."""
    m = re.search(r"^\t?" + re.escape(label) + r"\s*(\d+)", text, re.M)
    assert m, f"{label!r} not in:\n{text}"
    return int(m.group(1))


def rpcs(text, section):
    """{name: (id, count, ave, total)} of an RPC section, in its order."""
    body = text.split(section + "\n", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in body.splitlines():
        m = re.fullmatch(r"\t(\S+)\s*\(\s*(\d+)\) count:(\d+)\s+ave_time:(\d+)\s+total_time:(\d+)",
                         line)
        assert m, f"not an RPC row: {line!r}"
        rows[m.group(1)] = tuple(int(g) for g in m.groups()[1:])
    return rows


def test_sdiag_counts_jobs_passes_and_rpcs(fresh_cluster):
    c = fresh_cluster
    ok = c.sbatch("-t", "1", "--wrap", "true")
    bad = c.sbatch("-t", "1", "--wrap", "false")
    held = c.sbatch("-H", "-t", "1", "--wrap", "true")
    for j in (ok, bad):
        c.wait_done(j)
    c.run(["scancel", str(held)])
    c.wait_state(held, {"CANCELLED"})
    out = sdiag(c).stdout
    lines = out.splitlines()
    assert lines[0] == "*" * 55 and lines[3] == "*" * 55
    assert re.fullmatch(r"sdiag output at \w{3} \w{3} \d\d \d\d:\d\d:\d\d \d{4} \(\d+\)", lines[1])
    assert lines[2].startswith("Data since      ")
    assert figure(out, "Jobs submitted:") == 3
    assert figure(out, "Jobs started:") == 2
    # A job that ran and ended by itself completed, FAILED or not (Slurm
    # counts the same); the held one was cancelled.
    assert figure(out, "Jobs completed:") == 2
    assert figure(out, "Jobs canceled:") == 1
    assert figure(out, "Jobs failed:") == 0
    assert figure(out, "Jobs pending:") == 0
    main = out.split("Main schedule statistics (microseconds):\n", 1)[1]
    assert figure(main, "Total cycles:") >= 2
    assert figure(main, "Max cycle:") >= figure(main, "Mean cycle:") > 0
    by_type = rpcs(out, "Remote Procedure Call statistics by message type")
    assert by_type["REQUEST_SUBMIT_BATCH_JOB"][:2] == (4003, 3)
    assert by_type["REQUEST_KILL_JOB"][:2] == (5032, 1)
    # The agents' messages count too: their registration and each batch end.
    assert by_type["MESSAGE_NODE_REGISTRATION_STATUS"][0] == 1002
    assert by_type["REQUEST_COMPLETE_BATCH_SCRIPT"][:2] == (5018, 2)
    # Sorted by count, the most first.
    counts = [row[1] for row in by_type.values()]
    assert counts == sorted(counts, reverse=True)
    for _, count, ave, total in by_type.values():
        assert ave == total // count
    # -i sorts by id, -t by total time.
    ids = [row[0] for row in rpcs(sdiag(c, "-i").stdout,
                                  "Remote Procedure Call statistics by message type").values()]
    assert ids == sorted(ids)
    totals = [row[3] for row in rpcs(sdiag(c, "-t").stdout,
                                     "Remote Procedure Call statistics by message type").values()]
    assert totals == sorted(totals, reverse=True)
    by_user = out.split("Remote Procedure Call statistics by user\n", 1)[1].split("\n\n")[0]
    assert re.match(r"\t\S+\s+\(\s*\d+\) count:\d+\s+ave_time:\d+\s+total_time:\d+", by_user)
    assert out.endswith("Pending RPC statistics\n\tNo pending RPCs\n")


def test_backfilled_jobs_are_counted(fresh_cluster):
    c = fresh_cluster
    # gpu01 busy for a while; a two-node job waits for it (planned at its
    # end); a short job behind it starts on gpu02 meanwhile: backfilled.
    blocker = c.sbatch("-p", "train", "-w", "gpu01", "--exclusive", "-t", "5", "--wrap", "sleep 60")
    c.wait_state(blocker, {"RUNNING"})
    big = c.sbatch("-p", "train", "-N", "2", "--exclusive", "-t", "5", "--wrap", "true")
    small = c.sbatch("-p", "train", "-w", "gpu02", "-t", "1", "--wrap", "sleep 30")
    c.wait_state(small, {"RUNNING"})
    assert c.job(big)["state"] == "PENDING"
    out = sdiag(c).stdout
    bf = out.split("Backfilling stats\n", 1)[1].split("\n\n")[0]
    assert figure(bf, "Total backfilled jobs (since last slurm start):") >= 1
    assert figure(bf, "Total cycles:") >= 1
    assert figure(bf, "Last table size:") >= 2
    assert "Mean cycle:" in bf and "Depth Mean:" in bf
    c.cancel([blocker, big, small])


def test_reset_zeroes_the_counts_for_operators_only(fresh_cluster, users):
    c = fresh_cluster
    c.wait_done(c.sbatch("-t", "1", "--wrap", "true"))
    before = sdiag(c).stdout
    assert figure(before, "Jobs submitted:") == 1
    if users:
        r = sdiag(c, "-r", user=users[0], check=False)
        assert r.returncode == 1
        assert r.stderr == "slurm_reset_statistics: Access/permission denied\n"
        assert figure(sdiag(c).stdout, "Jobs submitted:") == 1
    time.sleep(1)
    r = sdiag(c, "-r")
    assert r.stdout == "Reset scheduling statistics\n"
    after = sdiag(c).stdout
    assert figure(after, "Jobs submitted:") == 0
    assert figure(after, "Jobs completed:") == 0
    main = after.split("Main schedule statistics (microseconds):\n", 1)[1]
    assert figure(main, "Total cycles:") == 0 and "Mean cycle:" not in main
    # Data since moved to the reset; the reset is the one RPC counted since.
    since = re.search(r"^Data since .*\((\d+)\)$", after, re.M).group(1)
    assert since != re.search(r"^Data since .*\((\d+)\)$", before, re.M).group(1)
    by_type = rpcs(after, "Remote Procedure Call statistics by message type")
    assert list(by_type) == ["REQUEST_STATS_INFO"] and by_type["REQUEST_STATS_INFO"][1] == 1


def test_options_as_slurm_has_them(fresh_cluster):
    c = fresh_cluster
    assert sdiag(c, "--usage").stdout == "Usage: sdiag [-M cluster] [-aritT]\n"
    assert sdiag(c, "--help").stdout.startswith("Usage: sdiag [OPTIONS]\n  -a, --all ")
    assert sdiag(c, "-V").stdout.startswith("slurm 22.05")
    r = sdiag(c, "-z", check=False)
    assert r.returncode == 1
    assert r.stderr == "sdiag: invalid option -- 'z'\nTry \"sdiag --help\" for more information\n"
    r = sdiag(c, "-M", "other", check=False)
    assert r.returncode == 1
    assert r.stderr.startswith("sdiag: error: No cluster 'other' known by database.\n")
    assert sdiag(c, "-M", "e2e", "-a").stdout.startswith("*" * 55)
