"""Multifactor priority and fairshare through sprio and sshare: the factors
the scheduler uses, in Slurm's layouts, and an account that used the
cluster going behind one that did not."""

import json
import subprocess
import time

import pytest

from conftest import BIN, DEFAULT_CONF, make_cluster, wait_for

# The handbook's weights (the oracle's slurm.conf).
MULTIFACTOR = DEFAULT_CONF + """\
PriorityType=priority/multifactor
PriorityDecayHalfLife=7-0
PriorityMaxAge=7-0
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=1000
PriorityWeightPartition=1000
PriorityWeightQOS=2000
"""


@pytest.fixture(scope="module")
def mcluster():
    c = make_cluster(MULTIFACTOR)
    try:
        yield c
    finally:
        c.teardown()


def own(cmd):
    """Muster's own binary, never a Slurm client's of the same name."""
    return str(BIN / cmd)


def fill(c, seconds):
    """A job of account `filler` holding every CPU of the cluster."""
    return c.sbatch("-A", "filler", "-N3", "--exclusive", "-t", "1", "--wrap", f"sleep {seconds}")


def test_sprio_shows_the_factors_in_slurms_layout(mcluster):
    c = mcluster
    blocker = fill(c, 30)
    c.wait_state(blocker, {"RUNNING"})
    job = c.sbatch("-p", "train", "-N1", "-n4", "--nice=100", "--wrap", "true")
    try:
        r = c.run([own("sprio")])
        lines = r.stdout.splitlines()
        # Factors with no weight (ASSOC, TRES) are left out, as Slurm does.
        assert lines[0] == ("          JOBID PARTITION   PRIORITY       SITE        AGE"
                            "  FAIRSHARE    JOBSIZE  PARTITION        QOS")
        row = [l.split() for l in lines[1:] if l.split()[0] == str(job)]
        assert row, r.stdout
        jobid, part, prio, site, age, fs, size, partf, qos = row[0]
        assert part == "train" and site == "0" and qos == "0" and partf == "1000"
        # One of 3 nodes and 4 of 80 CPUs: (1/3 + 4/80) / 2 of 1000.
        assert size == "192"
        # Nothing has run in this user's account yet: the top rank.
        assert fs == "10000"
        # The sum (job size 191.67 before rounding for display), less nice.
        assert int(prio) == int(age) + 10000 + 191 + 1000 - 100
        # squeue's PRIORITY is the same number.
        q = c.run(["squeue", "-h", "-j", str(job), "-o", "%Q"])
        assert q.stdout.strip() == prio
        long = c.run([own("sprio"), "-l", "-j", str(job)]).stdout.splitlines()
        assert long[0].split() == ["JOBID", "PARTITION", "USER", "PRIORITY", "SITE", "AGE", "ASSOC",
                                   "FAIRSHARE", "JOBSIZE", "PARTITION", "QOS", "NICE", "TRES"]
        assert long[1].split()[2] == "root" and long[1].split()[11] == "100"
        norm = c.run([own("sprio"), "-n", "-j", str(job)]).stdout.splitlines()
        assert norm[0].split() == ["JOBID", "PARTITION", "PRIORITY", "AGE", "FAIRSHARE", "JOBSIZE",
                                   "PARTITION", "QOS"]
        assert norm[1].split()[5] == "0.1916667"
        w = c.run([own("sprio"), "-w"]).stdout.splitlines()
        assert w[1].split() == ["Weights", "1", "1000", "10000", "1000", "1000", "2000"]
        assert c.run([own("sprio"), "-j", "999999"]).stdout == \
            "Unable to find jobs matching user/id(s) specified\n"
        bad = c.run([own("sprio"), "-j", "abc"], check=False)
        assert bad.returncode == 1 and bad.stderr == "sprio: error: Invalid job id: abc\n"
    finally:
        c.run(["scancel", str(job), str(blocker)])


