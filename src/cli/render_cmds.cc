// squeue, sinfo: parse the options here, render in musterd (see
// cli/render/render.h for why), print the text.
#include <iostream>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/render/render.h"
#include "util/strings.h"

namespace muster::cli {

namespace {

void PrintStatusError(const std::string& prog, const util::Status& st) {
  const std::string& m = st.message();
  if (util::StartsWith(m, prog + ":")) {
    std::cerr << m << "\n";
  } else {
    PrintError(prog, m);
  }
}

int RenderRemote(const std::string& prog, const std::string& target, const nlohmann::json& body) {
  auto client = Client::Connect();
  if (!client.ok()) {
    PrintStatusError(prog, client.status());
    return 1;
  }
  auto resp = client->Post(target, body);
  if (!resp.ok()) {
    PrintStatusError(prog, resp.status());
    return 1;
  }
  if (resp->status != 200) {
    PrintError(prog, ErrorText(*resp));
    return 1;
  }
  std::cout << resp->text;
  std::cout.flush();
  return 0;
}

}  // namespace

int SqueueMain(const std::vector<std::string>& args) {
  auto req = render::ParseSqueueArgs(args);
  if (!req.ok()) {
    PrintStatusError("squeue", req.status());
    return 1;
  }
  return RenderRemote("squeue", "/v1/render/squeue", render::ToJson(*req));
}

int SinfoMain(const std::vector<std::string>& args) {
  auto req = render::ParseSinfoArgs(args);
  if (!req.ok()) {
    PrintStatusError("sinfo", req.status());
    return 1;
  }
  return RenderRemote("sinfo", "/v1/render/sinfo", render::ToJson(*req));
}

int ShowRemote(const render::ShowRequest& req) {
  auto client = Client::Connect();
  if (!client.ok()) {
    std::cerr << client.status().message() << "\n";
    return 1;
  }
  auto resp = client->Post("/v1/render/show", render::ToJson(req));
  if (!resp.ok()) {
    std::cerr << resp.status().message() << "\n";
    return 1;
  }
  if (resp->status != 200) {
    std::cerr << ErrorText(*resp) << "\n";
    return 1;
  }
  std::cout << resp->text;
  return 0;
}

}  // namespace muster::cli
