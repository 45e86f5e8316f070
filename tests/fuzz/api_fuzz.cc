// The API's requests as musterd's handlers see them, after HTTP framing
// (http_fuzz covers that): the first line is "METHOD TARGET [UID]", the
// rest the JSON body. A reply is always a status with a JSON body, never a
// crash; the controller runs for real on a scratch directory (no agent
// connects, so nothing is launched), renewed every few thousand inputs so
// its table stays small.
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "api/http.h"
#include "ctld/api_handlers.h"
#include "controller_under_test.h"
#include "util/strings.h"

namespace {

std::unique_ptr<muster::fuzz::ControllerUnderTest> g_ctl;
int g_generation = 0;
int g_inputs = 0;

muster::fuzz::ControllerUnderTest& Controller() {
  if (!g_ctl || ++g_inputs > 3000) {
    g_ctl.reset();
    g_inputs = 0;
    g_ctl = std::make_unique<muster::fuzz::ControllerUnderTest>(
        muster::fuzz::ScratchDir() + "/api" + std::to_string(g_generation++));
    if (!g_ctl->ctl.Recover().ok()) __builtin_trap();
  }
  return *g_ctl;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace muster;
  std::string_view text = fuzz::AsText(data, size);
  size_t eol = text.find('\n');
  std::vector<std::string> words = util::Split(text.substr(0, eol), ' ');
  if (words.size() < 2) return 0;
  api::HttpRequest req;
  req.method = words[0];
  req.target = words[1];
  req.peer.uid = 0;
  req.peer.gid = 0;
  if (words.size() > 2) {
    auto uid = util::ParseInt(words[2]);
    if (uid.ok()) req.peer.uid = req.peer.gid = static_cast<uid_t>(*uid % 70000);
  }
  if (eol != std::string_view::npos) req.body = std::string(text.substr(eol + 1));
  auto& c = Controller();
  api::HttpResponse reply = ctld::HandleApiRequest(c.ctl, req);
  if (reply.status < 200 || reply.status > 599) __builtin_trap();
  if (reply.content_type == "application/json" &&
      !nlohmann::json::accept(reply.body)) {
    __builtin_trap();
  }
  bool answered = false;
  c.ctl.AfterCommit([&answered] { answered = true; });
  c.Drain();
  if (!answered) __builtin_trap();  // every reply leaves once committed
  return 0;
}
