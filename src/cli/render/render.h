// Rendering of Slurm's text outputs (squeue, sinfo, scontrol show) from the
// controller's live objects. Pure functions of (request, state, now): they
// run inside musterd so that squeue over 100,000 jobs costs one pass and no
// serialisation; the CLI parses options into a request (src/cli/args.h),
// sends it, prints the text. Request structs travel as JSON
// (ToJson/FromJson).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "core/job.h"
#include "core/node.h"
#include "store/records.h"
#include "util/status.h"
#include "util/user_db.h"
#include "util/version.h"

namespace muster::render {

// Everything the renderers may need about the cluster at one moment.
// A running job step, as squeue -s and scontrol show step list it: the
// batch step ("batch") and srun's ("0", "1", ...).
struct StepInfo {
  uint32_t job_id = 0;
  std::string step_id;
  std::string name;
  int64_t start_time = 0;
  std::string nodelist;
  int nodes = 0;
  int cpus = 0;
  int tasks = 0;
  std::string tres;        // "cpu=2,mem=2000M,node=2"; empty = (null)
  std::string srun_host;   // empty = (null)
  int srun_pid = 0;
};

struct ClusterView {
  const config::Config* config = nullptr;
  std::vector<const core::Job*> jobs;    // job id order
  std::vector<const core::Node*> nodes;  // config order
  // Running steps, by job id, each job's batch step first (scontrol's order).
  std::vector<StepInfo> steps;
  // The user and group databases (musterd: util::SystemUserDb()); must be
  // set before rendering.
  const util::UserDb* users = nullptr;
  int64_t now = 0;
  uint32_t caller_uid = 0;
  bool caller_admin = false;  // root or AdminUsers
  // The caller's groups (primary first), for partitions' AllowGroups.
  std::vector<uint32_t> caller_groups;
  // Version= (scontrol show node), %v (sinfo) and SLURM_VERSION (show config):
  // the Slurm release Muster follows, as `-V` prints it first.
  std::string version = std::string(util::SlurmVersion());
  int64_t ctld_start_time = 0;  // BOOT_TIME in `scontrol show config`; 0 = Unknown
  // Arch= and OS= of `scontrol show node`; empty = this host's uname(2).
  std::string arch;
  std::string os;
};

// ---- squeue ----
struct SqueueRequest {
  std::vector<std::string> users;        // -u (names or uids), --me adds the caller
  std::vector<std::string> states;       // -t (long or short names, "all")
  std::vector<std::string> job_ids;      // -j
  std::vector<std::string> partitions;   // -p
  std::vector<std::string> nodes;        // -w (hostlist)
  std::vector<std::string> names;        // -n/--name
  std::vector<std::string> accounts;     // -A
  std::string format;                    // -o, or empty
  std::string format_long;               // -O, or empty
  bool noheader = false;                 // -h
  bool steps = false;                    // -s: list steps, not jobs
  std::vector<std::string> step_ids;     // -s's value ("12.0", "12")
  bool long_view = false;                // -l
  bool start = false;                    // --start
  bool only_job_state = false;           // --only-job-state
  bool me = false;
  std::string sort;                      // -S; empty = Slurm's default "P,t,-p" ("S" with --start)
  std::vector<std::string> clusters;     // -M: must name this cluster or "all"
  std::vector<std::string> qos;          // -q
  std::vector<std::string> reservations; // -R
  std::vector<std::string> licenses;     // -L (Muster has no licenses: matches no job)
  int iterate_s = 0;                     // -i; the CLI repeats the request, the daemon ignores it
  bool array_unfold = false;             // -r/--array: one line per pending array task

