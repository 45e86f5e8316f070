// squeue, sinfo, sacct, sreport: parse the arguments here (cli/args.h),
// render in musterd (see cli/render/render.h for why), print the text.
#include <chrono>
#include <ctime>
#include <functional>
#include <iostream>
#include <thread>

#include "cli/args.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/help_texts.h"
#include "cli/render/render.h"
#include "util/strings.h"

namespace muster::cli {

namespace {

void PrintWarnings(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) std::cerr << line << "\n";
}

// The text goes to stdout as it arrives, so a long listing is never held
// whole in this process; the warnings musterd sent go to stderr first.
int RenderRemote(const std::string& prog, const std::string& target, const nlohmann::json& body) {
  bool warned = false;
  auto resp = CallController(target, body, [&](const api::HttpResponse& head, std::string_view piece) {
    if (!warned) PrintWarnings(head.warnings);
    warned = true;
    std::cout.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  });
  std::cout.flush();
  if (!resp.ok()) {
    // scontrol show job of an array task the job lacks: Slurm prints
    // "Job 12_7 not found" on stdout (and exits 1).
    const std::string& message = resp.status().message();
    if (message.starts_with("Job ") && message.ends_with(" not found")) {
      std::cout << message << "\n";
      return 1;
    }
    PrintCallError(prog, resp.status());
    return 1;
  }
  if (!warned) PrintWarnings(resp->warnings);
  return 0;
}

// -i/--iterate: print again every `seconds` until interrupted.
int Iterate(int seconds, const std::function<int()>& once) {
  for (;;) {
    int rc = once();
    if (rc != 0 || seconds <= 0) return rc;
    std::cout << "\n";
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
  }
}

// sinfo -T: the reservations as musterd lists them for scontrol show
// reservation, laid out here.
int PrintReservations(const render::SinfoRequest& req) {
  auto client = Client::Connect();
  if (!client.ok()) {
    PrintCallError("sinfo", client.status());
    return 1;
  }
  auto resp = client->Get("/v1/reservations");
  if (!resp.ok() || resp->status / 100 != 2) {
    PrintCallError("sinfo", resp.ok() ? util::Unavailable(ErrorText(*resp)) : resp.status());
    return 1;
  }
  std::cout << render::RenderSinfoReservations(resp->body.value("reservations", nlohmann::json::array()),
                                               req.noheader, req.long_view, std::time(nullptr))
            << std::flush;
  return 0;
}

}  // namespace

int SqueueMain(const std::vector<std::string>& args) {
  auto req = ParseSqueueArgs(args);
  if (!req.ok()) {
    std::cerr << req.status().message() << "\n";
    return 1;
  }
  for (const auto& w : req->warnings) std::cerr << w << "\n";
  if (req->help || req->usage) {
    std::cout << "Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]\n"
                 "              [-n name] [-o format] [-O fields] [-p partitions] [--qos qos]\n"
                 "              [--reservation reservation] [--sort fields] [--start]\n"
                 "              [--states states] [-u user_name] [--usage] [-w nodes]\n"
                 "              [-ahjlrsv] [--me] [--noheader] [--long]\n";
    return 0;
  }
  if (req->version) return PrintVersion();
  nlohmann::json body = render::ToJson(*req);
  return Iterate(req->iterate_s, [&] { return RenderRemote("squeue", "/v1/render/squeue", body); });
}

int SinfoMain(const std::vector<std::string>& args) {
  auto req = ParseSinfoArgs(args);
  if (!req.ok()) {
    std::cerr << req.status().message() << "\n";
    return 1;
  }
  if (req->help) {
    std::cout << SinfoUsage();
    return 0;
  }
  if (req->version) return PrintVersion();
  if (req->reservation) {
    return Iterate(req->iterate_s, [&] { return PrintReservations(*req); });
  }
  nlohmann::json body = render::ToJson(*req);
  return Iterate(req->iterate_s, [&] { return RenderRemote("sinfo", "/v1/render/sinfo", body); });
}

int SacctMain(const std::vector<std::string>& args) {
  auto req = ParseSacctArgs(args);
  if (!req.ok()) {
    std::cerr << req.status().message() << "\n";
    return 1;
  }
  if (req->version) return PrintVersion();
  for (const std::string& line : req->warnings) std::cerr << line << "\n";
  if (req->help || req->usage || req->helpformat) {
    std::cout << (req->help    ? SacctHelp()
                  : req->usage ? SacctUsage()
                               : render::SacctHelpFormat());
    return 0;
  }
  return RenderRemote("sacct", "/v1/render/sacct", render::ToJson(*req));
}

int SreportMain(const std::vector<std::string>& args) {
  auto req = ParseSreportArgs(args);
  if (!req.ok()) {
    std::cerr << req.status().message() << "\n";
    return 1;
  }
  if (req->version) return PrintVersion();
  if (req->help) {
    std::cout << SreportHelp();
    return 0;
  }
  if (!req->warning.empty()) std::cerr << req->warning;
  return RenderRemote("sreport", "/v1/render/sreport", render::ToJson(*req));
}

int SeffMain(const std::vector<std::string>& args) {
  if (args.size() == 1 && (args[0] == "-V" || args[0] == "--version")) return PrintVersion();
  if (args.size() != 1 || args[0].empty() || args[0][0] == '-') {
    std::cerr << "Usage: seff [Options] <Jobid>\n";
    return 1;
  }
  auto id = util::ParseInt(args[0].substr(0, args[0].find('.')));
  if (!id.ok()) {
    std::cerr << "Usage: seff [Options] <Jobid>\n";
    return 1;
  }
  return RenderRemote("seff", "/v1/render/seff", {{"job_id", *id}});
}

int ShowRemote(const render::ShowRequest& req) {
  return RenderRemote("scontrol", "/v1/render/show", render::ToJson(req));
}

}  // namespace muster::cli
