// svc_fastdds - a ROS 2 service peer that speaks rmw_fastrtps's request-id
// mapping (Fast DDS 2.9): plain bodies, the request identity in the related
// sample identity (WriteParams / SampleInfo), the request sequence number
// being the request writer's. Modes and output as svc_cyclone:
//
//   --mode server    answers std_srvs/SetBool (message "fastdds <data>")
//   --mode client    calls it --count times
//   --mode setparam  calls <--target>/set_parameters as `ros2 param set`
//   --mode paramserver  serves <--target>/get_parameters (vendor "fastdds")
#include "fastdds.hpp"

#include <fastdds/rtps/common/SampleIdentity.h>
#include <fastdds/rtps/common/WriteParams.h>

struct SetBoolReq {  // std_srvs/SetBool request
  bool data = false;
};
struct SetBoolResp {  // std_srvs/SetBool response
  bool success = false;
  std::string message;
};
struct Param {  // rcl_interfaces/Parameter with the scalar values only
  std::string name;
  uint8_t type = 0;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string s;
};
struct SetParamsReq {
  std::vector<Param> params;
};
struct ParamResult {
  bool ok = false;
  std::string reason;
};
struct SetParamsResp {
  std::vector<ParamResult> results;
};

struct GetParamsReq {
  std::vector<std::string> names;
};
struct GetParamsResp {
  std::vector<Param> values;  // names unused
};

inline size_t body_bound(const GetParamsReq &m) {
  size_t z = 4;
  for (const auto &n : m.names) z += 8 + n.size();
  return z;
}
inline size_t body_bound(const GetParamsResp &m) {
  size_t z = 4;
  for (const auto &p : m.values) z += 8 + 8 + 8 + 8 + p.s.size() + 1 + 8 + 20;
  return z;
}
inline size_t body_bound(const SetBoolReq &) { return 1; }
inline size_t body_bound(const SetBoolResp &m) { return 1 + 3 + 4 + m.message.size() + 1; }
inline size_t body_bound(const SetParamsReq &m) {
  size_t z = 4;
  for (const auto &p : m.params) z += 8 + p.name.size() + 1 + 8 + 8 + 8 + 8 + p.s.size() + 1 + 8 + 20;
  return z;
}
inline size_t body_bound(const SetParamsResp &m) {
  size_t z = 4;
  for (const auto &r : m.results) z += 8 + r.reason.size() + 1;
  return z;
}

inline void encode(CdrOut &o, const SetBoolReq &m) { o.byte(m.data); }
inline void decode(CdrIn &in, SetBoolReq &m) { m.data = in.uint(1) != 0; }
inline void encode(CdrOut &o, const SetBoolResp &m) {
  o.byte(m.success);
  o.str(m.message);
}
inline void decode(CdrIn &in, SetBoolResp &m) {
  m.success = in.uint(1) != 0;
  m.message = in.str();
}
inline void encode(CdrOut &o, const SetParamsReq &m) {
  o.u32((uint32_t)m.params.size());
  for (const auto &p : m.params) {
    int64_t bits;
    o.str(p.name);
    o.byte(p.type);
    o.byte(p.b);
    o.i64(p.i);
    memcpy(&bits, &p.d, 8);
    o.i64(bits);
    o.str(p.s);
    for (int k = 0; k < 5; k++) o.u32(0);  // the five arrays, empty
  }
}
// rcl_interfaces/ParameterValue with empty arrays.
inline void encode_value(CdrOut &o, const Param &p) {
  int64_t bits;
  o.byte(p.type);
  o.byte(p.b);
  o.i64(p.i);
  memcpy(&bits, &p.d, 8);
  o.i64(bits);
  o.str(p.s);
  for (int k = 0; k < 5; k++) o.u32(0);
}
inline void encode(CdrOut &o, const GetParamsReq &m) {
  o.u32((uint32_t)m.names.size());
  for (const auto &n : m.names) o.str(n);
}
inline void decode(CdrIn &in, GetParamsReq &m) {
  m.names.resize(in.count(5));
  for (auto &n : m.names) n = in.str();
}
inline void encode(CdrOut &o, const GetParamsResp &m) {
  o.u32((uint32_t)m.values.size());
  for (const auto &p : m.values) encode_value(o, p);
}
inline void decode(CdrIn &in, GetParamsResp &m) { m.values.resize(in.count(40)); }  // not read by this peer
inline void decode(CdrIn &in, SetParamsReq &m) { m.params.resize(in.count(40)); }  // not read by this peer
inline void encode(CdrOut &o, const SetParamsResp &m) { o.u32((uint32_t)m.results.size()); }
inline void decode(CdrIn &in, SetParamsResp &m) {
  m.results.resize(in.count(5));
  for (auto &r : m.results) {
    r.ok = in.uint(1) != 0;
    r.reason = in.str();
  }
}

static int64_t g_deadline;