def test_fairshare_puts_a_heavy_account_behind_a_light_one(mcluster):
    c = mcluster
    # Account heavy uses the whole cluster for a while.
    used = c.sbatch("-A", "heavy", "-N3", "--exclusive", "--wrap", "sleep 3")
    c.wait_done(used)
    shares = c.run([own("sshare"), "-a", "-P"]).stdout.splitlines()
    assert shares[0] == "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare"
    rows = {tuple(l.split("|")[:2]): l.split("|") for l in shares[1:]}
    assert (" heavy", "") in rows and ("  heavy", "root") in rows, shares
    assert int(rows[("  heavy", "root")][4]) >= 80 * 2  # 80 CPUs for about 3 s
    # Behind a job holding everything, heavy submits first, light second;
    # both want the whole cluster, so only one can go next.
    blocker = fill(c, 4)
    c.wait_state(blocker, {"RUNNING"})
    first = c.sbatch("-A", "heavy", "-N3", "--exclusive", "-t", "1", "--wrap", "sleep 30")
    second = c.sbatch("-A", "light", "-N3", "--exclusive", "-t", "1", "--wrap", "sleep 30")
    try:
        prio = {}
        deadline = time.time() + 10
        while time.time() < deadline and len(prio) < 2:
            out = c.run([own("sprio"), "-h", "-j", f"{first},{second}", "-o", "%i %Y %F"]).stdout
            prio = {int(l.split()[0]): (int(l.split()[1]), int(l.split()[2])) for l in out.splitlines()}
            time.sleep(0.2)
        assert prio[second][1] > prio[first][1], prio  # fairshare
        assert prio[second][0] > prio[first][0], prio  # and so priority
        c.wait_state(second, {"RUNNING"}, timeout=30)
        assert c.job(first)["state"] == "PENDING"
        light = [l.split("|") for l in c.run([own("sshare"), "-P", "-n", "-A", "light"]).stdout.splitlines()]
        heavy = [l.split("|") for l in c.run([own("sshare"), "-P", "-n", "-A", "heavy"]).stdout.splitlines()]
        assert light[0][:3] == ["light", "", "1"], light
        assert light[1][:2] == [" light", "root"] and heavy[1][:2] == [" heavy", "root"]
        assert float(light[1][-1]) > float(heavy[1][-1]), (light, heavy)
    finally:
        c.run(["scancel", str(first), str(second), str(blocker)])


def test_usage_is_kept_across_a_restart_of_musterd(mcluster):
    c = mcluster
    before = {tuple(l.split("|")[:2]): int(l.split("|")[4])
              for l in c.run([own("sshare"), "-a", "-P", "-n"]).stdout.splitlines()}
    assert before[("  heavy", "root")] > 0, before
    c.down()
    assert (c.root / "ctld" / "assoc_usage.json").exists()
    saved = json.loads((c.root / "ctld" / "assoc_usage.json").read_text())
    assert any(row[0] == "heavy" and row[2] > 0 for row in saved["usage"]), saved
    c.up()
    after = {tuple(l.split("|")[:2]): int(l.split("|")[4])
             for l in c.run([own("sshare"), "-a", "-P", "-n"]).stdout.splitlines()}
    # Decay over seconds of a 7-day half-life is nothing at this precision.
    assert after[("  heavy", "root")] >= before[("  heavy", "root")] - 1, (before, after)


def test_sshare_format_takes_slurms_fields_and_widths(mcluster):
    c = mcluster
    # 16 CPUs (16000 MB) for about 4 s: 64 CPU-seconds, a whole minute of one.
    used = c.sbatch("-A", "widths", "-N1", "-n16", "--wrap", "sleep 4")
    c.wait_done(used, timeout=60)
    raw = c.run([own("sshare"), "-A", "widths", "-P", "-o",
                 "Account,User,RawShares,NormShares,GrpTRESRaw,ID,Cluster"]).stdout.splitlines()
    assert raw[0] == "Account|User|RawShares|NormShares|GrpTRESRaw|ID|Cluster", raw
    rows = [l.split("|") for l in raw[1:]]
    assert [r[:3] for r in rows] == [["widths", "", "1"], [" widths", "root", "1"]], raw
    tres = dict(item.split("=") for item in rows[1][4].split(","))
    assert tres["cpu"] == "1" and tres["billing"] == "1" and int(tres["mem"]) >= 1066, raw
    assert rows[0][4] == rows[1][4] and rows[1][6] == "e2e", raw
    # The same through Slurm's widths: %-N left, %N right, text cut with a
    # '+', a real too wide for "%.6f" in e-notation, numbers never cut.
    r = c.run([own("sshare"), "-A", "widths", "--format",
               "Account%-12,User%6,RawSh%4,NormShares%7,GrpTRESRaw%-20,ID,c"])
    lines = r.stdout.splitlines()
    assert lines[:2] == [
        "Account        User RawS NormSha GrpTRESRaw               ID    Cluster ",
        "------------ ------ ---- ------- -------------------- ------ ---------- "], r.stdout
    for line, (account, user, shares, norm, grp, ident, cluster) in zip(lines[2:], rows):
        assert line == (f"{account:<12} {user:>6} {shares:>4} {float(norm):.1e} "
                        f"{grp[:19] + '+':<20} {ident:>6} {cluster:>10} "), (line, r.stdout)
    # A field sshare lacks is refused, named as Slurm names it.
    bad = c.run([own("sshare"), "-o", "Account,FooBar%5"], check=False)
    assert (bad.returncode, bad.stdout) == (1, ""), bad
    assert bad.stderr == 'sshare: error: Invalid field requested: "foobar"\n'
    fields = c.run([own("sshare"), "--helpformat"]).stdout
    assert fields.split() == ["Account", "Cluster", "EffectvUsage", "FairShare", "GrpTRESMins",
                              "GrpTRESRaw", "ID", "LevelFS", "NormShares", "NormUsage",
                              "Partition", "RawShares", "RawUsage", "TRESRunMins", "User"]
    # Without -o the columns stay Slurm's default ones.
    assert c.run([own("sshare"), "-A", "widths"]).stdout.splitlines()[0] == (
        "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  "
        "FairShare ")


