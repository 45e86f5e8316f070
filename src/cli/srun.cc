// srun inside a batch job: runs a command as a job step. musterd allocates
// the step (id, tasks per node from the job's allocation); the tasks of the
// emulated nodes all live on this host, so srun starts them itself with
// posix_spawn and each task's SLURM_* identity, inside the batch job's
// process tree (so cancelling the job reaches them). Output streams through
// (or, with -l, line by line with the task's rank as prefix). The exit code
// is the highest task exit code.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "util/strings.h"

extern char** environ;

namespace muster::cli {

namespace {

struct Task {
  pid_t pid = 0;
  int rank = 0;
  int out_fd = -1;  // label mode only
  int err_fd = -1;
  std::string out_buf, err_buf;
};

void FlushLines(std::string& buf, int rank, FILE* to, bool final) {
  size_t pos;
  while ((pos = buf.find('\n')) != std::string::npos) {
    fprintf(to, "%d: %.*s\n", rank, static_cast<int>(pos), buf.data());
    buf.erase(0, pos + 1);
  }
  if (final && !buf.empty()) {
    fprintf(to, "%d: %s\n", rank, buf.c_str());
    buf.clear();
  }
  fflush(to);
}

std::string ExpandTaskPattern(const std::string& pattern, const std::string& job, int step,
                              int rank, int node_id, const std::string& node) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      out += pattern[i];
      continue;
    }
    char c = pattern[++i];
    switch (c) {
      case 'j': out += job; break;
      case 's': out += std::to_string(step); break;
      case 't': out += std::to_string(rank); break;
      case 'n': out += std::to_string(node_id); break;
      case 'N': out += node; break;
      case '%': out += '%'; break;
      default: out += '%'; out += c;
    }
  }
  return out;
}

}  // namespace

