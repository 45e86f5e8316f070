"""sacctmgr's accounts, users and associations through the real commands:
enforcement at submission, fairshare shares, the commit question, and
storage across a restart of musterd."""

import pytest

from conftest import BIN, DEFAULT_CONF, make_cluster

ENFORCED = DEFAULT_CONF + """\
AccountingStorageEnforce=associations,limits
PriorityType=priority/multifactor
PriorityWeightFairshare=10000
PriorityWeightQOS=2000
"""

REFUSED = ("sbatch: error: Batch job submission failed: "
           "Invalid account or account/partition combination specified\n")


@pytest.fixture(scope="module")
def acluster():
    c = make_cluster(ENFORCED)
    try:
        yield c
    finally:
        c.teardown()


def sacctmgr(c, *args, user=None, check=True, input=None):
    """Muster's own sacctmgr, never a Slurm client's of the same name."""
    return c.run([str(BIN / "sacctmgr"), *args], user=user, check=check, input=input)


def assocs(c):
    out = sacctmgr(c, "-P", "-n", "list", "assoc", "format=account,user,share").stdout
    return [tuple(l.split("|")) for l in out.splitlines()]


def test_muster_up_seeds_roots_association_and_enforcement_holds(acluster, users):
    c = acluster
    # No setup: root's association exists, so root's jobs run.
    assert ("root", "root", "1") in assocs(c)
    job = c.sbatch("--wrap", "true")
    c.wait_done(job)
    assert c.run(["squeue", "-h", "-j", str(job), "-o", "%a"], check=False).stdout.strip() in ("", "root")
    r = c.run(["sbatch", "-A", "nosuch", "--wrap", "true"], check=False)
    assert r.returncode == 1 and r.stderr == REFUSED
    if not users:
        pytest.skip("needs root for a second user")
    r = c.run(["sbatch", "--wrap", "true"], user=users[0], check=False)
    assert r.returncode == 1 and r.stderr == REFUSED
    # An operator lets the user in; the job is charged to the default account.
    sacctmgr(c, "-i", "add", "account", "physics", "Description=Physics dept")
    r = sacctmgr(c, "-i", "add", "user", users[0], "Account=physics")
    assert f"  U = {users[0]:<9} A = physics    C = e2e       " in r.stdout.splitlines()
    job = c.sbatch("--wrap", "sleep 5", user=users[0])
    assert c.run(["squeue", "-h", "-j", str(job), "-o", "%a"]).stdout.strip() == "physics"
    c.run(["scancel", str(job)])
    # Users may look but not change.
    assert (("physics", users[0], "1")) in assocs(c)
    r = sacctmgr(c, "-i", "add", "account", "mine", user=users[0], check=False)
    assert r.returncode == 1
    assert "Your user doesn't have privilege to perform this action" in r.stderr
    assert all(a[0] != "mine" for a in assocs(c))


def test_sacctmgr_asks_before_it_commits(acluster):
    c = acluster
    r = sacctmgr(c, "add", "account", "maybe", input="n\n")
    assert r.returncode == 0
    assert "Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): " in r.stdout
    assert r.stdout.endswith(" Changes Discarded\n")
    assert all(a[0] != "maybe" for a in assocs(c))
    r = sacctmgr(c, "add", "account", "maybe", input="y\n")
    assert r.returncode == 0 and "Changes Discarded" not in r.stdout
    assert ("maybe", "", "1") in assocs(c)
    # Nothing to do is an error, as in Slurm.
    r = sacctmgr(c, "-i", "add", "account", "maybe", check=False)
    assert r.returncode == 1 and r.stdout == " Nothing new added.\n"


def test_shares_set_with_sacctmgr_drive_fairshare_and_survive_a_restart(acluster):
    c = acluster
    sacctmgr(c, "-i", "add", "account", "big", "Fairshare=300")
    sacctmgr(c, "-i", "add", "account", "small", "Fairshare=100")
    sacctmgr(c, "-i", "add", "user", "root", "Account=big,small")
    sacctmgr(c, "-i", "modify", "user", "where", "name=root", "account=small", "set", "fairshare=5")
    shares = {tuple(l.split("|")[:2]): l.split("|")
              for l in c.run([str(BIN / "sshare"), "-a", "-P", "-n"]).stdout.splitlines()}
    # Shares count against the siblings': everything directly under root.
    level = sum(int(v[2]) for k, v in shares.items()
                if k[0].startswith(" ") and not k[0].startswith("  "))
    assert shares[(" big", "")][2] == "300" and shares[(" small", "")][2] == "100"
    assert abs(float(shares[(" big", "")][3]) - 300 / level) < 1e-5, shares
    assert shares[("  small", "root")][2] == "5"
    before = assocs(c)
    c.down()
    c.up()
    assert assocs(c) == before
    assert ("small", "root", "5") in before
    # A deleted account takes its users' associations with it.
    r = sacctmgr(c, "-i", "delete", "account", "small")
    assert r.stdout == " Deleting accounts...\n  small\n"
    assert all(a[0] != "small" for a in assocs(c))


