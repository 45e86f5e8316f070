#!/usr/bin/env bash
# Builds Muster into build/ (binaries and the Slurm-named links in build/bin/),
# installing the build dependencies (clang and libbpf for the cgroup v2
# device filter, among them) and what the tests run (pytest, munge,
# OpenMPI with mpi4py, PyTorch for torch.distributed, dpkg-dev and systemd
# for the package, Prometheus for its promtool, Alertmanager for its amtool)
# with apt when they are missing.
#   scripts/build.sh [--debug] [extra cmake args]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${MUSTER_BUILD_DIR:-$root/build}
build_type=RelWithDebInfo
if [[ "${1:-}" == "--debug" ]]; then build_type=Debug; shift; fi

need_pkgs=()
check() { dpkg -s "$1" >/dev/null 2>&1 || need_pkgs+=("$1"); }
for p in g++ cmake ninja-build libboost-dev nlohmann-json3-dev libfmt-dev \
         libspdlog-dev libcli11-dev libgtest-dev libgmock-dev libsqlite3-dev libssl-dev \
         libmunge-dev munge libpmix-dev libhwloc-dev libbpf-dev clang pkg-config iproute2 \
         python3-pytest procps openmpi-bin python3-mpi4py python3-torch dpkg-dev systemd \
         prometheus prometheus-alertmanager; do
  check "$p"
done
if ((${#need_pkgs[@]})); then
  echo "build.sh: installing ${need_pkgs[*]}" >&2
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" "$@" >/dev/null
cmake --build "$build_dir" -j "${MUSTER_JOBS:-2}"