int SrunMain(const std::vector<std::string>& args) {
  int ntasks = 0, nodes = 0, per_node = 0;
  bool label = false, version = false;
  std::string output, error, job_name;
  auto num = [](int* f, const char* what) {
    return [f, what](const std::string& v) {
      auto n = util::ParseInt(v.substr(0, v.find('-')));
      if (!n.ok() || *n <= 0) return util::InvalidArgument(std::string("srun: error: Invalid ") + what);
      *f = static_cast<int>(*n);
      return util::Status::Ok();
    };
  };
  auto ignore = [](const std::string&) { return util::Status::Ok(); };
  auto str = [](std::string* f) {
    return [f](const std::string& v) {
      *f = v;
      return util::Status::Ok();
    };
  };
  std::vector<OptionSpec> specs = {
      {'n', "ntasks", Arg::kRequired, num(&ntasks, "--ntasks")},
      {'N', "nodes", Arg::kRequired, num(&nodes, "node count")},
      {0, "ntasks-per-node", Arg::kRequired, num(&per_node, "--ntasks-per-node")},
      {'l', "label", Arg::kNone,
       [&label](const std::string&) {
         label = true;
         return util::Status::Ok();
       }},
      {'o', "output", Arg::kRequired, str(&output)},
      {'e', "error", Arg::kRequired, str(&error)},
      {'J', "job-name", Arg::kRequired, str(&job_name)},
      {'c', "cpus-per-task", Arg::kRequired, ignore},
      {'u', "unbuffered", Arg::kNone, ignore},
      {0, "cpu-bind", Arg::kRequired, ignore},
      {0, "cpu_bind", Arg::kRequired, ignore},
      {0, "mpi", Arg::kRequired, ignore},
      {0, "export", Arg::kRequired, ignore},
      {0, "gres", Arg::kRequired, ignore},
      {'G', "gpus", Arg::kRequired, ignore},
      {0, "gpus-per-node", Arg::kRequired, ignore},
      {0, "gpus-per-task", Arg::kRequired, ignore},
      {0, "mem", Arg::kRequired, ignore},
      {0, "mem-per-cpu", Arg::kRequired, ignore},
      {0, "exclusive", Arg::kOptional, ignore},
      {0, "overlap", Arg::kNone, ignore},
      {'K', "kill-on-bad-exit", Arg::kOptional, ignore},
      {'W', "wait", Arg::kRequired, ignore},
      {'v', "verbose", Arg::kNone, ignore},
      {'V', "version", Arg::kNone,
       [&version](const std::string&) {
         version = true;
         return util::Status::Ok();
       }},
      {'Q', "quiet", Arg::kNone, ignore},
      {'m', "distribution", Arg::kRequired, ignore},
  };
  auto parsed = ParseOptions("srun", specs, args, true);
  if (!parsed.ok()) {
    std::cerr << parsed.status().message() << "\n";
    return 1;
  }
  if (version) return PrintVersion();
  if (parsed->positional.empty()) {
    PrintError("srun", "No command given to execute.");
    return 1;
  }
  const char* job_env = getenv("SLURM_JOB_ID");
  if (!job_env) {
    PrintError("srun", "srun outside a job allocation is not available in this Muster version; "
                       "submit with sbatch and call srun inside the script");
    return 1;
  }
  std::string job_id = job_env;
  auto client = Client::Connect();
  if (!client.ok()) {
    PrintError("srun", client.status().message());
    return 1;
  }
  std::string step_name = job_name.empty() ? parsed->positional.front() : job_name;
  step_name = step_name.substr(step_name.rfind('/') + 1);
  nlohmann::json body = {{"ntasks", ntasks}, {"nodes", nodes}, {"ntasks_per_node", per_node},
                         {"name", step_name}};
  auto resp = client->Post("/v1/jobs/" + job_id + "/steps", body);
  if (!resp.ok()) {
    PrintError("srun", resp.status().message());
    return 1;
  }
  if (resp->status != 201) {
    PrintError("srun", "Unable to create step for job " + job_id + ": " + ErrorText(*resp));
    return 1;
  }
  const auto& step = resp->body;
  int step_id = step.at("step_id").get<int>();
  int total = step.at("ntasks").get<int>();
  const auto& layout = step.at("layout");
  std::vector<std::string> tasks_per_node;
  for (const auto& n : layout) tasks_per_node.push_back(std::to_string(n.at("tasks").get<int>()));

  std::map<std::string, std::string> base;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) base[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  base["SLURM_STEP_ID"] = base["SLURM_STEPID"] = std::to_string(step_id);
  base["SLURM_NTASKS"] = base["SLURM_NPROCS"] = base["SLURM_STEP_NUM_TASKS"] = std::to_string(total);
  base["SLURM_STEP_NUM_NODES"] = std::to_string(layout.size());
  base["SLURM_STEP_NODELIST"] = step.at("nodelist").get<std::string>();
  base["SLURM_STEP_TASKS_PER_NODE"] = util::Join(tasks_per_node, ",");
  if (!job_name.empty()) base["SLURM_JOB_NAME"] = job_name;

  std::vector<char*> argv;
  for (const auto& a : parsed->positional) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  std::vector<Task> tasks;
  int node_id = 0;
  for (const auto& n : layout) {
    std::string node = n.at("node").get<std::string>();
    int first = n.at("first_task").get<int>();
    int count = n.at("tasks").get<int>();
    std::vector<std::string> gpus;
    for (const auto& g : n.at("gpu_indices")) gpus.push_back(std::to_string(g.get<int>()));
    for (int local = 0; local < count; ++local) {
      int rank = first + local;
      std::map<std::string, std::string> env = base;
      env["SLURM_PROCID"] = std::to_string(rank);
      env["SLURM_LOCALID"] = std::to_string(local);
      env["SLURM_NODEID"] = std::to_string(node_id);
      env["SLURMD_NODENAME"] = node;
      env["SLURM_CPUS_ON_NODE"] = std::to_string(n.at("cpus").get<int>());
      if (!gpus.empty()) {
        env["CUDA_VISIBLE_DEVICES"] = env["GPU_DEVICE_ORDINAL"] = util::Join(gpus, ",");
        env["SLURM_GPUS_ON_NODE"] = std::to_string(gpus.size());
      }
      std::vector<std::string> env_strings;
      for (auto& [k, v] : env) env_strings.push_back(k + "=" + v);
      std::vector<char*> envp;
      for (auto& s : env_strings) envp.push_back(s.data());
      envp.push_back(nullptr);

      posix_spawn_file_actions_t fa;
      posix_spawn_file_actions_init(&fa);
      Task t;
      t.rank = rank;
      int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
      std::string out_path, err_path;
      if (!output.empty()) {
        out_path = ExpandTaskPattern(output, job_id, step_id, rank, node_id, node);
        posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (error.empty()) posix_spawn_file_actions_adddup2(&fa, 1, 2);
      } else if (label) {
        if (pipe2(out_pipe, O_CLOEXEC) == 0) posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
      }
      if (!error.empty()) {
        err_path = ExpandTaskPattern(error, job_id, step_id, rank, node_id, node);
        posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      } else if (label && output.empty()) {
        if (pipe2(err_pipe, O_CLOEXEC) == 0) posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
      }
      int rc = posix_spawnp(&t.pid, argv[0], &fa, nullptr, argv.data(), envp.data());
      posix_spawn_file_actions_destroy(&fa);
      if (out_pipe[1] >= 0) close(out_pipe[1]);
      if (err_pipe[1] >= 0) close(err_pipe[1]);
      t.out_fd = out_pipe[0];
      t.err_fd = err_pipe[0];
      if (rc != 0) {
        std::cerr << "srun: error: " << node << ": task " << rank << ": Unable to exec command '"
                  << argv[0] << "': " << std::strerror(rc) << "\n";
        if (t.out_fd >= 0) close(t.out_fd);
        if (t.err_fd >= 0) close(t.err_fd);
        t.pid = -1;
      }
      tasks.push_back(std::move(t));
    }
    ++node_id;
  }

  // Relay labelled output until every pipe closes.
  if (label) {
    for (;;) {
      std::vector<pollfd> fds;
      std::vector<std::pair<Task*, bool>> owners;
      for (auto& t : tasks) {
        if (t.out_fd >= 0) { fds.push_back({t.out_fd, POLLIN, 0}); owners.push_back({&t, true}); }
        if (t.err_fd >= 0) { fds.push_back({t.err_fd, POLLIN, 0}); owners.push_back({&t, false}); }
      }
      if (fds.empty()) break;
      if (poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        auto [t, is_out] = owners[i];
        char buf[65536];
        ssize_t n = read(fds[i].fd, buf, sizeof(buf));
        std::string& acc = is_out ? t->out_buf : t->err_buf;
        FILE* to = is_out ? stdout : stderr;
        if (n > 0) {
          acc.append(buf, static_cast<size_t>(n));
          FlushLines(acc, t->rank, to, false);
        } else {
          FlushLines(acc, t->rank, to, true);
          close(fds[i].fd);
          (is_out ? t->out_fd : t->err_fd) = -1;
        }
      }
    }
  }

  int worst = 0;
  int worst_signal = 0;
  for (auto& t : tasks) {
    if (t.pid <= 0) {
      worst = std::max(worst, 2);
      continue;
    }
    int status = 0;
    while (waitpid(t.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) {
      int code = WEXITSTATUS(status);
      if (code != 0) {
        std::cerr << "srun: error: task " << t.rank << ": Exited with exit code " << code << "\n";
      }
      worst = std::max(worst, code);
    } else if (WIFSIGNALED(status)) {
      std::cerr << "srun: error: task " << t.rank << ": " << strsignal(WTERMSIG(status)) << "\n";
      worst = std::max(worst, 128 + WTERMSIG(status));
      worst_signal = WTERMSIG(status);
    }
  }
  // The step's end, for sacct; a failure here must not change srun's result.
  (void)client->Post("/v1/jobs/" + job_id + "/steps/" + std::to_string(step_id) + "/end",
                     {{"exit_code", worst_signal ? 0 : worst}, {"exit_signal", worst_signal}});
  return worst;
}

}  // namespace muster::cli