  // Filled by cli::ParseSqueueArgs for the CLI; not sent to the daemon.
  bool help = false;                     // --help
  bool usage = false;                    // --usage
  bool version = false;                  // -V/--version
  // Non-fatal diagnostics squeue prints to stderr before its output, each a
  // full line without its newline ("squeue: error: Invalid user: bob").
  // Some end in "\n" where Slurm prints an empty line after them.
  std::vector<std::string> warnings;
};
// The JSON carries every filter/format field (not help/usage/version/warnings).
nlohmann::json ToJson(const SqueueRequest& r);
util::Result<SqueueRequest> SqueueRequestFromJson(const nlohmann::json& j);
// squeue 22.05's formats: the default, -l, --start, and --only-job-state
// (newer than 22.05; without -o Muster prints id/state pairs).
inline constexpr std::string_view kSqueueDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
inline constexpr std::string_view kSqueueLongFormat = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
inline constexpr std::string_view kSqueueStartFormat =
    "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";
inline constexpr std::string_view kSqueueOnlyJobStateFormat = "%.18i %.8T";
// What squeue's arguments (src/cli/squeue_args.cc) check before a request
// leaves, with the view's own tables. -t's states: ok, or squeue's lines
// naming the valid ones.
util::Status CheckSqueueStates(const std::vector<std::string>& states);
// squeue's warnings about the bad specifications of the request's -o
// letters or -O names (the columns are left out).
void AddSqueueFormatWarnings(const SqueueRequest& req, std::vector<std::string>* warnings);
// -S: squeue's warning for 'b', its error for a letter it does not sort by.
util::Status CheckSqueueSort(std::string_view spec, std::vector<std::string>* warnings);
// squeue's stdout for the jobs of `view` that pass the request's filters.
// Errors are squeue's messages (complete stderr text, as src/cli/args.h's) (unknown -w node, unknown -M
// cluster, "slurm_load_jobs error: Invalid job id specified" when a single
// -j id names no job in the view).
// Unknown -u users are squeue's warnings, appended to *warnings when given:
// lines for stderr, each without its newline (as SqueueRequest::warnings).
util::Result<std::string> RenderSqueue(const SqueueRequest& req, const ClusterView& view,
                                       std::vector<std::string>* warnings = nullptr);
inline constexpr char kSqueueStepsFormat[] = "%.15i %.8j %.9P %.8u %.9M %N";
// squeue -s: the running steps (default format kSqueueStepsFormat; -o
// takes those letters), each job's numbered steps before its
// batch step, as Slurm 22.05 lists them.
std::string RenderSqueueSteps(const SqueueRequest& req, const ClusterView& view);
// scontrol show step [JOB[.STEP]]: Slurm 22.05's records; an unknown job
// is "slurm_get_job_steps error: Invalid job id specified".
util::Result<std::string> RenderShowSteps(const std::string& name, const ClusterView& view);

// The `scontrol show job` record of one job, Slurm 22.05's layout: lines
// indented three spaces, the record ending `Power=\n   \n\n` (so records
// are separated by an empty line), or with `one_liner` (-o) all fields on
// one line ending " \n". `details` (-d) adds DerivedExitCode and the per-node allocation
// lines (JOB_GRES=, Nodes= CPU_IDs= Mem= GRES=). Records concatenate as
// scontrol prints them.
std::string RenderJobRecord(const core::Job& job, const ClusterView& view, bool one_liner,
                            bool details);

// ---- sinfo ----
struct SinfoRequest {
  bool node_view = false;    // -N
  bool long_view = false;    // -l
  bool summarize = false;    // -s
  bool reasons = false;      // -R
  bool noheader = false;     // -h
  bool all = false;          // -a
  std::string format;        // -o
  std::string format_long;   // -O
  std::vector<std::string> partitions;  // -p
  // -t, split at commas; a token may join states with '&' (all must hold).
  std::vector<std::string> states;
  std::string nodes;                    // -n hostlist
  bool exact = false;        // -e
  bool dead = false;         // -d
  bool responding = false;   // -r
  std::string sort;          // -S, empty = "#P,-t" (or "N" with -N)
  int iterate_s = 0;         // -i; the CLI repeats the request
  bool help = false;         // --help/--usage: the CLI prints SinfoUsage()
  bool version = false;      // -V/--version: the CLI prints its version
  // -T/--reservation: the reservations instead (every other option but -h,
  // -l and -i is ignored, as by sinfo); the CLI renders them
  // (RenderSinfoReservations) from GET /v1/reservations.
  bool reservation = false;
};
nlohmann::json ToJson(const SinfoRequest& r);
util::Result<SinfoRequest> SinfoRequestFromJson(const nlohmann::json& j);
// What sinfo's arguments (src/cli/sinfo_args.cc) check before a request
// leaves: -t's states and -O's fields, with sinfo's messages.
util::Status CheckSinfoStates(const std::vector<std::string>& states);
util::Status CheckSinfoFormatLong(std::string_view format);
// Errors carry sinfo's stderr text (e.g. a bad -t state); an unknown -p
// partition is not an error: sinfo prints only the header.
util::Result<std::string> RenderSinfo(const SinfoRequest& req, const ClusterView& view);
// sinfo -T: `list` is GET /v1/reservations' "reservations" (objects with
// name, start, end, nodes and state), in creation order. Slurm 22.05's
// table (RESV_NAME STATE START_TIME END_TIME DURATION NODELIST), with -l
// the date line above it, "No reservations in the system" for none.
std::string RenderSinfoReservations(const nlohmann::json& list, bool noheader, bool long_view,
                                    int64_t now);

// ---- scontrol show ----
// `what` is job, node, partition or config; `name` narrows to one (empty = all).
// `one_liner` is scontrol -o; `details` is -d/-dd.
struct ShowRequest {
  std::string what;
  std::string name;
  bool one_liner = false;
  bool details = false;
  bool all = false;  // -a: hidden partitions and those closed to the caller too
};
nlohmann::json ToJson(const ShowRequest& r);
util::Result<ShowRequest> ShowRequestFromJson(const nlohmann::json& j);
// Errors carry scontrol's stderr text: "slurm_load_jobs error: Invalid job id
// specified", "Node x not found", "Partition x not found".
util::Result<std::string> RenderShow(const ShowRequest& req, const ClusterView& view);

// GRES in use on a node as sinfo's GresUsed and `scontrol -d show node`
// print it: "gpu:h100:2(IDX:0-1)", "gpu:0" for a GresTypes entry the node
// lacks, "(null)" when there is nothing to list.
std::string NodeGresUsed(const core::Node& node, const config::Config& cfg);
// Node-name order of Slurm 22.05's node table (sinfo -N, scontrol show node):
// by prefix, then by the trailing number ("n9" before "n10").
bool NodeNameLess(const std::string& a, const std::string& b);

// ---- sacct, seff, sreport (accounting; sacct_render.cc, seff_render.cc,
// sreport_render.cc). Pure functions over store records: the daemon runs
// store::AccountingStore::Query(SacctQuery(req, ...)) and renders the result.
struct SacctRequest {
  std::vector<std::string> job_ids;     // -j: "N", "N_T", "N.batch", "N.0"
  std::vector<std::string> users;       // -u (names or uids)
  std::vector<std::string> accounts;    // -A
  std::vector<std::string> partitions;  // -r
  std::vector<std::string> names;       // --name
  std::vector<std::string> states;      // -s (short or long names)
  std::vector<std::string> qos;         // -q
  std::vector<std::string> nodelist;    // -N: jobs that ran on any of these nodes (hostlists)
  std::vector<std::string> groups;      // -g (names or gids)
  std::string nnodes;                   // -i: min[-max] nodes
  std::string ncpus;                    // -I: min[-max] CPUs
  bool noconvert = false;               // --noconvert: memory in bytes
  std::string start;                    // -S as typed, resolved against `now` when rendering
  std::string end;                      // -E as typed
  bool all_users = false;               // -a
  bool allocations = false;             // -X
  bool duplicates = false;              // -D: every run of a requeued job
  bool parsable = false;                // -p
  bool parsable2 = false;               // -P
  bool noheader = false;                // -n
  bool json = false;                    // --json
  // The field list, resolved by ParseSacctArgs from -o/-l/-b or the default
  // "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode".
  std::string format = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";
  // CLI only, not sent: --help, --usage, -e/--helpformat, -V/--version,
  // and the warnings of options without effect (-L, -M).
  std::vector<std::string> warnings;
  bool help = false;
  bool usage = false;
  bool helpformat = false;
  bool version = false;
};
nlohmann::json ToJson(const SacctRequest& r);
util::Result<SacctRequest> SacctRequestFromJson(const nlohmann::json& j);
// sacct's formats: the default, -b and -l.
inline constexpr std::string_view kSacctDefaultFormat =
    "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";
inline constexpr std::string_view kSacctBriefFormat = "JobID,State,ExitCode";
inline constexpr std::string_view kSacctLongFormat =
    "JobID,JobIDRaw,JobName,Partition,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,"
    "MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,MaxPages,MaxPagesNode,MaxPagesTask,AvePages,"
    "MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,AllocCPUS,Elapsed,State,ExitCode,"
    "AveCPUFreq,ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ReqMem,ConsumedEnergy,"
    "MaxDiskRead,MaxDiskReadNode,MaxDiskReadTask,AveDiskRead,MaxDiskWrite,"
    "MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,ReqTRES,AllocTRES,TRESUsageInAve,"
    "TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,TRESUsageInMin,"
    "TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,TRESUsageOutMax,"
    "TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutAve,TRESUsageOutTot";
// What sacct's arguments (src/cli/sacct_args.cc) check before a request
// leaves: -o's fields, -s's states, -S/-E's times and -j's ids, with
// sacct's messages ("sacct: error: Invalid field requested: \"Bogus\"").
util::Status CheckSacctRequest(const SacctRequest& req);
// Slurm's time forms for -S/-E (and sreport start=/end=): now[+-N[units]],
// today/midnight/noon/tomorrow, YYYY-MM-DD[THH:MM[:SS]], HH:MM[:SS],
// MM/DD[/YY], MMDD[YY], Unix seconds; local time.
util::Result<int64_t> ParseSlurmTime(std::string_view text, int64_t now);
// The store query a request implies: ids, users (default: the caller unless
// root/admin, -a, -u or -j), accounts, partitions, names and the time window
// (default: midnight today to now; none with -j; with -s and no -E the window
// ends at its start, and without -S starts now). -u names are looked up in
// `users`.
store::AccountingQuery SacctQuery(const SacctRequest& req, const util::UserDb& users, int64_t now,
                                  uint32_t caller_uid, bool is_admin);
// -u's users must all exist, as in Slurm 22.05, whose sacct prints nothing
// but "sacct: error: Invalid user id: X" (and fails) for the first unknown
// name or a uid without a passwd entry. RenderSacct checks it first.
util::Status CheckSacctUsers(const SacctRequest& req, const util::UserDb& users);
// sacct's stdout. Applies every filter of SacctQuery again (any superset of
// the matching records may be passed) plus -s states and -j step ids;
// `steps` may hold steps of any job. Errors are sacct's messages.
util::Result<std::string> RenderSacct(const SacctRequest& req, const util::UserDb& users,
                                      const std::vector<store::JobRecord>& jobs,
                                      const std::vector<store::StepRecord>& steps, int64_t now,
                                      uint32_t caller_uid, bool is_admin);
// One job of `sacct --json` (dbv0.0.38 shape, the main fields).
nlohmann::json SacctJobJson(const store::JobRecord& job,
                            const std::vector<const store::StepRecord*>& steps, int64_t now);
// sacct's value formats: Elapsed/CPUTime "00:00:02", "1-02:03:04";
// TotalCPU "00:00.003" (MM:SS.mmm below an hour); MaxRSS "322132K", "1G"
// (a larger unit only when it divides evenly, as sacct 22.05 printed it).
std::string SacctElapsed(int64_t seconds);
// sacct -e/--helpformat: every field sacct -o takes.
std::string SacctHelpFormat();
std::string SacctCpuTime(int64_t ms);
std::string SacctKiloBytes(int64_t kb);

// seff's stdout for one job (contrib/seff layout): Job ID, Cluster,
// User/Group, State (exit code), Cores or Nodes/Cores per node, CPU
// Utilized/Efficiency against elapsed x CPUs, wall-clock time, Memory
// Utilized (the steps' MaxRSS) and Efficiency against ReqMem. `steps` are
// the job's steps (others are ignored); `now` ends a running job's wall time.
std::string RenderSeff(const store::JobRecord& job, const std::vector<store::StepRecord>& steps,
                       int64_t now);

// ---- sreport ----
struct SreportRequest {
  // "cluster Utilization", "cluster AccountUtilizationByUser",
  // "user TopUsage", or Muster's "job OverRequest" (jobs of the last `days`
  // days whose ReqMem exceeds 3x MaxRSS, by account).
  std::string report;
  std::string start;                 // start= as typed (default: yesterday midnight)
  std::string end;                   // end= as typed (default: today midnight)
  std::string time_format = "minutes";  // -t: minutes, hours, seconds, percent
  std::string tres = "cpu";          // --tres: cpu or gres/gpu
  bool parsable = false;             // -p
  bool parsable2 = false;            // -P
  bool noheader = false;             // -n
  int top_count = 10;                // TopCount=
  int days = 7;                      // days= (job OverRequest)
  std::vector<std::string> users;    // users=
  std::vector<std::string> accounts; // accounts=
  // CLI only: a diagnostic sreport prints to stderr, without a newline,
  // before the report ("unknown time format fortnight").
  std::string warning;
  bool version = false;  // CLI only: -V/--version, parsing stops there
  bool help = false;     // CLI only: -h/--help/--usage
};
nlohmann::json ToJson(const SreportRequest& r);
util::Result<SreportRequest> SreportRequestFromJson(const nlohmann::json& j);
// The report's window [start, end) resolved against `now`.
util::Result<std::pair<int64_t, int64_t>> SreportWindow(const SreportRequest& req, int64_t now);
// The store query for the report's jobs (and steps for OverRequest).
store::AccountingQuery SreportQuery(const SreportRequest& req, int64_t now);
// What sreport needs about the cluster: its name, capacity and the users'
// proper (GECOS) names (login when absent).
struct SreportCluster {
  std::string name;
  int64_t cpus = 0;  // total configured CPUs
  int64_t gpus = 0;  // total configured gres/gpu
  std::map<std::string, std::string> proper_names;
};
util::Result<std::string> RenderSreport(const SreportRequest& req,
                                        const std::vector<store::JobRecord>& jobs,
                                        const std::vector<store::StepRecord>& steps,
                                        const SreportCluster& cluster, int64_t now);

}  // namespace muster::render
