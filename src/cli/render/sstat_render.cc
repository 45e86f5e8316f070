#include "cli/render/sstat_render.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string_view>

#include <fmt/format.h>

#include "cli/render/format_util.h"
#include "cli/render/render.h"
#include "util/strings.h"

namespace muster::render {

const char kSstatDefaultFormat[] =
    "JobID,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,"
    "MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,"
    "AveCPUFreq,ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ConsumedEnergy,MaxDiskRead,"
    "MaxDiskReadNode,MaxDiskReadTask,AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,"
    "AveDiskWrite,TRESUsageInAve,TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,"
    "TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,TRESUsageOutAve,"
    "TRESUsageOutMax,TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutMin,"
    "TRESUsageOutMinNode,TRESUsageOutMinTask,TRESUsageOutTot";
const char kSstatPidFormat[] = "JobID,Nodelist,Pids";

namespace {

using core::FigureSummary;
using core::StepFigure;

// Which of a figure's summaries a field shows.
enum class Stat { kAve, kMax, kMin, kTot };

struct Ctx {
  const SstatRow& row;
  bool noconvert;

  const FigureSummary& operator[](StepFigure f) const { return row.stats[f]; }
  // A node name for a figure of a step with no tasks found.
  std::string FirstNode() const {
    if (!row.stats.nodes.empty()) return row.stats.nodes.front();
    return row.nodelist;
  }
  std::string Node(const core::Extreme& e) const {
    return row.stats.ntasks > 0 ? e.node : FirstNode();
  }
  bool Batch() const { return row.stats.step == core::kBatchStep; }
};

int64_t Value(const FigureSummary& f, Stat s) {
  switch (s) {
    case Stat::kAve: return f.average;
    case Stat::kMax: return f.max.value;
    case Stat::kMin: return f.min.value;
    case Stat::kTot: return f.total;
  }
  return 0;
}

// A count (bytes, page faults) with a unit only where it divides evenly,
// as Slurm's exact conversion prints it ("81752", "2K").
std::string Count(int64_t n, bool noconvert) {
  if (noconvert) return std::to_string(n);
  static const char* const kUnits[] = {"", "K", "M", "G", "T", "P"};
  int u = 0;
  while (n >= 1024 && n % 1024 == 0 && u < 5) {
    n /= 1024;
    ++u;
  }
  return fmt::format("{}{}", n, kUnits[u]);
}
std::string Kib(int64_t kb, bool noconvert) {
  return noconvert ? std::to_string(kb * 1024) : SacctKiloBytes(kb);
}
std::string Cpu(int64_t ms) { return SacctElapsed(ms / 1000); }

// The GPU figures of the step's nodes, summed up like a task figure.
struct GpuSummary {
  core::Extreme max, min;
  int64_t total = 0, average = 0;
};
GpuSummary SummarizeGpus(const std::vector<SstatGpuNode>& gpus, bool memory) {
  GpuSummary s;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const int64_t v = memory ? gpus[i].memory_used_bytes : gpus[i].utilization_pct;
    s.total += v;
    if (i == 0 || v > s.max.value) s.max = {v, gpus[i].node, -1};
    if (i == 0 || v < s.min.value) s.min = {v, gpus[i].node, -1};
  }
  if (!gpus.empty()) s.average = s.total / static_cast<int64_t>(gpus.size());
  return s;
}
int64_t Value(const GpuSummary& g, Stat s) {
  switch (s) {
    case Stat::kAve: return g.average;
    case Stat::kMax: return g.max.value;
    case Stat::kMin: return g.min.value;
    case Stat::kTot: return g.total;
  }
  return 0;
}

// TRESUsageIn{Ave,Max,Min,Tot}.
std::string UsageIn(const Ctx& c, Stat s) {
  std::string out = "cpu=" + Cpu(Value(c[StepFigure::kCpu], s)) + ",energy=0,fs/disk=" +
                    std::to_string(Value(c[StepFigure::kDiskRead], s));
  if (!c.row.gpus.empty()) {
    const int64_t mem = Value(SummarizeGpus(c.row.gpus, true), s);
    out += ",gres/gpumem=" + (c.noconvert ? std::to_string(mem) : SacctKiloBytes(mem >> 10)) +
           ",gres/gpuutil=" + std::to_string(Value(SummarizeGpus(c.row.gpus, false), s));
  }
  return out + ",mem=" + Kib(Value(c[StepFigure::kMem], s), c.noconvert) +
         ",pages=" + std::to_string(Value(c[StepFigure::kPages], s)) +
         ",vmem=" + Kib(Value(c[StepFigure::kVmem], s), c.noconvert);
}

const core::Extreme& Extreme(const FigureSummary& f, bool max) { return max ? f.max : f.min; }
const core::Extreme& Extreme(const GpuSummary& g, bool max) { return max ? g.max : g.min; }

// TRESUsageIn{Max,Min}Node.
std::string UsageInNode(const Ctx& c, bool max) {
  std::string out = "cpu=" + c.Node(Extreme(c[StepFigure::kCpu], max)) +
                    ",energy=" + c.FirstNode() +
                    ",fs/disk=" + c.Node(Extreme(c[StepFigure::kDiskRead], max));
  if (!c.row.gpus.empty()) {
    out += ",gres/gpumem=" + Extreme(SummarizeGpus(c.row.gpus, true), max).node +
           ",gres/gpuutil=" + Extreme(SummarizeGpus(c.row.gpus, false), max).node;
  }
  return out + ",mem=" + c.Node(Extreme(c[StepFigure::kMem], max)) +
         ",pages=" + c.Node(Extreme(c[StepFigure::kPages], max)) +
         ",vmem=" + c.Node(Extreme(c[StepFigure::kVmem], max));
}

// TRESUsageIn{Max,Min}Task: Slurm prints the cpu task as a time.
std::string UsageInTask(const Ctx& c, bool max) {
  auto task = [&](StepFigure f) { return std::to_string(Extreme(c[f], max).task); };
  std::string out = "cpu=" + SacctElapsed(Extreme(c[StepFigure::kCpu], max).task) +
                    ",fs/disk=" + task(StepFigure::kDiskRead);
  if (!c.row.gpus.empty()) out += ",gres/gpumem=-1,gres/gpuutil=-1";
  return out + ",mem=" + task(StepFigure::kMem) + ",pages=" + task(StepFigure::kPages) +
         ",vmem=" + task(StepFigure::kVmem);
}

std::string UsageOut(const Ctx& c, Stat s) {
  return "energy=0,fs/disk=" + std::to_string(Value(c[StepFigure::kDiskWrite], s));
}

using ValueFn = std::function<std::string(const Ctx&)>;
struct Field {
  const char* name;
  int width;  // negative: left-justified
  ValueFn value;
};

// The figure's Max/Min, its node and its task; Ave.
ValueFn Max(StepFigure f, bool kib) {
  return [f, kib](const Ctx& c) {
    const int64_t v = c[f].max.value;
    if (f == StepFigure::kCpu) return Cpu(v);
    return kib ? Kib(v, c.noconvert) : Count(v, c.noconvert);
  };
}
ValueFn Min(StepFigure f) {
  return [f](const Ctx& c) { return Cpu(c[f].min.value); };
}
ValueFn Ave(StepFigure f, bool kib) {
  return [f, kib](const Ctx& c) {
    const int64_t v = c[f].average;
    if (f == StepFigure::kCpu) return Cpu(v);
    return kib ? Kib(v, c.noconvert) : Count(v, c.noconvert);
  };
}
ValueFn NodeOf(StepFigure f, bool max) {
  return [f, max](const Ctx& c) { return c.Node(Extreme(c[f], max)); };
}
ValueFn TaskOf(StepFigure f, bool max) {
  return [f, max](const Ctx& c) { return std::to_string(Extreme(c[f], max).task); };
}
std::string Zero(const Ctx&) { return "0"; }
std::string CpuFreq(const Ctx& c) { return c.Batch() ? "0" : "Unknown"; }

const std::vector<Field>& Fields() {
  using F = StepFigure;
  static const std::vector<Field> kFields = {
      {"AveCPU", 10, Ave(F::kCpu, false)},
      {"AveCPUFreq", 10, Zero},
      {"AveDiskRead", 12, Ave(F::kDiskRead, false)},
      {"AveDiskWrite", 12, Ave(F::kDiskWrite, false)},
      {"AvePages", 10, Ave(F::kPages, false)},
      {"AveRSS", 10, Ave(F::kMem, true)},
      {"AveVMSize", 10, Ave(F::kVmem, true)},
      {"ConsumedEnergy", 14, Zero},
      {"ConsumedEnergyRaw", 17, Zero},
      {"JobID", -12,
       [](const Ctx& c) { return fmt::format("{}.{}", c.row.stats.job_id, c.row.stats.step); }},
      {"MaxDiskRead", 12, Max(F::kDiskRead, false)},
      {"MaxDiskReadNode", 15, NodeOf(F::kDiskRead, true)},
      {"MaxDiskReadTask", 15, TaskOf(F::kDiskRead, true)},
      {"MaxDiskWrite", 12, Max(F::kDiskWrite, false)},
      {"MaxDiskWriteNode", 16, NodeOf(F::kDiskWrite, true)},
      {"MaxDiskWriteTask", 16, TaskOf(F::kDiskWrite, true)},
      {"MaxPages", 8, Max(F::kPages, false)},
      {"MaxPagesNode", 12, NodeOf(F::kPages, true)},
      {"MaxPagesTask", 14, TaskOf(F::kPages, true)},
      {"MaxRSS", 10, Max(F::kMem, true)},
      {"MaxRSSNode", 10, NodeOf(F::kMem, true)},
      {"MaxRSSTask", 10, TaskOf(F::kMem, true)},
      {"MaxVMSize", 10, Max(F::kVmem, true)},
      {"MaxVMSizeNode", 14, NodeOf(F::kVmem, true)},
      {"MaxVMSizeTask", 14, TaskOf(F::kVmem, true)},
      {"MinCPU", 10, Min(F::kCpu)},
      {"MinCPUNode", 10, NodeOf(F::kCpu, false)},
      {"MinCPUTask", 10, TaskOf(F::kCpu, false)},
      {"Nodelist", 20, [](const Ctx& c) { return c.row.nodelist; }},
      {"NTasks", 8,
       [](const Ctx& c) {
         return std::to_string(c.row.stats.ntasks > 0 ? c.row.stats.ntasks : c.row.ntasks);
       }},
      {"Pids", 20,
       [](const Ctx& c) {
         std::string out;
         for (int pid : c.row.stats.pids) out += (out.empty() ? "" : ",") + std::to_string(pid);
         return out;
       }},
      {"ReqCPUFreq", 13, CpuFreq},
      {"ReqCPUFreqMin", 13, CpuFreq},
      {"ReqCPUFreqMax", 13, CpuFreq},
      {"ReqCPUFreqGov", 13, CpuFreq},
      {"TRESUsageInAve", 14, [](const Ctx& c) { return UsageIn(c, Stat::kAve); }},
      {"TRESUsageInMax", 14, [](const Ctx& c) { return UsageIn(c, Stat::kMax); }},
      {"TRESUsageInMaxNode", 18, [](const Ctx& c) { return UsageInNode(c, true); }},
      {"TRESUsageInMaxTask", 18, [](const Ctx& c) { return UsageInTask(c, true); }},
      {"TRESUsageInMin", 14, [](const Ctx& c) { return UsageIn(c, Stat::kMin); }},
      {"TRESUsageInMinNode", 18, [](const Ctx& c) { return UsageInNode(c, false); }},
      {"TRESUsageInMinTask", 18, [](const Ctx& c) { return UsageInTask(c, false); }},
      {"TRESUsageInTot", 14, [](const Ctx& c) { return UsageIn(c, Stat::kTot); }},
      {"TRESUsageOutAve", 15, [](const Ctx& c) { return UsageOut(c, Stat::kAve); }},
      {"TRESUsageOutMax", 15, [](const Ctx& c) { return UsageOut(c, Stat::kMax); }},
      {"TRESUsageOutMaxNode", 19,
       [](const Ctx& c) {
         return "energy=" + c.FirstNode() + ",fs/disk=" + c.Node(c[F::kDiskWrite].max);
       }},
      {"TRESUsageOutMaxTask", 19,
       [](const Ctx& c) { return "fs/disk=" + std::to_string(c[F::kDiskWrite].max.task); }},
      {"TRESUsageOutMin", 15, [](const Ctx& c) { return UsageOut(c, Stat::kMin); }},
      {"TRESUsageOutMinNode", 19,
       [](const Ctx& c) {
         return "energy=" + c.FirstNode() + ",fs/disk=" + c.Node(c[F::kDiskWrite].min);
       }},
      {"TRESUsageOutMinTask", 19,
       [](const Ctx& c) { return "fs/disk=" + std::to_string(c[F::kDiskWrite].min.task); }},
      {"TRESUsageOutTot", 15, [](const Ctx& c) { return UsageOut(c, Stat::kTot); }},
  };
  return kFields;
}

}  // namespace

