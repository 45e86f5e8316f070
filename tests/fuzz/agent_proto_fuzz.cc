// The agent protocol, both ends' decoders. The input is what an agent
// writes on its connection to musterd, newline-delimited JSON: the
// controller (real, on a scratch directory, with three jobs submitted so
// registering starts them and "ended" can finish them) reads it through
// its LineConn; then each line goes through the agent's decoders of what
// musterd sends (a launch's step spec) and of its own state file.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include <boost/asio/local/stream_protocol.hpp>
#include <nlohmann/json.hpp>

#include "api/line_conn.h"
#include "controller_under_test.h"
#include "sched/refusal.h"
#include "stepd/proctree.h"
#include "stepd/spool.h"
#include "stepd/step.h"
#include "util/strings.h"

namespace {

std::unique_ptr<muster::fuzz::ControllerUnderTest> g_ctl;
int g_generation = 0;
int g_inputs = 0;

muster::fuzz::ControllerUnderTest& Controller() {
  using namespace muster;
  if (!g_ctl || ++g_inputs > 500) {
    g_ctl.reset();
    g_inputs = 0;
    g_ctl = std::make_unique<fuzz::ControllerUnderTest>(fuzz::ScratchDir() + "/agent" +
                                                        std::to_string(g_generation++));
    if (!g_ctl->ctl.Recover().ok()) __builtin_trap();
    for (int i = 0; i < 3; ++i) {
      core::JobRequest req;
      req.script = "#!/bin/sh\ntrue\n";
      req.name = "fuzz" + std::to_string(i);
      req.work_dir = fuzz::ScratchDir();
      sched::SubmitRefusal why;
      if (auto id = g_ctl->ctl.Submit(req, ctld::Caller{}, &why); !id.ok()) {
        std::fprintf(stderr, "agent_proto_fuzz: submit: %s\n", id.status().message().c_str());
        std::abort();
      }
    }
    g_ctl->Drain();
  }
  return *g_ctl;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace muster;
  auto& c = Controller();
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) {
    __builtin_trap();
  }
  api::LineConn::Socket socket(c.io);
  socket.assign(boost::asio::local::stream_protocol(), fds[0]);
  c.ctl.AcceptAgent(std::make_shared<api::LineConn>(std::move(socket)));
  size_t sent = 0;
  char sink[65536];
  for (int idle = 0; sent < size && idle < 100;) {
    ssize_t n = ::send(fds[1], data + sent, size - sent, MSG_NOSIGNAL);
    if (n > 0) sent += static_cast<size_t>(n);
    while (::recv(fds[1], sink, sizeof(sink), 0) > 0) {
    }
    idle = n > 0 ? 0 : idle + 1;
    c.Drain();
  }
  ::close(fds[1]);  // the agent goes away
  c.Drain();

  std::string_view text = fuzz::AsText(data, size);
  for (const std::string& line : util::Split(text, '\n')) {
    auto msg = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (msg.is_discarded()) continue;
    (void)stepd::StepResultFromJson(msg);
    if (msg.is_object() && msg.contains("spec")) {
      if (auto spec = stepd::StepSpecFromJson(msg["spec"]); spec.ok()) {
        (void)stepd::StepSpecFromJson(stepd::ToJson(*spec));
      }
    }
    if (msg.is_object() && msg.contains("result")) (void)stepd::StepResultFromJson(msg["result"]);
  }
  (void)stepd::ParseStepState(text);
  (void)stepd::ParseStepStateOf(1, text);
  stepd::ProcStat stat;
  (void)stepd::ParseProcStat(text, &stat);
  return 0;
}
