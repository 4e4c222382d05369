/* svc_cyclone - a ROS 2 service peer that speaks rmw_cyclonedds's
 * request-id mapping (Cyclone DDS): the client id and sequence number in
 * front of the body (services.idl).
 *
 *   --mode server    answers std_srvs/SetBool on --service: success = data,
 *                    message "cyclone <data>"; prints "request <seq> <data>"
 *                    per request; exits after --count requests (0: at
 *                    --timeout). --mute: never answers.
 *   --mode client    waits for a server of --service, calls it --count
 *                    times (data true, false, true, ...), prints
 *                    "response <seq> <success> <message>"; exit 3 when a
 *                    response does not come within --timeout.
 *   --mode setparam  calls <--target>/set_parameters (as `ros2 param set`)
 *                    with --param NAME --value V (true/false: bool, an
 *                    integer: integer, otherwise a string); prints
 *                    "result <0|1> <reason>"; exit 0 once answered.
 *   --mode paramserver  serves <--target>/get_parameters (the node's name
 *                    is --node): use_sim_time false, answer 42, vendor
 *                    "cyclone", anything else NOT_SET; prints
 *                    "get <name>..." per request; runs until --timeout.
 */
#include "cyclone.h"
#include "services.h"

static int64_t g_deadline;
static int g_quiet;

static void svc_topics(const char *service, char *rq, char *rr, size_t n) {
  snprintf(rq, n, "rq%s%sRequest", service[0] == '/' ? "" : "/", service);
  snprintf(rr, n, "rr%s%sReply", service[0] == '/' ? "" : "/", service);
}

/* Waits for the server side: a matched request reader and response writer. */
static void wait_server(dds_entity_t w, dds_entity_t r) {
  double left = (double)(g_deadline - mono_ns()) / 1e9;
  if (cy_wait_readers(w, 1, left) < 0 || cy_wait_writers(r, 1, (double)(g_deadline - mono_ns()) / 1e9) < 0)
    fatal("no server within the timeout");
  fprintf(stderr, "%s: server matched\n", g_prog);
  nap(200000000); /* let the server's reply writer match our reader */
}

/* Takes one sample from r into sample (the caller's memory: Cyclone
 * reuses or reallocates its strings and sequences). Returns 1 when one
 * came before the deadline. */
static int take_one(dds_entity_t r, dds_entity_t ws, void *sample) {
  for (;;) {
    void *buf[1] = {sample};
    dds_sample_info_t info;
    int64_t left = g_deadline - mono_ns();
    int m;
    if (left <= 0) return 0;
    dds_waitset_wait(ws, NULL, 0, left < DDS_MSECS(50) ? left : DDS_MSECS(50));
    m = dds_take(r, buf, &info, 1, 1);
    if (m > 0 && info.valid_data) return 1;
  }
}

static int run_server(cy_node *n, const char *service, long count, int mute) {
  char rq[256], rr[256];
  long answered = 0;
  svc_topics(service, rq, rr, sizeof rq);
  dds_entity_t tq = cy_topic(n, &std_srvs_srv_dds__SetBool_Request__desc, rq);
  dds_entity_t tr = cy_topic(n, &std_srvs_srv_dds__SetBool_Response__desc, rr);
  dds_entity_t r = cy_reader(n, tq, 1, 10, 0);
  dds_entity_t w = cy_writer(n, tr, 1, 10, 0);
  dds_entity_t ws = cy_waitset(n, r);
  cy_announce(n, &r, 1, &w, 1);
  fprintf(stderr, "%s: serving %s\n", g_prog, service);
  while (count == 0 || answered < count) {
    std_srvs_srv_dds__SetBool_Request_ req;
    memset(&req, 0, sizeof req);
    if (!take_one(r, ws, &req)) break;
    if (!g_quiet) printf("request %lld %d\n", (long long)req.sequence_number, (int)req.data);
    if (mute) continue;
    {
      std_srvs_srv_dds__SetBool_Response_ resp;
      char text[64];
      snprintf(text, sizeof text, "cyclone %s", req.data ? "true" : "false");
      resp.client_guid = req.client_guid;
      resp.sequence_number = req.sequence_number;
      resp.success = req.data;
      resp.message = text;
      cy_wait_readers(w, 1, 1.0);
      CY_OK(dds_write(w, &resp));
      answered++;
    }
  }
  nap(300000000);
  return count == 0 || answered >= count ? EXIT_OK : EXIT_TIMEOUT;
}

