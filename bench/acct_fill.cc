// Fills an accounting database with N synthetic finished jobs (with batch
// steps) for the sacct benchmark: acct_fill DB_PATH N [USERS] [DAYS].
// Jobs are spread evenly over the last DAYS days among USERS users
// (uids 20000..), through the real AccountingStore write path.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "store/accounting.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: acct_fill DB_PATH N [USERS] [DAYS]\n");
    return 2;
  }
  std::string db = argv[1];
  long n = std::atol(argv[2]);
  int users = argc > 3 ? std::atoi(argv[3]) : 100;
  int days = argc > 4 ? std::atoi(argv[4]) : 30;
  muster::store::AccountingOptions opts;
  opts.db_path = db;
  opts.spool_path = db + ".spool";
  muster::store::AccountingStore store(opts);
  int64_t now = ::time(nullptr);
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    muster::store::JobRecord j;
    j.job_id = 1000000 + i;
    j.name = "job" + std::to_string(i % 97);
    j.uid = 20000 + static_cast<uint32_t>(i % users);
    j.user = "user" + std::to_string(i % users);
    j.group = j.user;
    j.account = "acct" + std::to_string(i % 7);
    j.partition = i % 3 ? "short" : "train";
    j.qos = "normal";
    j.cluster = "bench";
    j.submit_time = now - static_cast<int64_t>(days) * 86400 + i * (int64_t{days} * 86400) / n;
    j.eligible_time = j.submit_time;
    j.start_time = j.submit_time + 5;
    j.end_time = j.start_time + 600;
    j.time_limit_min = 60;
    j.state = i % 10 ? "COMPLETED" : "FAILED";
    j.exit_code = i % 10 ? 0 : 1;
    j.req_tres = j.alloc_tres = "billing=4,cpu=4,mem=4000M,node=1";
    j.node_list = "gpu0" + std::to_string(1 + i % 4);
    j.nnodes = 1;
    j.ncpus = 4;
    j.req_mem_mb = 4000;
    j.work_dir = "/home/" + j.user;
    j.max_rss_kb = 100000;
    j.total_cpu_ms = 1200000;
    j.reason = "None";
    store.Upsert(j);
    muster::store::StepRecord s;
    s.job_id = j.job_id;
    s.step_id = "batch";
    s.name = "batch";
    s.state = j.state;
    s.exit_code = j.exit_code;
    s.start_time = j.start_time;
    s.end_time = j.end_time;
    s.node_list = j.node_list;
    s.nnodes = 1;
    s.ntasks = 1;
    s.ncpus = 4;
    s.alloc_tres = "cpu=4,mem=4000M,node=1";
    s.max_rss_kb = 100000;
    s.total_cpu_ms = 1200000;
    store.UpsertStep(s);
  }
  muster::util::Status st = store.Flush();
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("wrote %ld jobs (+%ld steps) in %.1f s = %.0f records/s (%s)\n", n, n, dt, 2 * n / dt,
              st.ok() ? "in the database" : st.message().c_str());
  return st.ok() ? 0 : 1;
}
