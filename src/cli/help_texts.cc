#include "cli/help_texts.h"

namespace muster::cli {

std::string ScancelHelp() {
  return R"(Usage: scancel [OPTIONS] [job_id[_array_id][.step_id]]
  -A, --account=account           only jobs of this account [not in Muster]
  -b, --batch                     the signal goes to the batch shell alone
  -f, --full                      the signal goes to the batch shell and every step
  -H, --hurry                     skip burst buffer stage-out [not in Muster]
  -i, --interactive               ask before cancelling each job
  -M, --clusters=names            the cluster (Muster: the one it talks to)
  -n, --name=job_name             only jobs of this name
      --me                        only your own jobs
  -p, --partition=partition       only jobs in this partition
  -Q, --quiet                     no warnings
  -q, --qos=qos                   only jobs of this QOS [not in Muster]
  -R, --reservation=reservation   only jobs in this reservation [not in Muster]
      --sibling=cluster_name      a federated job's sibling [not in Muster]
  -s, --signal=name | integer     send this signal instead of cancelling
  -t, --state=states              only jobs in these states (PENDING, RUNNING,
                                  SUSPENDED)
  -u, --user=user_name            only jobs of this user
  -V, --version                   print the release and exit
  -v, --verbose                   say what is done
  -w, --nodelist=nodes            only jobs on these nodes [not in Muster]
      --wckey=wckey               only jobs of this wckey [not in Muster]

Help options:
  --help                          this text
  --usage                         a short summary of the options
)";
}

std::string ScancelUsage() {
  return R"(Usage: scancel [-b] [-f] [-i] [-n job_name] [-p partition] [-Q]
               [-s signal | integer] [-t PENDING | RUNNING | SUSPENDED]
               [--usage] [-u user_name] [--me] [-V] [-v]
               [job_id[_array_id][.step_id]]
)";
}

std::string SacctHelp() {
  return R"(sacct [<OPTION>]
    Valid <OPTION> values are:
     -a, --allusers:
                   every user's jobs, not only yours
     -A, --accounts:
                   only jobs of these accounts (comma-separated)
         --array:
                   array tasks on rows of their own (the default here)
     -b, --brief:
                   JobID, State and ExitCode only
     -D, --duplicates:
                   every run of a requeued job, not only the last
     -e, --helpformat:
                   the fields --format takes
     -E, --endtime:
                   jobs that were running before this time
     -g, --gid, --group:
                   only jobs of these groups
     -h, --help:   this text
     -j, --jobs:
                   only these jobs or steps (job[_task][.step], comma-separated)
         --json:
                   the jobs as JSON
     -l, --long:
                   the long list of fields
     -L, --allclusters:
                   every cluster's jobs (Muster: the one it talks to)
     -M, --clusters:
                   these clusters' jobs (Muster: the one it talks to)
         --name:
                   only jobs of these names
     -n, --noheader:
                   no header lines
         --noconvert:
                   sizes in their base unit
     -N, --nodelist:
                   only jobs that ran on these nodes
     -o, --format:
                   the fields to print, comma-separated, Name%width for a width
     -p, --parsable:
                   '|' after every field
     -P, --parsable2:
                   '|' between fields
     -q, --qos:
                   only jobs of these QOS
     -r, --partition:
                   only jobs of these partitions
     -s, --state:
                   only jobs that were in these states in the window
     -S, --starttime:
                   jobs still running or eligible after this time (default:
                   midnight, unless -j is given)
     -T, --truncate:
                   start and end times cut to the window
     -u, --uid, --user:
                   only these users' jobs
         --usage:  a short summary
     -V, --version: the release
     -W, --wckeys:
                   only jobs of these wckeys
     -X, --allocations:
                   the jobs alone, not their steps
)";
}

std::string SacctUsage() { return "Usage: sacct [options]\n\tUse --help for help\n"; }

std::string SreportHelp() {
  return R"(sreport [<OPTION>] [<COMMAND>]
    Valid <OPTION> values are:
     -n or --noheader: no header lines
     -p or --parsable: '|' after every field
     -P or --parsable2: '|' between fields
     -t <time_format>: Seconds, Minutes, Hours, Percent (or SecPer, MinPer, HourPer)
     -T or --tres: the TRES to report, comma-separated, or ALL
     -V or --version: the release

    Valid <COMMAND> values are:
     cluster <REPORT> <OPTIONS>
     job <REPORT> <OPTIONS>
     user <REPORT> <OPTIONS>

  <REPORT> for each command:
     cluster - AccountUtilizationByUser, UserUtilizationByAccount, Utilization
     job     - SizesByAccount
     user    - TopUsage

  <OPTIONS> for every report:
             - Start=<time>     - the start of the period (default: yesterday 00:00)
             - End=<time>       - its end (default: today 00:00)
             - Format=<fields>  - the fields to print
     cluster - Accounts=<list>, Users=<list>, Tree
     job     - Accounts=<list>, Grouping=<sizes>, PrintJobCount, FlatView
     user    - Accounts=<list>, Users=<list>, TopCount=<n>, Group

  Times are HH:MM[:SS], MMDD[YY], MM/DD[/YY], YYYY-MM-DD[THH:MM[:SS]] or
  now[{+|-}count[seconds|minutes|hours|days|weeks]].
)";
}

std::string ScontrolHelp() {
  return R"(scontrol [<OPTION>] [<COMMAND>]
    Valid <OPTION> values are:
     -a, --all      show hidden partitions too
     -d, --details  more detail in "show"
     -h, --help     this text
     -o, --oneliner one record per line
     -Q, --quiet    print errors only
     -V, --version  the release

    Valid <COMMAND> values are:
     cancel_reboot <node_list>
                              forget reboots asked for and not yet under way
     create reservation <SPECIFICATIONS>
                              make a reservation
     delete reservation=<name>
                              remove a reservation
     help                     this text
     hold <job_list>          keep jobs from starting (operators: an admin hold)
     release <job_list>       let held jobs start
     reboot [ASAP] [nextstate=RESUME|DOWN] [reason=<reason>] <node_list>|ALL
                              reboot nodes with RebootProgram once they are
                              idle (ASAP: drain them meanwhile), check them
                              and return them in that state
     reconfigure              read the configuration again
     requeue <job_list>       put jobs back in the queue
     requeuehold <job_list>   put jobs back in the queue, held
     show <ENTITY> [<ID>]     the state of jobs, steps, nodes, partitions,
                              reservations, the configuration, or expand and
                              compress host lists
     top <job_list>           put your jobs first among your own
     uhold <job_list>         hold as their user
     update <SPECIFICATIONS>  change a job, node or reservation
     version                  the release

  <ENTITY> may be "config", "hostlist", "hostlistsorted", "hostnames",
       "job", "node", "partition", "reservation" or "step".

  <SPECIFICATIONS> are written as in the configuration file
  (JobId=12 TimeLimit=1:00:00, NodeName=gpu01 State=DRAIN Reason=...).
)";
}

}  // namespace muster::cli
