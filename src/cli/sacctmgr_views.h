// sacctmgr: its command line (Slurm's "verb entity words" grammar) and its
// listings of the account table musterd returns (GET /v1/accounts). Pure.
//
//   sacctmgr [-i] [-n] [-p|-P] add|create account NAME[,NAME] [Description=]
//            [Organization=] [Parent=] [Fairshare=]
//   sacctmgr add user NAME Account=A[,B] [DefaultAccount=] [Fairshare=] [AdminLevel=]
//   sacctmgr modify|update account|user [where] NAME|Name=..|Account=.. set KEY=VALUE ...
//   sacctmgr delete|remove account|user NAME [where Account=..]
//   sacctmgr add|modify|delete qos NAME [Priority=] [MaxJobsPerUser=] [MaxSubmitJobsPerUser=]
//            [MaxWall=] [MaxTRESPerUser=] [MaxTRESPerJob=] [GrpTRES=] [GrpJobs=]
//            [Flags=DenyOnLimit] [UsageFactor=] [Description=]
//   sacctmgr list|show account|user|association|cluster|qos [NAME] [filters] [format=F[%W],...]
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/status.h"

namespace muster::cli {

struct SacctmgrCommand {
  bool immediate = false;  // -i: commit without asking
  bool noheader = false;   // -n
  int parsable = 0;        // -p 1 (trailing '|'), -P 2
  bool help = false;
  bool version = false;
  std::string action;  // add, modify, delete, list
  std::string entity;  // account, user, association, cluster
  std::vector<std::string> names;
  // Filters (list; modify/delete "where"), by Slurm key in lower case:
  // "accounts", "users", "parent", "cluster".
  std::map<std::string, std::vector<std::string>> where;
  // Settings (add; modify "set"): the request body's "set" object.
  nlohmann::json set = nlohmann::json::object();
  std::vector<std::string> format;  // list: "Account", "User%20", ...
};

// Errors are sacctmgr's: "sacctmgr: error: Unknown option: Foo=1", the
// entity list for an unknown entity, ...
util::Result<SacctmgrCommand> ParseSacctmgrArgs(const std::vector<std::string>& args);
std::string SacctmgrUsage();

// The request musterd takes for add, modify and delete (POST /v1/accounts).
nlohmann::json SacctmgrRequest(const SacctmgrCommand& cmd, bool commit);

// `list` of accounts, users or associations from the table's JSON
// (core::AccountTable::ToJson); of the cluster from `cluster`
// ({"name", "host", "port"}). Unknown format fields are an error naming
// the field.
util::Result<std::string> RenderSacctmgrList(const SacctmgrCommand& cmd,
                                             const nlohmann::json& table,
                                             const nlohmann::json& cluster);

}  // namespace muster::cli