def test_sprio_leaves_out_jobs_not_eligible_yet(mcluster):
    # The oracle's sprio lists neither a held job nor one before its
    # --begin time nor one waiting on a dependency: -j names none
    # ("Unable to find ...", on stdout, exit 0), and plain sprio skips them.
    c = mcluster
    blocker = fill(c, 30)
    c.wait_state(blocker, {"RUNNING"})
    held = c.sbatch("-H", "--wrap", "true")
    later = c.sbatch("--begin=now+1hour", "--wrap", "true")
    after = c.sbatch(f"--dependency=afterok:{blocker}", "--wrap", "true")
    waiting = c.sbatch("--wrap", "true")
    try:
        for job in (held, later, after):
            r = c.run([own("sprio"), "-j", str(job)])
            assert (r.stdout, r.stderr) == ("Unable to find jobs matching user/id(s) specified\n",
                                            ""), (job, r)
        listed = wait_for(lambda: c.run([own("sprio"), "-h", "-o", "%i"]).stdout.split(),
                          what="sprio's jobs")
        assert str(waiting) in listed, listed
        assert not {str(held), str(later), str(after)} & set(listed), listed
        r = c.run([own("sprio"), "-h", "-j", f"{held},{waiting}", "-o", "%i"])
        assert r.stdout.split() == [str(waiting)], r.stdout
    finally:
        c.run(["scancel", str(held), str(later), str(after), str(waiting), str(blocker)])


def test_sprio_needs_multifactor(cluster):
    r = cluster.run([own("sprio")], check=False)
    assert r.returncode == 1
    assert r.stderr.startswith("sprio: error: You are not running a supported priority plugin")


def test_a_bad_priority_key_names_its_line(tmp_path):
    conf = tmp_path / "muster.conf"
    conf.write_text("ClusterName=x\nPriorityType=priority/fancy\n")
    r = subprocess.run([str(BIN / "musterd"), "--validate", "--conf", str(conf)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert "muster.conf:2: PriorityType: invalid value 'priority/fancy'" in r.stderr


def test_an_operator_sets_a_jobs_priority(mcluster, users):
    c = mcluster
    blocker = fill(c, 30)
    c.wait_state(blocker, {"RUNNING"})
    a = c.sbatch("--wrap", "true")
    b = c.sbatch("--wrap", "true")
    try:
        c.run(["scontrol", "update", f"JobId={b}", "Priority=999999"])
        assert c.run(["squeue", "-h", "-j", str(b), "-o", "%Q"]).stdout.strip() == "999999"
        assert c.run([own("sprio"), "-h", "-j", str(b), "-o", "%Y"]).stdout.strip() == "999999"
        # Priority=0 holds the job, as Slurm does.
        c.run(["scontrol", "update", f"JobId={a}", "Priority=0"])
        assert c.run(["squeue", "-h", "-j", str(a), "-o", "%r"]).stdout.strip() == "JobHeldAdmin"
        if users:
            r = c.run(["scontrol", "update", f"JobId={b}", "Priority=5"], user=users[0], check=False)
            assert r.returncode == 1
    finally:
        c.run(["scancel", str(a), str(b), str(blocker)])


def test_an_unknown_reservation_is_refused(mcluster):
    r = mcluster.run(["sbatch", "--reservation=nosuch", "--wrap", "true"], check=False)
    assert r.returncode == 1
    assert r.stderr == "sbatch: error: Batch job submission failed: Requested reservation is invalid\n"
