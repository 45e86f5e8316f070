// Test-only builders for the model types, so a test says what matters:
//   MakeNode("gpu01").Cpus(32).Mem(64000).Gpus("h100", 8).Features({"h100"})
//   MakeJob(7).Partition("train").Gpus(4).Cpus(8)
//   MakePartition("short").Nodes({"gpu01", "gpu02"})
// and a ClusterFixture that owns configuration, nodes and jobs and runs a
// scheduling pass over them. Header-only; not for production code.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/job.h"
#include "core/node.h"
#include "core/partition.h"

namespace muster::testing {

// A registered, idle node: 1 CPU and 1000 MB unless told otherwise.
class NodeBuilder {
 public:
  explicit NodeBuilder(std::string name) {
    node_.config.name = std::move(name);
    node_.config.cpus = 1;
    node_.config.real_memory_mb = 1000;
    node_.registered = true;
  }
  NodeBuilder& Cpus(int n) {
    node_.config.cpus = n;
    return *this;
  }
  NodeBuilder& Mem(int64_t mb) {
    node_.config.real_memory_mb = mb;
    return *this;
  }
  // Adds a "gpu" gres entry (type may be ""); call twice for mixed types.
  NodeBuilder& Gpus(std::string type, int64_t count) {
    node_.config.gres.push_back(core::GresSpec{"gpu", std::move(type), count, {}, {}});
    node_.gpu_used.resize(node_.gpu_used.size() + static_cast<size_t>(count), false);
    return *this;
  }
  NodeBuilder& Gres(std::string name, std::string type, int64_t count) {
    node_.config.gres.push_back(core::GresSpec{std::move(name), std::move(type), count, {}, {}});
    return *this;
  }
  NodeBuilder& Features(std::vector<std::string> f) {
    node_.config.features = std::move(f);
    return *this;
  }
  NodeBuilder& Weight(int w) {
    node_.config.weight = w;
    return *this;
  }
  NodeBuilder& State(core::NodeInitialState s) {
    node_.config.initial_state = s;
    return *this;
  }
  NodeBuilder& Down() {
    node_.down = true;
    return *this;
  }
  NodeBuilder& Drain() {
    node_.drain = true;
    return *this;
  }
  NodeBuilder& Unregistered() {
    node_.registered = false;
    return *this;
  }
  // Live use: as if jobs were running there.
  NodeBuilder& AllocCpus(int n) {
    node_.alloc_cpus = n;
    node_.running_jobs = 1;
    return *this;
  }
  NodeBuilder& AllocMem(int64_t mb) {
    node_.alloc_mem_mb = mb;
    node_.running_jobs = 1;
    return *this;
  }
  NodeBuilder& UseGpu(int index) {
    if (node_.gpu_used.size() <= static_cast<size_t>(index)) node_.gpu_used.resize(index + 1);
    node_.gpu_used[index] = true;
    node_.running_jobs = 1;
    return *this;
  }

  core::Node Build() const { return node_; }
  operator core::Node() const { return node_; }  // NOLINT: builder

