// A job's trackable resources (TRES) and memory as Slurm counts them: what
// it asks for while it pends, what it holds once it has nodes. The rules
// live here once; scontrol's TRES=, squeue, sacct's records and a job's
// environment only format them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"

namespace muster::core {

// What the configuration gives a job that does not say: DefMemPerCPU (0 =
// unset) and the memory of a node of its partition (what --mem=0 gets, and
// a job without a memory request when DefMemPerCPU is unset).
struct MemoryDefaults {
  int64_t def_mem_per_cpu_mb = 0;
  int64_t node_memory_mb = 0;
};

// Memory per CPU when the job's memory is stated that way: --mem-per-cpu,
// or DefMemPerCPU for a job that asks for no memory. 0 when it is per node
// (--mem, --mem=0) or nothing sets it.
int64_t MemoryPerCpuMb(const JobRequest& req, int64_t def_mem_per_cpu_mb);

// The nodes a job asks for: its minimum, at least 1.
int RequestedNodes(const Job& job);

// The job's memory: the sum over its nodes once allocated, else what its
// request comes to (per CPU x CPUs, or per node x nodes).
int64_t JobMemoryTotalMb(const Job& job, const MemoryDefaults& defaults);

// The job's GPUs: allocated, else requested (per node x nodes, or per job).
int64_t JobGpuTotal(const Job& job);

// A weight per TRES (TRESBillingWeights, PriorityWeightTRES), by Slurm's
// TRES name in lower case: "cpu", "mem", "node", "gres/gpu". Memory's
// weight is per MB.
struct TresWeight {
  std::string name;
  double weight = 0;
};

// Parses "CPU=1.0,Mem=0.25G,GRES/gpu=2.0" (names in any case; a memory
// weight may carry a K, M, G or T suffix: per that much memory, else per
// MB). Errors name the item: "Foo=1: unknown TRES (expected CPU, Mem,
// Node or GRES/<name>)".
util::Result<std::vector<TresWeight>> ParseTresWeights(std::string_view text);

struct Tres {
  int64_t cpus = 0;
  int64_t mem_mb = 0;
  int64_t nodes = 0;
  // Without TRESBillingWeights Slurm bills one unit per CPU.
  int64_t billing = 0;
  int64_t gpus = 0;
};
Tres JobTres(const Job& job, const MemoryDefaults& defaults);

// What a job is charged per second (TRESBillingWeights): the sum of each
// weight times the job's amount of that TRES; its CPUs when there are no
// weights. Weights of GRES other than gpu count nothing (Tres keeps none).
double BillingUnits(const Tres& tres, const std::vector<TresWeight>& weights);

// "cpu=4,mem=4000M,node=2,billing=4[,gres/gpu=N]": Slurm's TRES id order,
// as scontrol's TRES= shows it; memory as util::FormatMemoryMb writes it.
std::string FormatTres(const Tres& tres);

}  // namespace muster::core