static void svc_topics(const std::string &service, std::string &rq, std::string &rr) {
  std::string s = service[0] == '/' ? service : "/" + service;
  rq = "rq" + s + "Request";
  rr = "rr" + s + "Reply";
}

static double left_s() { return (double)(g_deadline - mono_ns()) / 1e9; }

static void wait_server(fdds::DataWriter *w, fdds::DataReader *r) {
  if (fd_wait_readers(w, 1, left_s()) < 0 || fd_wait_writers(r, 1, left_s()) < 0) fatal("no server within the timeout");
  fprintf(stderr, "%s: server matched\n", g_prog);
  nap(200000000);  // let the server's reply writer match our reader
}

// Takes the next valid sample of r before the deadline.
template <class T>
static bool take_one(fdds::DataReader *r, T &m, fdds::SampleInfo &info) {
  for (;;) {
    int64_t left = g_deadline - mono_ns();
    if (left <= 0) return false;
    r->wait_for_unread_message(fd_duration(left < 50000000 ? left : 50000000));
    while (r->take_next_sample(&m, &info) == ReturnCode_t::RETCODE_OK)
      if (info.valid_data) return true;
  }
}

static int64_t sn64(const frtps::SequenceNumber_t &sn) { return ((int64_t)sn.high << 32) | sn.low; }

static int run_server(FdNode &n, const std::string &service, long count, bool mute) {
  std::string rq, rr;
  svc_topics(service, rq, rr);
  fdds::Topic *tq = n.topic<SetBoolReq>("std_srvs::srv::dds_::SetBool_Request_", 8, rq.c_str());
  fdds::Topic *tr = n.topic<SetBoolResp>("std_srvs::srv::dds_::SetBool_Response_", 64, rr.c_str());
  fdds::DataReader *r = n.reader(tq, true, 10, false);
  fdds::DataWriter *w = n.writer(tr, true, 10, false);
  n.announce({r}, {w});
  fprintf(stderr, "%s: serving %s\n", g_prog, service.c_str());
  long answered = 0;
  while (count == 0 || answered < count) {
    SetBoolReq req;
    fdds::SampleInfo info;
    if (!take_one(r, req, info)) break;
    printf("request %lld %d\n", (long long)sn64(info.sample_identity.sequence_number()), (int)req.data);
    if (mute) continue;
    // Reply to the related GUID when there is one, else to the writer.
    frtps::SampleIdentity to;
    to.writer_guid(info.related_sample_identity.writer_guid() != frtps::GUID_t::unknown()
                       ? info.related_sample_identity.writer_guid()
                       : info.sample_identity.writer_guid());
    to.sequence_number(info.sample_identity.sequence_number());
    frtps::WriteParams wp;
    wp.related_sample_identity(to);
    SetBoolResp resp;
    resp.success = req.data;
    resp.message = std::string("fastdds ") + (req.data ? "true" : "false");
    fd_wait_readers(w, 1, 1.0);
    if (!w->write(&resp, wp)) fatal("write response failed");
    answered++;
  }
  nap(300000000);
  return count == 0 || answered >= count ? EXIT_OK : EXIT_TIMEOUT;
}

// Sends req with the response reader as the related identity (as
// rmw_fastrtps does) and waits for the response that names it.
template <class Req, class Resp>
static bool call(fdds::DataWriter *w, fdds::DataReader *r, Req &req, Resp &resp, int64_t *seq) {
  frtps::WriteParams wp;
  frtps::SampleIdentity rel;
  rel.writer_guid(r->guid());
  rel.sequence_number(frtps::SequenceNumber_t::unknown());
  wp.related_sample_identity(rel);
  if (!w->write(&req, wp)) fatal("write request failed");
  *seq = sn64(wp.sample_identity().sequence_number());
  for (;;) {
    fdds::SampleInfo info;
    if (!take_one(r, resp, info)) return false;
    const auto &id = info.related_sample_identity;
    if ((id.writer_guid() == r->guid() || id.writer_guid() == w->guid()) && sn64(id.sequence_number()) == *seq) return true;
  }
}

static int run_client(FdNode &n, const std::string &service, long count) {
  std::string rq, rr;
  svc_topics(service, rq, rr);
  fdds::Topic *tq = n.topic<SetBoolReq>("std_srvs::srv::dds_::SetBool_Request_", 8, rq.c_str());
  fdds::Topic *tr = n.topic<SetBoolResp>("std_srvs::srv::dds_::SetBool_Response_", 64, rr.c_str());
  fdds::DataWriter *w = n.writer(tq, true, 10, false);
  fdds::DataReader *r = n.reader(tr, true, 10, false);
  n.announce({r}, {w});
  wait_server(w, r);
  for (long i = 1; i <= count; i++) {
    SetBoolReq req;
    SetBoolResp resp;
    int64_t seq;
    req.data = (i % 2) == 1;
    if (!call(w, r, req, resp, &seq)) {
      fprintf(stderr, "%s: no response to request %ld\n", g_prog, i);
      return EXIT_TIMEOUT;
    }
    printf("response %lld %d %s\n", (long long)seq, (int)resp.success, resp.message.c_str());
  }
  return EXIT_OK;
}

