// The device filter of a job's cgroup on cgroup v2 (cgroup.conf
// ConstrainDevices=yes; stepd/device_filter.h loads it with libbpf). The
// kernel runs it at every open or mknod of a device file by a process of
// the cgroup; it refuses (0) the devices the map `denied` holds (the GPUs
// of the node the job was not given) and lets every other through (1), as
// Slurm's confinement denies only the GRES devices a job lacks.
// Built with clang -target bpf into an object embedded in muster_steplib.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

// BPF_DEVCG_DEV_CHAR or BPF_DEVCG_DEV_BLOCK, and the device's numbers: the
// same layout as DeviceKey in device_filter.cc.
struct device_key {
  __u32 type;
  __u32 major;
  __u32 minor;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct device_key);
  __type(value, __u8);
} denied SEC(".maps");

SEC("cgroup/dev")
int device_filter(struct bpf_cgroup_dev_ctx* ctx) {
  // access_type holds the access (read, write, mknod) above the type.
  struct device_key key = {ctx->access_type & 0xffff, ctx->major, ctx->minor};
  return bpf_map_lookup_elem(&denied, &key) ? 0 : 1;
}

// Only GPL-only helpers need a GPL licence; this program calls none.
char LICENSE[] SEC("license") = "Apache-2.0";
