#include "stepd/pmix_server.h"

#include <pmix.h>
#include <pmix_server.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "util/log.h"
#include "util/strings.h"

namespace muster::stepd {
namespace {

// What libpmix's threads (its upcalls) and the launcher's loop share.
struct Shared {
  std::mutex mu;
  std::deque<std::string> contributions;  // this node's, not yet sent to srun
  struct Waiting {
    pmix_modex_cbfunc_t done;
    void* cbdata;
  };
  std::deque<Waiting> fences;  // entered here, not yet completed
  bool abort = false;
  int wakeup_fd = -1;

  void Wake() {
    const uint64_t one = 1;
    (void)!::write(wakeup_fd, &one, sizeof(one));
  }
};

Shared shared;

pmix_status_t FenceUpcall(const pmix_proc_t[], size_t, const pmix_info_t[], size_t, char* data,
                          size_t ndata, pmix_modex_cbfunc_t done, void* cbdata) {
  std::lock_guard lock(shared.mu);
  shared.contributions.emplace_back(data == nullptr ? "" : std::string(data, ndata));
  shared.fences.push_back({done, cbdata});
  shared.Wake();
  return PMIX_SUCCESS;
}

pmix_status_t AbortUpcall(const pmix_proc_t* proc, void*, int status, const char* msg,
                          pmix_proc_t[], size_t, pmix_op_cbfunc_t, void*) {
  util::LogWarn("task {} called PMIx_Abort ({}): {}", proc == nullptr ? -1 : static_cast<int>(proc->rank),
                status, msg == nullptr ? "" : msg);
  std::lock_guard lock(shared.mu);
  shared.abort = true;
  shared.Wake();
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t ConnectedUpcall(const pmix_proc_t*, void*, pmix_op_cbfunc_t, void*) {
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t FinalizedUpcall(const pmix_proc_t*, void*, pmix_op_cbfunc_t, void*) {
  return PMIX_OPERATION_SUCCEEDED;
}

// Every process's data reaches every node with the fences: nothing is
// asked for directly.
pmix_status_t DirectModexUpcall(const pmix_proc_t*, const pmix_info_t[], size_t,
                                pmix_modex_cbfunc_t, void*) {
  return PMIX_ERR_NOT_SUPPORTED;
}

void ReleaseFenceData(void* data) { std::free(data); }

// Waits for one of libpmix's operation callbacks.
struct OpWait {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t status = PMIX_SUCCESS;

  static void Done(pmix_status_t status, void* cbdata) {
    auto* w = static_cast<OpWait*>(cbdata);
    std::lock_guard lock(w->mu);
    w->status = status;
    w->done = true;
    w->cv.notify_all();
  }
  pmix_status_t Wait() {
    std::unique_lock lock(mu);
    cv.wait(lock, [this] { return done; });
    return status;
  }
};

util::Status Failed(const char* what, pmix_status_t rc) {
  return util::Unavailable(fmt::format("PMIx: {}: {}", what, PMIx_Error_string(rc)));
}

}  // namespace

util::Result<std::unique_ptr<PmixServer>> PmixServer::Start(const PmixLayout& layout) {
  std::unique_ptr<PmixServer> server(new PmixServer);
  server->layout_ = layout;
  // Its rendezvous files, which the tasks (the job's user) must reach.
  server->tmpdir_ = fmt::format("/tmp/muster-pmix-{}-{}", layout.nspace, ::getpid());
  std::error_code ec;
  std::filesystem::create_directories(server->tmpdir_, ec);
  if (ec) return util::Unavailable("PMIx: cannot create " + server->tmpdir_ + ": " + ec.message());
  ::chmod(server->tmpdir_.c_str(), 0755);
  server->wakeup_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  shared.wakeup_fd = server->wakeup_fd_;

  pmix_server_module_t module{};
  module.client_connected = ConnectedUpcall;
  module.client_finalized = FinalizedUpcall;
  module.abort = AbortUpcall;
  module.fence_nb = FenceUpcall;
  module.direct_modex = DirectModexUpcall;
  pmix_info_t* init = nullptr;
  PMIX_INFO_CREATE(init, 2);
  PMIX_INFO_LOAD(&init[0], PMIX_SERVER_TMPDIR, server->tmpdir_.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&init[1], PMIX_SYSTEM_TMPDIR, server->tmpdir_.c_str(), PMIX_STRING);
  pmix_status_t rc = PMIx_server_init(&module, init, 2);
  PMIX_INFO_FREE(init, 2);
  if (rc != PMIX_SUCCESS) return Failed("server init", rc);

  // The job as every node sees it: its size, its nodes and which ranks
  // each holds; then each rank's place.
  const auto& me = layout.ranks.at(layout.node_index);
  uint32_t total = 0;
  std::string node_names, ppn;
  for (size_t n = 0; n < layout.nodes.size(); ++n) {
    total += static_cast<uint32_t>(layout.ranks[n].size());
    node_names += (n ? "," : "") + layout.nodes[n];
    ppn += (n ? ";" : "") + util::JoinInts(layout.ranks[n]);
  }
  char* node_map = nullptr;
  char* proc_map = nullptr;
  if ((rc = PMIx_generate_regex(node_names.c_str(), &node_map)) != PMIX_SUCCESS) {
    return Failed("node map", rc);
  }
  if ((rc = PMIx_generate_ppn(ppn.c_str(), &proc_map)) != PMIX_SUCCESS) {
    return Failed("proc map", rc);
  }
  const uint32_t local = static_cast<uint32_t>(me.size());
  const uint32_t nnodes = static_cast<uint32_t>(layout.nodes.size());
  const pmix_rank_t leader = me.empty() ? 0 : static_cast<pmix_rank_t>(me.front());
  const uint32_t appnum = 0;
  const std::string peers = util::JoinInts(me);
  const size_t njob = 11;
  pmix_info_t* info = nullptr;
  PMIX_INFO_CREATE(info, njob + total);
  PMIX_INFO_LOAD(&info[0], PMIX_UNIV_SIZE, &total, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[1], PMIX_JOB_SIZE, &total, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[2], PMIX_MAX_PROCS, &total, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[3], PMIX_JOBID, layout.nspace.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&info[4], PMIX_NODE_MAP, node_map, PMIX_REGEX);
  PMIX_INFO_LOAD(&info[5], PMIX_PROC_MAP, proc_map, PMIX_REGEX);
  PMIX_INFO_LOAD(&info[6], PMIX_NUM_NODES, &nnodes, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[7], PMIX_LOCAL_SIZE, &local, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[8], PMIX_NODE_SIZE, &local, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[9], PMIX_LOCAL_PEERS, peers.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&info[10], PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
  std::free(node_map);
  std::free(proc_map);
  size_t k = njob;
  for (size_t n = 0; n < layout.nodes.size(); ++n) {
    const uint32_t nodeid = static_cast<uint32_t>(n);
    for (size_t local_id = 0; local_id < layout.ranks[n].size(); ++local_id) {
      const pmix_rank_t rank = static_cast<pmix_rank_t>(layout.ranks[n][local_id]);
      const uint16_t lrank = static_cast<uint16_t>(local_id);
      pmix_data_array_t* proc = nullptr;
      PMIX_DATA_ARRAY_CREATE(proc, 6, PMIX_INFO);
      auto* p = static_cast<pmix_info_t*>(proc->array);
      PMIX_INFO_LOAD(&p[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
      PMIX_INFO_LOAD(&p[1], PMIX_APPNUM, &appnum, PMIX_UINT32);
      PMIX_INFO_LOAD(&p[2], PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
      PMIX_INFO_LOAD(&p[3], PMIX_NODE_RANK, &lrank, PMIX_UINT16);
      PMIX_INFO_LOAD(&p[4], PMIX_NODEID, &nodeid, PMIX_UINT32);
      PMIX_INFO_LOAD(&p[5], PMIX_HOSTNAME, layout.nodes[n].c_str(), PMIX_STRING);
      PMIX_INFO_LOAD(&info[k++], PMIX_PROC_DATA, proc, PMIX_DATA_ARRAY);
      PMIX_DATA_ARRAY_FREE(proc);
    }
  }
  OpWait registered;
  rc = PMIx_server_register_nspace(layout.nspace.c_str(), static_cast<int>(local), info, k,
                                   OpWait::Done, &registered);
  if (rc == PMIX_SUCCESS) rc = registered.Wait();
  PMIX_INFO_FREE(info, njob + total);
  if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) return Failed("register job", rc);
  for (int rank : me) {
    pmix_proc_t proc;
    PMIX_PROC_LOAD(&proc, layout.nspace.c_str(), static_cast<pmix_rank_t>(rank));
    OpWait client;
    rc = PMIx_server_register_client(&proc, layout.uid, layout.gid, nullptr, OpWait::Done, &client);
    if (rc == PMIX_SUCCESS) rc = client.Wait();
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) return Failed("register task", rc);
  }
  return server;
}

PmixServer::~PmixServer() {
  PMIx_server_finalize();
  if (wakeup_fd_ >= 0) ::close(wakeup_fd_);
  std::error_code ec;
  std::filesystem::remove_all(tmpdir_, ec);
}

util::Result<std::vector<std::string>> PmixServer::TaskEnvironment(int rank) const {
  pmix_proc_t proc;
  PMIX_PROC_LOAD(&proc, layout_.nspace.c_str(), static_cast<pmix_rank_t>(rank));
  char** env = nullptr;
  pmix_status_t rc = PMIx_server_setup_fork(&proc, &env);
  if (rc != PMIX_SUCCESS) return Failed("task environment", rc);
  std::vector<std::string> out;
  for (char** e = env; e != nullptr && *e != nullptr; ++e) {
    out.emplace_back(*e);
    std::free(*e);
  }
  std::free(env);
  return out;
}

std::optional<std::string> PmixServer::TakeContribution() {
  uint64_t count;
  (void)!::read(wakeup_fd_, &count, sizeof(count));
  std::lock_guard lock(shared.mu);
  if (shared.contributions.empty()) return std::nullopt;
  std::string data = std::move(shared.contributions.front());
  shared.contributions.pop_front();
  return data;
}

void PmixServer::CompleteFence(const std::string& all) {
  Shared::Waiting fence{};
  {
    std::lock_guard lock(shared.mu);
    if (shared.fences.empty()) return;
    fence = shared.fences.front();
    shared.fences.pop_front();
  }
  // libpmix reads it until it calls the release.
  char* copy = static_cast<char*>(std::malloc(all.size() + 1));
  std::memcpy(copy, all.data(), all.size());
  fence.done(PMIX_SUCCESS, copy, all.size(), fence.cbdata, ReleaseFenceData, copy);
}

bool PmixServer::TakeAbort() {
  std::lock_guard lock(shared.mu);
  return std::exchange(shared.abort, false);
}

}  // namespace muster::stepd