util::Result<SstatTable> SstatTable::Make(const std::string& format, bool noconvert,
                                          int parsable) {
  SstatTable t;
  t.noconvert_ = noconvert;
  t.parsable_ = parsable;
  const std::vector<Field>& fields = Fields();
  for (const AccountingFormatItem& item : ParseAccountingFormat(format)) {
    auto it = std::find_if(fields.begin(), fields.end(), [&](const Field& f) {
      return util::EqualsIgnoreCase(f.name, item.name);
    });
    if (it == fields.end()) {
      return util::InvalidArgument("Invalid field requested: \"" + item.name + "\"");
    }
    const size_t index = static_cast<size_t>(it - fields.begin());
    if (item.has_width) {
      t.cols_.push_back({index, item.width, !item.left});
    } else {
      t.cols_.push_back({index, std::abs(it->width), it->width > 0});
    }
  }
  return t;
}

std::string SstatTable::Header() const {
  std::vector<AccountingColumn> cols;
  for (const Column& c : cols_) cols.push_back({Fields()[c.field].name, c.width, c.right});
  std::string out;
  AppendAccountingHeader(&out, cols, parsable_);
  return out;
}

std::string SstatTable::Row(const SstatRow& row) const {
  const Ctx ctx{row, noconvert_};
  std::vector<AccountingColumn> cols;
  std::vector<std::string> values;
  for (const Column& c : cols_) {
    const Field& f = Fields()[c.field];
    cols.push_back({f.name, c.width, c.right});
    values.push_back(f.value(ctx));
  }
  std::string out;
  AppendAccountingRow(&out, cols, values, parsable_);
  return out;
}

std::string SstatHelpFormat() {
  std::vector<std::string_view> names;
  for (const Field& f : Fields()) names.push_back(f.name);
  return HelpFormatColumns(names);
}

}  // namespace muster::render