def test_a_qos_limits_each_user_and_says_which_limit(acluster, users):
    c = acluster
    r = sacctmgr(c, "-i", "add", "qos", "gpu1", "MaxJobsPerUser=1", "MaxSubmitJobsPerUser=3",
                 "Priority=100")
    assert r.stdout.splitlines()[:2] == [" Adding QOS(s)", "  gpu1"]
    assert sacctmgr(c, "-P", "-n", "list", "qos", "gpu1",
                    "format=name,priority,maxjobspu,maxsubmitpu").stdout == "gpu1|100|1|3\n"
    r = c.run(["sbatch", "--qos=nosuch", "--wrap", "true"], check=False)
    assert r.returncode == 1
    assert r.stderr == "sbatch: error: Batch job submission failed: Invalid qos specification\n"
    jobs = [c.sbatch("--qos=gpu1", "-t", "5", "--wrap", "sleep 30") for _ in range(3)]
    try:
        c.wait_state(jobs[0], {"RUNNING"})
        for j in jobs[1:]:
            fields = c.run(["squeue", "-h", "-j", str(j), "-O", "Reason:30,Explanation:200"]).stdout
            assert fields.split()[0] == "QOSMaxJobsPerUserLimit", fields
            assert "MaxJobsPerUser=1 in QOS gpu1" in fields, fields
        # The fourth is over MaxSubmitJobsPerUser: refused, naming the limit.
        r = c.run(["sbatch", "--qos=gpu1", "--wrap", "true"], check=False)
        assert r.returncode == 1
        lines = r.stderr.splitlines()
        assert lines[0] == "sbatch: error: QOSMaxSubmitJobPerUserLimit"
        assert lines[1] == ("sbatch: error: Batch job submission failed: Job violates accounting/QOS "
                            "policy (job submit limit, user's size and/or time limits)")
        assert "MaxSubmitJobsPerUser=3 in QOS gpu1" in lines[2]
        # The QOS's priority is its jobs' QOS factor (the only QOS with any).
        prio = c.run([str(BIN / "sprio"), "-h", "-j", str(jobs[1]), "-o", "%i %Q"]).stdout.split()
        assert prio == [str(jobs[1]), "2000"], prio
        if users:
            # Another user's job is not held by the first user's limit.
            sacctmgr(c, "-i", "add", "user", users[1], "Account=root")
            other = c.sbatch("--qos=gpu1", "-t", "5", "--wrap", "sleep 30", user=users[1])
            c.wait_state(other, {"RUNNING"})
            c.run(["scancel", str(other)])
        # Lifting the limit lets the rest run.
        sacctmgr(c, "-i", "modify", "qos", "gpu1", "set", "MaxJobsPerUser=-1")
        c.wait_state(jobs[2], {"RUNNING"}, timeout=30)
    finally:
        c.run(["scancel", *map(str, jobs)])


def test_account_limits_hold_jobs_and_refuse_submissions(acluster):
    c = acluster
    sacctmgr(c, "-i", "add", "account", "lab", "GrpTRES=gres/gpu=4", "MaxJobs=2")
    sacctmgr(c, "-i", "add", "user", "root", "Account=lab", "MaxSubmitJobs=4")
    listed = sacctmgr(c, "-P", "-n", "list", "assoc", "account=lab",
                      "format=account,user,grptres,maxjobs,maxsubmit").stdout.splitlines()
    assert listed == ["lab||gres/gpu=4|2|", "lab|root|||4"], listed
    jobs = [c.sbatch("-A", "lab", "--gpus=1", "-t", "5", "--wrap", "sleep 30") for _ in range(3)]
    jobs.append(c.sbatch("-A", "lab", "--gpus=3", "-t", "5", "--wrap", "sleep 30"))
    try:
        c.wait_state(jobs[1], {"RUNNING"})
        reason = c.run(["squeue", "-h", "-j", str(jobs[2]), "-O", "Reason:30,Explanation:200"]).stdout
        assert reason.split()[0] == "AssocMaxJobsLimit", reason
        assert "MaxJobs=2 in the association of root in account lab" in reason
        # A fifth is over the user's MaxSubmitJobs.
        r = c.run(["sbatch", "-A", "lab", "--wrap", "true"], check=False)
        assert r.returncode == 1
        assert r.stderr.splitlines()[0] == "sbatch: error: AssocMaxSubmitJobLimit"
        # Without MaxJobs the account's GPU budget holds the 3-GPU job:
        # 3 one-GPU jobs run and 3 more would pass 4.
        sacctmgr(c, "-i", "modify", "account", "lab", "set", "MaxJobs=-1")
        c.wait_state(jobs[2], {"RUNNING"}, timeout=30)
        reason = c.run(["squeue", "-h", "-j", str(jobs[3]), "-O", "Reason:30,Explanation:200"]).stdout
        assert reason.split()[0] == "AssocGrpGRES", reason
        assert "GrpTRES gres/gpu=4 in account lab; its running jobs hold 3" in reason
    finally:
        c.run(["scancel", *map(str, jobs)])
