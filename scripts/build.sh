#!/usr/bin/env bash
# Builds Muster into build/ (binaries and the Slurm-named links in build/bin/),
# installing the build dependencies (clang and libbpf for the cgroup v2
# device filter, among them) and what the tests run (pytest, munge,
# OpenMPI with mpi4py, PyTorch for torch.distributed, dpkg-dev and systemd
# for the package, Prometheus for its promtool, Alertmanager for its amtool)
# with apt when they are missing.
#   scripts/build.sh [--debug] [--programs] [extra cmake args]
# --programs builds only what running a cluster takes (muster, musterd,
# muster-agent, muster-step and the links: the muster_programs target), not
# the unit tests and benchmarks, and installs only what building them needs;
# scripts/quickstart.sh uses it. MUSTER_BUILD_DIR sets the build directory,
# MUSTER_JOBS the parallel jobs (2).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${MUSTER_BUILD_DIR:-$root/build}
build_type=RelWithDebInfo
programs_only=0
while (($#)); do
  case "$1" in
    --debug) build_type=Debug; shift ;;
    --programs) programs_only=1; shift ;;
    *) break ;;
  esac
done

need_pkgs=()
check() { dpkg -s "$1" >/dev/null 2>&1 || need_pkgs+=("$1"); }
# What building takes (GoogleTest too: the configuration finds it).
for p in g++ cmake ninja-build libboost-dev nlohmann-json3-dev libfmt-dev \
         libspdlog-dev libcli11-dev libgtest-dev libgmock-dev libsqlite3-dev libssl-dev \
         libmunge-dev libpmix-dev libhwloc-dev libbpf-dev zlib1g-dev clang pkg-config iproute2 procps; do
  check "$p"
done
# What the tests run.
if ((!programs_only)); then
  for p in munge python3-pytest openmpi-bin python3-mpi4py python3-torch dpkg-dev systemd \
           prometheus prometheus-alertmanager; do
    check "$p"
  done
fi
if ((${#need_pkgs[@]})); then
  echo "build.sh: installing ${need_pkgs[*]}" >&2
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" "$@" >/dev/null
if ((programs_only)); then
  echo "build.sh: building muster, musterd, muster-agent and muster-step in $build_dir" >&2
  cmake --build "$build_dir" -j "${MUSTER_JOBS:-2}" --target muster_programs
else
  cmake --build "$build_dir" -j "${MUSTER_JOBS:-2}"
fi