static int run_client(cy_node *n, const char *service, long count) {
  char rq[256], rr[256];
  long i;
  int64_t t0;
  svc_topics(service, rq, rr, sizeof rq);
  dds_entity_t tq = cy_topic(n, &std_srvs_srv_dds__SetBool_Request__desc, rq);
  dds_entity_t tr = cy_topic(n, &std_srvs_srv_dds__SetBool_Response__desc, rr);
  dds_entity_t w = cy_writer(n, tq, 1, 10, 0);
  dds_entity_t r = cy_reader(n, tr, 1, 10, 0);
  dds_entity_t ws = cy_waitset(n, r);
  dds_instance_handle_t me;
  cy_announce(n, &r, 1, &w, 1);
  CY_OK(dds_get_instance_handle(w, &me));
  wait_server(w, r);
  t0 = mono_ns();
  for (i = 1; i <= count; i++) {
    std_srvs_srv_dds__SetBool_Request_ req;
    std_srvs_srv_dds__SetBool_Response_ resp;
    req.client_guid = (uint64_t)me;
    req.sequence_number = i;
    req.data = (i % 2) == 1;
    CY_OK(dds_write(w, &req));
    memset(&resp, 0, sizeof resp);
    for (;;) {
      if (!take_one(r, ws, &resp)) {
        fprintf(stderr, "%s: no response to request %ld\n", g_prog, i);
        return EXIT_TIMEOUT;
      }
      if (resp.client_guid == (uint64_t)me && resp.sequence_number == i) break;
    }
    if (!g_quiet) printf("response %lld %d %s\n", (long long)resp.sequence_number, (int)resp.success, resp.message ? resp.message : "");
    dds_sample_free(&resp, &std_srvs_srv_dds__SetBool_Response__desc, DDS_FREE_CONTENTS);
  }
  fprintf(stderr, "%s: %ld calls, mean round trip %.1f us\n", g_prog, count, (double)(mono_ns() - t0) / 1e3 / (double)count);
  return EXIT_OK;
}

static int run_setparam(cy_node *n, const char *target, const char *name, const char *value) {
  char service[256], rq[300], rr[300];
  rcl_interfaces_msg_dds__Parameter_ p;
  rcl_interfaces_srv_dds__SetParameters_Request_ req;
  rcl_interfaces_srv_dds__SetParameters_Response_ resp;
  dds_instance_handle_t me;
  char *end;
  long long iv;
  snprintf(service, sizeof service, "%s/set_parameters", target);
  svc_topics(service, rq, rr, sizeof rq);
  dds_entity_t tq = cy_topic(n, &rcl_interfaces_srv_dds__SetParameters_Request__desc, rq);
  dds_entity_t tr = cy_topic(n, &rcl_interfaces_srv_dds__SetParameters_Response__desc, rr);
  dds_entity_t w = cy_writer(n, tq, 1, 1000, 0);
  dds_entity_t r = cy_reader(n, tr, 1, 1000, 0);
  dds_entity_t ws = cy_waitset(n, r);
  cy_announce(n, &r, 1, &w, 1);
  CY_OK(dds_get_instance_handle(w, &me));
  wait_server(w, r);
  memset(&p, 0, sizeof p);
  p.name = (char *)name;
  p.value.string_value = (char *)"";
  iv = strtoll(value, &end, 10);
  if (strcmp(value, "true") == 0 || strcmp(value, "false") == 0) {
    p.value.type = 1;
    p.value.bool_value = strcmp(value, "true") == 0;
  } else if (*value && *end == 0) {
    p.value.type = 2;
    p.value.integer_value = iv;
  } else {
    p.value.type = 4;
    p.value.string_value = (char *)value;
  }
  memset(&req, 0, sizeof req);
  req.client_guid = (uint64_t)me;
  req.sequence_number = 1;
  req.parameters._buffer = &p;
  req.parameters._length = req.parameters._maximum = 1;
  CY_OK(dds_write(w, &req));
  memset(&resp, 0, sizeof resp);
  for (;;) {
    if (!take_one(r, ws, &resp)) {
      fprintf(stderr, "%s: no response from %s\n", g_prog, service);
      return EXIT_TIMEOUT;
    }
    if (resp.client_guid == (uint64_t)me && resp.sequence_number == 1) break;
  }
  if (resp.results._length != 1) fatal("%u results", resp.results._length);
  printf("result %d %s\n", (int)resp.results._buffer[0].successful,
         resp.results._buffer[0].reason ? resp.results._buffer[0].reason : "");
  dds_sample_free(&resp, &rcl_interfaces_srv_dds__SetParameters_Response__desc, DDS_FREE_CONTENTS);
  nap(200000000);
  return EXIT_OK;
}

