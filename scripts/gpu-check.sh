#!/usr/bin/env bash
# The check on a machine with a real NVIDIA GPU (the device tool's H100/H200):
# NVML detection, a --gres=gpu:1 job confined to exactly its GPU
# (cgroup.conf ConstrainDevices=yes: nvidia-smi inside the job lists it
# alone, and every other GPU's device file is refused), a job without GPUs
# seeing none, and real GPU metrics. Needs a built tree (build/bin) and the NVIDIA driver; prints each
# finding and exits non-zero at the first that fails.
#   scripts/gpu-check.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MUSTER_BIN:-$root/build/bin}
out=${1:-${OUT:-/tmp}}
dir=$(mktemp -d /tmp/muster-gpu-check.XXXXXX)
host=$(hostname -s)
gpus=$(nvidia-smi -L | wc -l)
model=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr 'A-Z ' 'a-z_')
echo "nvidia-smi: $gpus GPU(s), the first: $model"
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 2048 ))
cat > "$dir/muster.conf" <<CONF
ClusterName=gpucheck
SlurmctldHost=$host
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
JobAcctGatherFrequency=1
HealthCheckInterval=2
MusterHealthChecks=gpu_count,nvml,ecc,remapped_rows,xid
GresTypes=gpu
NodeName=$host CPUs=$cpus RealMemory=$mem Gres=gpu:$gpus State=UNKNOWN
PartitionName=p Nodes=$host Default=YES MaxTime=60 State=UP
CONF
echo "ConstrainDevices=yes" > "$dir/cgroup.conf"
export PATH=$bin:$PATH MUSTER_CONF=$dir/muster.conf
cleanup() { "$bin/muster" down --conf "$dir/muster.conf" >/dev/null 2>&1 || true; cp -r "$dir/ctld/log" "$out/gpu-check-logs" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
"$bin/muster" up --conf "$dir/muster.conf" >/dev/null
fail() { echo "FAIL: $*"; exit 1; }

echo "== detection (hwloc and NVML, at registration)"
show=$(scontrol show node "$host")
echo "$show" | grep -E "DetectedHardware|HardwareMismatch" || true
echo "$show" | grep -q "DetectedHardware=.*GPUs=$gpus(" || fail "NVML did not report $gpus GPU(s)"

echo "== a job with --gres=gpu:1 sees exactly its GPU (ConstrainDevices=yes)"
cd "$dir"
# open() of each GPU's device file from inside the job: ok or the errno.
probe='for d in /dev/nvidia[0-9]*; do python3 -c "import os,sys
try: os.close(os.open(sys.argv[1], os.O_RDONLY)); print(sys.argv[1], \"open\")
except OSError as e: print(sys.argv[1], e.strerror)" $d; done'
job=$(sbatch --parsable --gres=gpu:1 -t 1 -o "$dir/job.out" --wrap \
  "echo CUDA_VISIBLE_DEVICES=\$CUDA_VISIBLE_DEVICES SLURM_JOB_GPUS=\$SLURM_JOB_GPUS; nvidia-smi -L; $probe; srun nvidia-smi -L")
for _ in $(seq 1 100); do [[ -z "$(squeue -h -j "$job")" ]] && break; sleep 0.2; done
cat "$dir/job.out"
grep -q "^CUDA_VISIBLE_DEVICES=0 SLURM_JOB_GPUS=[0-9]*$" "$dir/job.out" || fail "CUDA_VISIBLE_DEVICES=0 expected"
[[ $(grep -c "^GPU " "$dir/job.out") -eq 2 ]] || fail "nvidia-smi in the job and its step should list its one GPU"
[[ $(grep -c " open$" "$dir/job.out") -eq 1 ]] || fail "the job should open its own GPU's file"
[[ $(grep -c " Operation not permitted$" "$dir/job.out") -eq $((gpus - 1)) ]] || fail "every other GPU should be refused"
echo "== a job without GPUs sees none"
job=$(sbatch --parsable -t 1 -o "$dir/none.out" --wrap "$probe; nvidia-smi -L || echo no-gpu")
for _ in $(seq 1 100); do [[ -z "$(squeue -h -j "$job")" ]] && break; sleep 0.2; done
cat "$dir/none.out"
[[ $(grep -c " Operation not permitted$" "$dir/none.out") -eq $gpus ]] || fail "every GPU should be refused"
grep -q "^GPU " "$dir/none.out" && fail "nvidia-smi lists a GPU to a job without one"

echo "== real GPU metrics"
m=$(curl -s --unix-socket "$dir/ctld/musterd.sock" http://x/metrics)
echo "$m" | grep -E "^muster_gpu_(utilization_ratio|temperature_celsius|power_watts|info)" | head -8
echo "$m" | grep -q 'muster_gpu_temperature_celsius{node="'"$host"'"' || fail "no GPU temperature"
echo "$m" | grep '^muster_gpu_' | grep -q 'emulated="true"' && fail "real GPUs marked emulated"
echo "$m" | promtool check metrics && echo "promtool: clean"
echo "== health"
sleep 3
scontrol show node "$host" | grep -E "HealthCheck|Reason" || true
echo "PASS"
