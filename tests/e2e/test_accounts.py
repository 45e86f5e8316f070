"""sacctmgr's accounts, users and associations through the real commands:
enforcement at submission, fairshare shares, the commit question, and
storage across a restart of musterd."""

import pytest

from conftest import BIN, DEFAULT_CONF, make_cluster

ENFORCED = DEFAULT_CONF + """\
AccountingStorageEnforce=associations,limits
PriorityType=priority/multifactor
PriorityWeightFairshare=10000
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
