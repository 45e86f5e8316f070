// musterd's side of a cluster of several hosts: what it serves on TCP
// (SlurmctldPort) under AuthType=auth/slurm or auth/munge, and the files
// it gives configless agents.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "api/http.h"
#include "api/tcp_listener.h"
#include "auth/service.h"
#include "ctld/controller.h"
#include "util/status.h"

namespace muster::ctld {

// Agents and commands on other hosts reach musterd over TCP on
// SlurmctldPort, proving every message with the shared key or munge: agent
// lines go to `ctl`, HTTP requests to `api`. Null, and nothing listens,
// when `auth` is null (one host, AuthType unset).
util::Result<std::unique_ptr<api::TcpListener>> ServeOtherHosts(boost::asio::io_context& io,
                                                                Controller& ctl,
                                                                api::HttpServer& api,
                                                                const auth::ServiceAuth* auth);

// What configless agents get (SlurmctldParameters=enable_configless): the
// main file and gres.conf beside it, as read now. Included files are not
// sent, so a configuration with Include is refused.
util::Result<std::map<std::string, std::string>> ConfiglessFiles(const config::Config& cfg);

}  // namespace muster::ctld