static int run_paramserver(cy_node *n, const char *target) {
  char service[256], rq[300], rr[300];
  snprintf(service, sizeof service, "%s/get_parameters", target);
  svc_topics(service, rq, rr, sizeof rq);
  dds_entity_t tq = cy_topic(n, &rcl_interfaces_srv_dds__GetParameters_Request__desc, rq);
  dds_entity_t tr = cy_topic(n, &rcl_interfaces_srv_dds__GetParameters_Response__desc, rr);
  dds_entity_t r = cy_reader(n, tq, 1, 1000, 0);
  dds_entity_t w = cy_writer(n, tr, 1, 1000, 0);
  dds_entity_t ws = cy_waitset(n, r);
  rcl_interfaces_srv_dds__GetParameters_Request_ req;
  cy_announce(n, &r, 1, &w, 1);
  fprintf(stderr, "%s: serving %s\n", g_prog, service);
  memset(&req, 0, sizeof req);
  while (take_one(r, ws, &req)) {
    rcl_interfaces_srv_dds__GetParameters_Response_ resp;
    rcl_interfaces_msg_dds__ParameterValue_ vals[16];
    uint32_t i, k = req.names._length < 16 ? req.names._length : 16;
    memset(&resp, 0, sizeof resp);
    memset(vals, 0, sizeof vals);
    printf("get");
    for (i = 0; i < k; i++) {
      const char *name = req.names._buffer[i];
      printf(" %s", name);
      vals[i].string_value = (char *)"";
      if (strcmp(name, "use_sim_time") == 0) vals[i].type = 1;
      else if (strcmp(name, "answer") == 0) { vals[i].type = 2; vals[i].integer_value = 42; }
      else if (strcmp(name, "vendor") == 0) { vals[i].type = 4; vals[i].string_value = (char *)VENDOR; }
    }
    printf("\n");
    resp.client_guid = req.client_guid;
    resp.sequence_number = req.sequence_number;
    resp.values._buffer = vals;
    resp.values._length = resp.values._maximum = k;
    cy_wait_readers(w, 1, 1.0);
    CY_OK(dds_write(w, &resp));
  }
  dds_sample_free(&req, &rcl_interfaces_srv_dds__GetParameters_Request__desc, DDS_FREE_CONTENTS);
  return EXIT_OK;
}

int main(int argc, char **argv) {
  common_opts c;
  const char *mode = "server", *service = "/nros_svc", *target = "/simtimer", *param = "use_sim_time", *value = "true";
  double timeout = 30;
  long count = 0;
  int mute = 0, rc;
  g_prog = "svc_cyclone";
  common_defaults(&c, g_prog);
  {
    const flag_t fl[] = {
      {"mode", FLAG_STRING, &mode, "server | client | setparam | paramserver (server)"},
      {"service", FLAG_STRING, &service, "ROS service name (/nros_svc)"},
      {"count", FLAG_INT, &count, "requests to answer or make (server: 0 = until --timeout)"},
      {"mute", FLAG_BOOL, &mute, "server: take requests, never answer"},
      {"quiet", FLAG_BOOL, &g_quiet, "client: print no line per response (the mean round trip still goes to stderr)"},
      {"target", FLAG_STRING, &target, "setparam: the node's fully qualified name (/simtimer)"},
      {"param", FLAG_STRING, &param, "setparam: parameter name (use_sim_time)"},
      {"value", FLAG_STRING, &value, "setparam: value (true)"},
      {"timeout", FLAG_DOUBLE, &timeout, "seconds to run (30)"},
      COMMON_FLAGS(c),
    };
    flags_parse(argc, argv, 1, "[flags]", fl, sizeof fl / sizeof fl[0]);
  }
  common_check(&c);
  setvbuf(stdout, NULL, _IOLBF, 0);
  g_deadline = mono_ns() + secs_to_ns(timeout);
  cy_node n = cy_node_new(&c);
  if (strcmp(mode, "server") == 0) rc = run_server(&n, service, count, mute);
  else if (strcmp(mode, "client") == 0) rc = run_client(&n, service, count > 0 ? count : 1);
  else if (strcmp(mode, "setparam") == 0) rc = run_setparam(&n, target, param, value);
  else if (strcmp(mode, "paramserver") == 0) rc = run_paramserver(&n, target);
  else fatal("unknown --mode %s", mode);
  cy_node_close(&n);
  return rc;
}