 private:
  core::Node node_;
};
inline NodeBuilder MakeNode(std::string name) { return NodeBuilder(std::move(name)); }

// A pending job of one task, 1 CPU, in partition "p" unless told otherwise.
class JobBuilder {
 public:
  explicit JobBuilder(core::JobId id) {
    job_.id = id;
    job_.partition = "p";
    job_.req.partition = "p";
    job_.req.name = "job" + std::to_string(id);
  }
  JobBuilder& Id(core::JobId id) {
    job_.id = id;
    return *this;
  }
  JobBuilder& Partition(std::string p) {
    job_.partition = p;
    job_.req.partition = std::move(p);
    return *this;
  }
  JobBuilder& Cpus(int cpus_per_task) {
    job_.req.cpus_per_task = cpus_per_task;
    job_.req.cpus_per_task_set = true;
    return *this;
  }
  JobBuilder& Nodes(int n, int max = 0) {
    job_.req.min_nodes = n;
    job_.req.max_nodes = max;
    return *this;
  }
  JobBuilder& Tasks(int n) {
    job_.req.ntasks = n;
    return *this;
  }
  JobBuilder& TasksPerNode(int n) {
    job_.req.ntasks_per_node = n;
    return *this;
  }
  JobBuilder& Mem(int64_t mb) {
    job_.req.mem_per_node_mb = mb;
    return *this;
  }
  JobBuilder& MemWholeNode() {
    job_.req.mem_whole_node = true;
    return *this;
  }
  JobBuilder& MemPerCpu(int64_t mb) {
    job_.req.mem_per_cpu_mb = mb;
    return *this;
  }
  JobBuilder& Reservation(std::string name) {
    job_.req.reservation = std::move(name);
    return *this;
  }
  JobBuilder& CpusPerGpu(int n) {
    job_.req.cpus_per_gpu = n;
    return *this;
  }
  JobBuilder& MemPerGpu(int64_t mb) {
    job_.req.mem_per_gpu_mb = mb;
    return *this;
  }
  // --gres=gpu[:type]:n (per node).
  JobBuilder& Gpus(int64_t n, std::string type = "") {
    job_.req.gres.push_back(core::GresRequest{"gpu", std::move(type), n, false});
    return *this;
  }
  // --gpus=[type:]n (per job).
  JobBuilder& GpusPerJob(int64_t n, std::string type = "") {
    job_.req.gres.push_back(core::GresRequest{"gpu", std::move(type), n, true});
    return *this;
  }
  JobBuilder& Gres(std::string name, std::string type, int64_t n) {
    job_.req.gres.push_back(core::GresRequest{std::move(name), std::move(type), n, false});
    return *this;
  }
  JobBuilder& Exclusive() {
    job_.req.exclusive = true;
    return *this;
  }
  JobBuilder& Constraint(std::string c) {
    job_.req.constraint = std::move(c);
    return *this;
  }
  JobBuilder& Nodelist(std::string w) {
    job_.req.nodelist = std::move(w);
    return *this;
  }
  JobBuilder& Exclude(std::string x) {
    job_.req.exclude = std::move(x);
    return *this;
  }
  JobBuilder& Held() {
    job_.held = true;
    job_.req.hold = true;
    return *this;
  }
  JobBuilder& HeldByAdmin() {
    job_.held = true;
    job_.held_by_admin = true;
    return *this;
  }
  JobBuilder& Begin(int64_t t) {
    job_.req.begin_time = t;
    return *this;
  }
  // --switches=N[@wait] (wait -1: max_switch_wait), submitted at `submit`.
  JobBuilder& Switches(int n, int64_t wait, int64_t submit) {
    job_.req.switches = n;
    job_.req.switches_wait_s = wait;
    job_.submit_time = submit;
    return *this;
  }
  JobBuilder& Qos(std::string q) {
    job_.req.qos = std::move(q);
    return *this;
  }
  // The submitting user: uid and the name "u<uid>".
  JobBuilder& Uid(uint32_t uid) {
    job_.req.uid = uid;
    job_.req.user_name = "u" + std::to_string(uid);
    return *this;
  }
  // The priority the pass sees (the order is the test's own).
  JobBuilder& Priority(uint32_t p) {
    job_.priority = p;
    return *this;
  }
  JobBuilder& TimeLimit(int64_t s) {
    job_.time_limit_s = s;
    job_.req.time_limit_s = s;
    return *this;
  }

  // Component `offset` of heterogeneous job `first` of `size` components.
  JobBuilder& Het(core::JobId first, int offset, int size) {
    job_.het_job_id = first;
    job_.het_job_offset = offset;
    job_.het_job_size = size;
    return *this;
  }
  core::Job Build() const { return job_; }
  operator core::Job() const { return job_; }  // NOLINT: builder
  const core::JobRequest& req() const { return job_.req; }

 private:
  core::Job job_;
};
inline JobBuilder MakeJob(core::JobId id = 1) { return JobBuilder(id); }

class PartitionBuilder {
 public:
  explicit PartitionBuilder(std::string name) { part_.name = std::move(name); }
  PartitionBuilder& Nodes(std::vector<std::string> n) {
    part_.nodes = std::move(n);
    return *this;
  }
  PartitionBuilder& State(core::PartitionState s) {
    part_.state = s;
    return *this;
  }
  PartitionBuilder& MaxTime(int64_t s) {
    part_.max_time_s = s;
    return *this;
  }
  PartitionBuilder& MaxNodes(int n) {
    part_.max_nodes = n;
    return *this;
  }
  PartitionBuilder& Default() {
    part_.is_default = true;
    return *this;
  }
  core::Partition Build() const { return part_; }
  operator core::Partition() const { return part_; }  // NOLINT: builder

 private:
  core::Partition part_;
};
inline PartitionBuilder MakePartition(std::string name) {
  return PartitionBuilder(std::move(name));
}

// Owns a cluster for a scheduler test. Nodes added with AddNode join the
// configuration; partitions list node names (empty = every node, like
// Nodes=ALL, resolved when the snapshot is taken).
struct ClusterFixture {
  config::Config cfg;
  std::vector<core::Node> nodes;
  std::vector<core::Job> jobs;

  ClusterFixture& AddNode(core::Node n) {
    cfg.nodes.push_back(n.config);
    nodes.push_back(std::move(n));
    return *this;
  }
  ClusterFixture& AddPartition(core::Partition p) {
    cfg.partitions.push_back(std::move(p));
    return *this;
  }
  ClusterFixture& AddJob(core::Job j) {
    jobs.push_back(std::move(j));
    return *this;
  }
  // Fills empty partition node lists with all nodes.
  void ResolvePartitions() {
    for (auto& p : cfg.partitions) {
      if (!p.nodes.empty()) continue;
      for (const auto& n : cfg.nodes) p.nodes.push_back(n.name);
    }
  }
  core::Node* Node(const std::string& name) {
    for (auto& n : nodes) {
      if (n.config.name == name) return &n;
    }
    return nullptr;
  }
  std::vector<core::Node*> NodePtrs() {
    std::vector<core::Node*> v;
    for (auto& n : nodes) v.push_back(&n);
    return v;
  }
};

}  // namespace muster::testing
