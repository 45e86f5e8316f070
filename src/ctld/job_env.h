// The environment a batch job starts with: the submitter's variables as
// --export selected them, plus Slurm's SLURM_* variables, as real Slurm
// 22.05 sets them for the batch step on the first node of the allocation.
// Pure: a function of the job, the configuration and the user's variables.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "core/job.h"

namespace muster::ctld {

inline const std::vector<std::string> kNoMigUuids;

// Builds the batch step's environment. `user_env` is what sbatch sent
// ("K=V"); `conf_path` becomes SLURM_CONF. For the first component of a
// heterogeneous job, `het` is every component (SLURM_HET_SIZE and the
// SLURM_*_HET_GROUP_<n> variables); empty for any other job.
// `batch_mig_uuids` is the batch node's Node::mig_uuids.
std::vector<std::string> BuildBatchEnvironment(const core::Job& job, const config::Config& cfg,
                                               const std::vector<std::string>& user_env,
                                               const std::vector<const core::Job*>& het = {},
                                               const std::vector<std::string>& batch_mig_uuids = kNoMigUuids);

// What CUDA_VISIBLE_DEVICES calls each of `indices` (a job's GPUs on one
// node, in order): a MIG instance by its UUID (`mig_uuids`, the node's
// Node::mig_uuids), as CUDA names one; under ConstrainDevices (`confined`)
// the job sees only its own GPUs, which CUDA numbers from 0, so the k-th
// is "k", as in Slurm; else the GPU's index on its node.
std::vector<std::string> GpuVisibleNames(const std::vector<int>& indices, bool confined,
                                         const std::vector<std::string>& mig_uuids);

}  // namespace muster::ctld
