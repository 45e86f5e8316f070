#!/usr/bin/env bash
# Builds Muster's programs (not the tests: scripts/test.sh builds those),
# starts a local cluster of emulated GPU nodes (gpu[01-04]: 32 CPUs, 64 GB,
# 8 GPUs each; cpu[01-02]) under a state directory, runs the handbook's
# first three jobs and shows squeue, sinfo and their output.
#   scripts/quickstart.sh [STATE_DIR]      (default: ./muster-quickstart)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
state=$(realpath -m "${1:-$PWD/muster-quickstart}")
echo "== building Muster's programs"
"$root/scripts/build.sh" --programs
bin="${MUSTER_BUILD_DIR:-$root/build}/bin"
export PATH="$bin:$PATH"

echo "== starting the cluster in $state"
eval "$(muster up --state-dir "$state")"
echo "MUSTER_CONF=$MUSTER_CONF"
sinfo

work="$state/work"
mkdir -p "$work"
cd "$work"
cat > hello.sh <<'JOB'
#!/bin/bash
#SBATCH --job-name=hello
#SBATCH --output=hello-%j.out
#SBATCH --time=00:05:00
echo "Hello from $(hostname) as $SLURMD_NODENAME, job $SLURM_JOB_ID"
JOB
cat > preprocess.sh <<'JOB'
#!/bin/bash
#SBATCH --job-name=preprocess
#SBATCH --cpus-per-task=8
#SBATCH --mem=16G
#SBATCH --time=00:10:00
#SBATCH --output=%x-%j.out
echo "preprocessing on $SLURM_JOB_NODELIST with $SLURM_CPUS_ON_NODE CPUs and ${SLURM_MEM_PER_NODE}M"
sleep 1
echo "done"
JOB
cat > train.sh <<'JOB'
#!/bin/bash
#SBATCH --job-name=train
#SBATCH --partition=train
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=4
#SBATCH --mem=32G
#SBATCH --time=01:00:00
#SBATCH --output=%x-%j.out
echo "training on $SLURMD_NODENAME with GPU(s) CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
srun bash -c 'echo "task $SLURM_PROCID of $SLURM_NTASKS on $SLURMD_NODENAME"'
sleep 2
echo "epoch 1/1 finished"
JOB
ids=()
for s in hello.sh preprocess.sh train.sh; do
  id=$(sbatch --parsable "$s")
  echo "submitted $s as job $id"
  ids+=("$id")
done
echo "== squeue"
squeue
echo "== waiting for the jobs"
for _ in $(seq 1 600); do
  left=$(squeue -h -j "$(IFS=,; echo "${ids[*]}")" -t PD,R,CG | wc -l)
  [[ "$left" -eq 0 ]] && break
  sleep 0.1
done
echo "== squeue -t all"
squeue -t all
echo "== sinfo"
sinfo
for f in hello-*.out preprocess-*.out train-*.out; do
  echo "== $work/$f"
  cat "$f"
done
echo
echo "The cluster is still running. To use it from your shell:"
echo "  export PATH=$bin:\$PATH MUSTER_CONF=$MUSTER_CONF"
echo "Stop it with: $bin/muster down --conf $MUSTER_CONF"
