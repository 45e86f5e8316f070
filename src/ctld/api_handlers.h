// The HTTP API of musterd (/v1/...), mapping requests onto the Controller.
// Runs on the controller's event loop. Every error is answered as JSON
// {"error": "...", "detail": "..."} with a 4xx/5xx status; malformed JSON
// or oversized bodies never reach the controller.
#pragma once

#include "api/http.h"
#include "ctld/controller.h"

namespace muster::ctld {

api::HttpResponse HandleApiRequest(Controller& ctl, const api::HttpRequest& req);

// How musterd's servers answer a request: HandleApiRequest's reply once
// what it changed is on disk, except sstat's (POST /v1/jobs/<id>/stats),
// answered when the agents of the job's hosts have.
void ServeApiRequest(Controller& ctl, const api::HttpRequest& req, api::Respond respond);

// GET /metrics' reply, on the API socket and on MusterMetricsAddress.
api::HttpResponse MetricsReply(const Controller& ctl);

}  // namespace muster::ctld