static int run_setparam(FdNode &n, const std::string &target, const std::string &name, const std::string &value) {
  std::string rq, rr, service = target + "/set_parameters";
  svc_topics(service, rq, rr);
  fdds::Topic *tq = n.topic<SetParamsReq>("rcl_interfaces::srv::dds_::SetParameters_Request_", 128, rq.c_str());
  fdds::Topic *tr = n.topic<SetParamsResp>("rcl_interfaces::srv::dds_::SetParameters_Response_", 64, rr.c_str());
  fdds::DataWriter *w = n.writer(tq, true, 1000, false);
  fdds::DataReader *r = n.reader(tr, true, 1000, false);
  n.announce({r}, {w});
  wait_server(w, r);
  SetParamsReq req;
  Param p;
  p.name = name;
  char *end = nullptr;
  long long iv = strtoll(value.c_str(), &end, 10);
  if (value == "true" || value == "false") {
    p.type = 1;
    p.b = value == "true";
  } else if (!value.empty() && *end == 0) {
    p.type = 2;
    p.i = iv;
  } else {
    p.type = 4;
    p.s = value;
  }
  req.params.push_back(p);
  SetParamsResp resp;
  int64_t seq;
  if (!call(w, r, req, resp, &seq)) {
    fprintf(stderr, "%s: no response from %s\n", g_prog, service.c_str());
    return EXIT_TIMEOUT;
  }
  if (resp.results.size() != 1) fatal("%zu results", resp.results.size());
  printf("result %d %s\n", (int)resp.results[0].ok, resp.results[0].reason.c_str());
  nap(200000000);
  return EXIT_OK;
}

static int run_paramserver(FdNode &n, const std::string &target) {
  std::string rq, rr, service = target + "/get_parameters";
  svc_topics(service, rq, rr);
  fdds::Topic *tq = n.topic<GetParamsReq>("rcl_interfaces::srv::dds_::GetParameters_Request_", 64, rq.c_str());
  fdds::Topic *tr = n.topic<GetParamsResp>("rcl_interfaces::srv::dds_::GetParameters_Response_", 128, rr.c_str());
  fdds::DataReader *r = n.reader(tq, true, 1000, false);
  fdds::DataWriter *w = n.writer(tr, true, 1000, false);
  n.announce({r}, {w});
  fprintf(stderr, "%s: serving %s\n", g_prog, service.c_str());
  GetParamsReq req;
  fdds::SampleInfo info;
  while (take_one(r, req, info)) {
    GetParamsResp resp;
    printf("get");
    for (const auto &name : req.names) {
      Param p;
      printf(" %s", name.c_str());
      if (name == "use_sim_time") p.type = 1;
      else if (name == "answer") { p.type = 2; p.i = 42; }
      else if (name == "vendor") { p.type = 4; p.s = VENDOR; }
      resp.values.push_back(p);
    }
    printf("\n");
    frtps::SampleIdentity to;
    to.writer_guid(info.related_sample_identity.writer_guid() != frtps::GUID_t::unknown()
                       ? info.related_sample_identity.writer_guid()
                       : info.sample_identity.writer_guid());
    to.sequence_number(info.sample_identity.sequence_number());
    frtps::WriteParams wp;
    wp.related_sample_identity(to);
    fd_wait_readers(w, 1, 1.0);
    if (!w->write(&resp, wp)) fatal("write response failed");
  }
  return EXIT_OK;
}

int main(int argc, char **argv) {
  common_opts c;
  const char *mode = "server", *service = "/nros_svc", *target = "/simtimer", *param = "use_sim_time", *value = "true";
  double timeout = 30;
  long count = 0;
  int mute = 0, rc = EXIT_OK;
  g_prog = "svc_fastdds";
  common_defaults(&c, g_prog);
  {
    const flag_t fl[] = {
        {"mode", FLAG_STRING, &mode, "server | client | setparam | paramserver (server)"},
        {"service", FLAG_STRING, &service, "ROS service name (/nros_svc)"},
        {"count", FLAG_INT, &count, "requests to answer or make (server: 0 = until --timeout)"},
        {"mute", FLAG_BOOL, &mute, "server: take requests, never answer"},
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
  {
    FdNode n(c);
    if (strcmp(mode, "server") == 0) rc = run_server(n, service, count, mute);
    else if (strcmp(mode, "client") == 0) rc = run_client(n, service, count > 0 ? count : 1);
    else if (strcmp(mode, "setparam") == 0) rc = run_setparam(n, target, param, value);
    else if (strcmp(mode, "paramserver") == 0) rc = run_paramserver(n, target);
    else fatal("unknown --mode %s", mode);
  }
  return rc;
}
