// action_fastdds - the Fast DDS 2.9 twin of action_cyclone: a ROS 2 action
// peer for test_msgs/action/Fibonacci the way rmw_fastrtps puts an action on
// the wire. The services send_goal, get_result and cancel_goal under
// <action>/_action/ use Fast DDS's request/reply mapping, as svc_fastdds:
// plain bodies, the request named by its writer GUID and sequence number,
// the reply carrying them as its related sample identity. Feedback topic
// (RELIABLE VOLATILE KEEP_LAST 10) and status topic (RELIABLE
// TRANSIENT_LOCAL KEEP_LAST 1) as action_cyclone.
//
// Flags, behaviour, stdout lines and exit codes are action_cyclone's (see
// its head comment and interop/README.md):
//   --mode server   "goal <uuid> <order> accepted|rejected",
//                   "cancel <uuid|all> <return_code> <n>",
//                   "result <uuid> <status> <len>"
//   --mode client   "accepted <0|1>", "status <code>", "feedback <len>",
//                   "cancel <return_code> <n>", "result <status> <s0,s1,...>"
// The two only differ in their waiting: this one polls its readers every
// POLL_NS instead of sleeping on a waitset.
#include "fastdds.hpp"

#include <fastdds/rtps/common/SampleIdentity.h>
#include <fastdds/rtps/common/WriteParams.h>

enum { ST_UNKNOWN, ST_ACCEPTED, ST_EXECUTING, ST_CANCELING, ST_SUCCEEDED, ST_CANCELED, ST_ABORTED };
enum { CANCEL_NONE, CANCEL_REJECTED, CANCEL_UNKNOWN_GOAL_ID, CANCEL_GOAL_TERMINATED };

#define MAX_ORDER 40  // fib(40) still fits an int32
#define MAX_GOALS 256
#define MAX_PENDING 256
#define GRACE_NS 500000000LL
#define POLL_NS 2000000LL

static int64_t g_deadline;

// ---------------------------------------------------------------------
// messages (XCDR1 bodies, no request header)

struct Uuid {
  uint8_t b[16] = {0};
};
struct GoalInfo {  // action_msgs/GoalInfo
  Uuid id;
  int32_t sec = 0;
  uint32_t nanosec = 0;
};
struct GoalReq {  // Fibonacci_SendGoal_Request
  Uuid id;
  int32_t order = 0;
};
struct GoalResp {  // Fibonacci_SendGoal_Response
  bool accepted = false;
  int32_t sec = 0;
  uint32_t nanosec = 0;
};
struct ResultReq {  // Fibonacci_GetResult_Request
  Uuid id;
};
struct ResultResp {  // Fibonacci_GetResult_Response
  int8_t status = 0;
  std::vector<int32_t> seq;
};
struct CancelReq {  // action_msgs/CancelGoal_Request
  GoalInfo info;
};
struct CancelResp {  // action_msgs/CancelGoal_Response
  int8_t rc = 0;
  std::vector<GoalInfo> canceling;
};
struct FeedbackMsg {  // Fibonacci_FeedbackMessage
  Uuid id;
  std::vector<int32_t> seq;
};
struct GoalStatus {  // action_msgs/GoalStatus
  GoalInfo info;
  int8_t status = 0;
};
struct StatusArray {  // action_msgs/GoalStatusArray
  std::vector<GoalStatus> list;
};

inline size_t body_bound(const GoalReq &) { return 20; }
inline size_t body_bound(const GoalResp &) { return 12; }
inline size_t body_bound(const ResultReq &) { return 16; }
inline size_t body_bound(const ResultResp &m) { return 8 + 4 * m.seq.size(); }
inline size_t body_bound(const CancelReq &) { return 24; }
inline size_t body_bound(const CancelResp &m) { return 8 + 24 * m.canceling.size(); }
inline size_t body_bound(const FeedbackMsg &m) { return 20 + 4 * m.seq.size(); }
inline size_t body_bound(const StatusArray &m) { return 4 + 28 * m.list.size(); }

static void put_uuid(CdrOut &o, const Uuid &u) { o.raw(u.b, 16); }
static void get_uuid(CdrIn &in, Uuid &u) {
  const uint8_t *p = in.take(16);
  if (p) memcpy(u.b, p, 16);
}
static void put_info(CdrOut &o, const GoalInfo &g) {
  put_uuid(o, g.id);
  o.u32((uint32_t)g.sec);
  o.u32(g.nanosec);
}
static void get_info(CdrIn &in, GoalInfo &g) {
  get_uuid(in, g.id);
  g.sec = (int32_t)in.u32();
  g.nanosec = in.u32();
}
static void put_seq(CdrOut &o, const std::vector<int32_t> &v) {
  o.u32((uint32_t)v.size());
  for (int32_t x : v) o.u32((uint32_t)x);
}
static void get_seq(CdrIn &in, std::vector<int32_t> &v) {
  v.resize(in.count(4));
  for (auto &x : v) x = (int32_t)in.u32();
}

inline void encode(CdrOut &o, const GoalReq &m) {
  put_uuid(o, m.id);
  o.u32((uint32_t)m.order);
}
inline void decode(CdrIn &in, GoalReq &m) {
  get_uuid(in, m.id);
  m.order = (int32_t)in.u32();
}
inline void encode(CdrOut &o, const GoalResp &m) {
  o.byte(m.accepted);
  o.u32((uint32_t)m.sec);
  o.u32(m.nanosec);
}
inline void decode(CdrIn &in, GoalResp &m) {
  m.accepted = in.uint(1) != 0;
  m.sec = (int32_t)in.u32();
  m.nanosec = in.u32();
}
inline void encode(CdrOut &o, const ResultReq &m) { put_uuid(o, m.id); }
inline void decode(CdrIn &in, ResultReq &m) { get_uuid(in, m.id); }
inline void encode(CdrOut &o, const ResultResp &m) {
  o.byte((uint8_t)m.status);
  put_seq(o, m.seq);
}
inline void decode(CdrIn &in, ResultResp &m) {
  m.status = (int8_t)in.uint(1);
  get_seq(in, m.seq);
}
inline void encode(CdrOut &o, const CancelReq &m) { put_info(o, m.info); }
inline void decode(CdrIn &in, CancelReq &m) { get_info(in, m.info); }
inline void encode(CdrOut &o, const CancelResp &m) {
  o.byte((uint8_t)m.rc);
  o.u32((uint32_t)m.canceling.size());
  for (const auto &g : m.canceling) put_info(o, g);
}
inline void decode(CdrIn &in, CancelResp &m) {
  m.rc = (int8_t)in.uint(1);
  m.canceling.resize(in.count(24));
  for (auto &g : m.canceling) get_info(in, g);
}
inline void encode(CdrOut &o, const FeedbackMsg &m) {
  put_uuid(o, m.id);
  put_seq(o, m.seq);
}
inline void decode(CdrIn &in, FeedbackMsg &m) {
  get_uuid(in, m.id);
  get_seq(in, m.seq);
}
inline void encode(CdrOut &o, const StatusArray &m) {
  o.u32((uint32_t)m.list.size());
  for (const auto &s : m.list) {
    put_info(o, s.info);  // starts 4-aligned: u32 aligns after the int8
    o.byte((uint8_t)s.status);
  }
}
inline void decode(CdrIn &in, StatusArray &m) {
  m.list.resize(in.count(25));
  for (auto &s : m.list) {
    get_info(in, s.info);
    s.status = (int8_t)in.uint(1);
  }
}

// ---------------------------------------------------------------------
// topics and helpers

// The eight DDS topics of one action.
struct ActionTopics {
  fdds::Topic *goal_q, *goal_r, *result_q, *result_r, *cancel_q, *cancel_r, *feedback, *status;
};

static ActionTopics action_topics(FdNode &n, const char *action) {
  const char *a = action[0] == '/' ? action + 1 : action;
  if (*a == 0 || strlen(a) > 200) fatal("bad --action '%s'", action);
  std::string p = std::string("/") + a + "/_action/";
  ActionTopics t;
  t.goal_q = n.topic<GoalReq>("test_msgs::action::dds_::Fibonacci_SendGoal_Request_", 20, ("rq" + p + "send_goalRequest").c_str());
  t.goal_r = n.topic<GoalResp>("test_msgs::action::dds_::Fibonacci_SendGoal_Response_", 12, ("rr" + p + "send_goalReply").c_str());
  t.result_q = n.topic<ResultReq>("test_msgs::action::dds_::Fibonacci_GetResult_Request_", 16, ("rq" + p + "get_resultRequest").c_str());
  t.result_r = n.topic<ResultResp>("test_msgs::action::dds_::Fibonacci_GetResult_Response_", 176, ("rr" + p + "get_resultReply").c_str());
  t.cancel_q = n.topic<CancelReq>("action_msgs::srv::dds_::CancelGoal_Request_", 24, ("rq" + p + "cancel_goalRequest").c_str());
  t.cancel_r = n.topic<CancelResp>("action_msgs::srv::dds_::CancelGoal_Response_", 64, ("rr" + p + "cancel_goalReply").c_str());
  t.feedback = n.topic<FeedbackMsg>("test_msgs::action::dds_::Fibonacci_FeedbackMessage_", 184, ("rt" + p + "feedback").c_str());
  t.status = n.topic<StatusArray>("action_msgs::msg::dds_::GoalStatusArray_", 64, ("rt" + p + "status").c_str());
  return t;
}

static bool uuid_zero(const Uuid &u) {
  for (int k = 0; k < 16; k++)
    if (u.b[k]) return false;
  return true;
}
static bool uuid_eq(const Uuid &a, const Uuid &b) { return memcmp(a.b, b.b, 16) == 0; }
static const char *uuid_hex(const Uuid &u, char *out) {
  for (int k = 0; k < 16; k++) snprintf(out + 2 * k, 3, "%02x", u.b[k]);
  return out;
}
static bool terminal(int status) { return status >= ST_SUCCEEDED; }
static int64_t sn64(const frtps::SequenceNumber_t &sn) { return ((int64_t)sn.high << 32) | sn.low; }

// Takes the next valid sample of r, if any.
template <class T>
static bool take(fdds::DataReader *r, T &m, fdds::SampleInfo &info) {
  while (r->take_next_sample(&m, &info) == ReturnCode_t::RETCODE_OK)
    if (info.valid_data) return true;
  return false;
}

// The identity a reply names: the related GUID of the request when it has
// one (rmw_fastrtps puts its reply reader there), else the request writer;
// the request's sequence number.
static frtps::SampleIdentity reply_to(const fdds::SampleInfo &info) {
  frtps::SampleIdentity to;
  to.writer_guid(info.related_sample_identity.writer_guid() != frtps::GUID_t::unknown()
                     ? info.related_sample_identity.writer_guid()
                     : info.sample_identity.writer_guid());
  to.sequence_number(info.sample_identity.sequence_number());
  return to;
}

// A service reply: waits (up to 1 s) for a matched reader first, as the
// svc_fastdds server does.
template <class T>
static void reply(fdds::DataWriter *w, T &m, const frtps::SampleIdentity &to) {
  frtps::WriteParams wp;
  wp.related_sample_identity(to);
  fd_wait_readers(w, 1, 1.0);
  if (!w->write(&m, wp)) fatal("write reply on %s failed", w->get_topic()->get_name().c_str());
}

template <class T>
static void publish(fdds::DataWriter *w, T &m) {
  if (!w->write(&m)) fatal("write on %s failed", w->get_topic()->get_name().c_str());
}

// ---------------------------------------------------------------------
// server

struct Goal {
  GoalInfo info;
  int order = 0, i = 1;  // rclcpp's loop: for (i = 1; i < order; ++i)
  int8_t status = ST_UNKNOWN;
  std::vector<int32_t> seq;
  int64_t next_step = 0;
};

struct Pending {
  frtps::SampleIdentity to;
  size_t goal;
};

struct Server {
  fdds::DataReader *goal_rq, *result_rq, *cancel_rq;
  fdds::DataWriter *goal_rr, *result_rr, *cancel_rr, *fb, *st;
  int64_t step = 0;
  std::vector<Goal> goals;
  std::vector<Pending> pending;

  int find(const Uuid &id) const {
    for (size_t k = 0; k < goals.size(); k++)
      if (uuid_eq(goals[k].info.id, id)) return (int)k;
    return -1;
  }

  void publish_status() {
    StatusArray m;
    for (const auto &g : goals) {
      GoalStatus s;
      s.info = g.info;
      s.status = g.status;
      m.list.push_back(s);
    }
    publish(st, m);
  }

  // Answers one get_result request; g null: unknown goal id.
  void send_result(const frtps::SampleIdentity &to, const Uuid &id, const Goal *g) {
    ResultResp r;
    char hex[33];
    r.status = g ? g->status : (int8_t)ST_UNKNOWN;
    if (g) r.seq = g->seq;
    reply(result_rr, r, to);
    printf("result %s %d %zu\n", uuid_hex(id, hex), (int)r.status, r.seq.size());
  }

  // Moves goal k to a terminal status: status array first, then the held
  // result requests.
  void finish(size_t k, int status) {
    goals[k].status = (int8_t)status;
    publish_status();
    std::vector<Pending> keep;
    for (const auto &p : pending) {
      if (p.goal == k) send_result(p.to, goals[k].info.id, &goals[k]);
      else keep.push_back(p);
    }
    pending.swap(keep);
  }

  void on_goal(const GoalReq &q, const frtps::SampleIdentity &to) {
    GoalResp r;
    char hex[33];
    uuid_hex(q.id, hex);
    if (q.order < 0 || q.order > MAX_ORDER || goals.size() == MAX_GOALS || find(q.id) >= 0) {
      r.accepted = false;
      reply(goal_rr, r, to);
      printf("goal %s %d rejected\n", hex, (int)q.order);
      return;
    }
    Goal g;
    g.info.id = q.id;
    split_time(wall_ns(), &g.info.sec, &g.info.nanosec);
    g.order = q.order;
    g.seq = {0, 1};
    g.status = ST_ACCEPTED;
    g.next_step = mono_ns() + step;
    goals.push_back(g);
    r.accepted = true;
    r.sec = g.info.sec;
    r.nanosec = g.info.nanosec;
    reply(goal_rr, r, to);
    printf("goal %s %d accepted\n", hex, (int)q.order);
    publish_status();
    goals.back().status = ST_EXECUTING;
    publish_status();
  }

  void on_result(const ResultReq &q, const frtps::SampleIdentity &to) {
    int k = find(q.id);
    if (k < 0) send_result(to, q.id, nullptr);
    else if (terminal(goals[k].status)) send_result(to, q.id, &goals[k]);
    else if (pending.size() == MAX_PENDING) fprintf(stderr, "%s: too many result requests held, dropping one\n", g_prog);
    else pending.push_back(Pending{to, (size_t)k});
  }

  // rcl_action_process_cancel_request, then every goal it names accepted
  // for canceling (rclcpp with a handle_cancel that always accepts).
  void on_cancel(const CancelReq &q, const frtps::SampleIdentity &to) {
    CancelResp r;
    const Uuid &id = q.info.id;
    int64_t stamp = (int64_t)q.info.sec * NS_PER_S + (int64_t)q.info.nanosec;
    int rc;
    char hex[33];
    auto cancelable = [](const Goal &g) { return g.status == ST_ACCEPTED || g.status == ST_EXECUTING; };
    auto mark = [&r](Goal &g) {
      r.canceling.push_back(g.info);
      g.status = ST_CANCELING;
    };
    if (!uuid_zero(id) && stamp == 0) {
      int k = find(id);
      if (k < 0) rc = CANCEL_UNKNOWN_GOAL_ID;
      else if (!cancelable(goals[k])) rc = CANCEL_GOAL_TERMINATED;
      else { rc = CANCEL_NONE; mark(goals[k]); }
    } else {
      rc = CANCEL_NONE;
      if (uuid_zero(id) && stamp == 0) stamp = INT64_MAX;
      for (auto &g : goals) {
        int64_t t = (int64_t)g.info.sec * NS_PER_S + (int64_t)g.info.nanosec;
        if (cancelable(g) && (t <= stamp || uuid_eq(g.info.id, id))) mark(g);
      }
    }
    if (!r.canceling.empty()) publish_status();
    r.rc = (int8_t)rc;
    reply(cancel_rr, r, to);
    printf("cancel %s %d %zu\n", uuid_zero(id) ? "all" : uuid_hex(id, hex), rc, r.canceling.size());
  }

  // One step of goal k: CANCELING -> CANCELED; else append and publish
  // feedback while i < order; else SUCCEEDED.
  void step_goal(size_t k) {
    Goal &g = goals[k];
    g.next_step += step;
    if (g.status == ST_CANCELING) {
      finish(k, ST_CANCELED);
    } else if (g.i < g.order) {
      g.seq.push_back(g.seq[g.i] + g.seq[g.i - 1]);
      g.i++;
      FeedbackMsg f;
      f.id = g.info.id;
      f.seq = g.seq;
      publish(fb, f);
    } else {
      finish(k, ST_SUCCEEDED);
    }
  }

  void serve_requests() {
    fdds::SampleInfo info;
    GoalReq gq;
    while (take(goal_rq, gq, info)) on_goal(gq, reply_to(info));
    CancelReq cq;
    while (take(cancel_rq, cq, info)) on_cancel(cq, reply_to(info));
    ResultReq rq;
    while (take(result_rq, rq, info)) on_result(rq, reply_to(info));
  }
};

static int run_server(FdNode &n, const char *action, long count, long step_ms) {
  if (step_ms < 1) fatal("--step-ms must be >= 1");
  ActionTopics t = action_topics(n, action);
  Server s;
  s.step = step_ms * 1000000LL;
  s.goal_rq = n.reader(t.goal_q, true, 10, false);
  s.result_rq = n.reader(t.result_q, true, 10, false);
  s.cancel_rq = n.reader(t.cancel_q, true, 10, false);
  s.goal_rr = n.writer(t.goal_r, true, 10, false);
  s.result_rr = n.writer(t.result_r, true, 10, false);
  s.cancel_rr = n.writer(t.cancel_r, true, 10, false);
  s.fb = n.writer(t.feedback, true, 10, false);
  s.st = n.writer(t.status, true, 1, true);
  n.announce({s.goal_rq, s.result_rq, s.cancel_rq}, {s.goal_rr, s.result_rr, s.cancel_rr, s.fb, s.st});
  fprintf(stderr, "%s: serving %s\n", g_prog, action);
  int64_t grace_end = 0;
  for (;;) {
    long done = 0;
    s.serve_requests();
    int64_t now = mono_ns();
    for (size_t k = 0; k < s.goals.size(); k++) {
      if (!terminal(s.goals[k].status) && s.goals[k].next_step <= now) s.step_goal(k);
      if (terminal(s.goals[k].status)) done++;
    }
    if (count > 0 && done >= count && s.pending.empty()) {
      if (grace_end == 0) grace_end = now + GRACE_NS;
      else if (now >= grace_end) return EXIT_OK;
    }
    if (now >= g_deadline) {
      fprintf(stderr, "%s: timeout, %ld of %ld goals done, %zu result requests held\n", g_prog, done, count, s.pending.size());
      return count == 0 ? EXIT_OK : EXIT_TIMEOUT;
    }
    nap(POLL_NS);
  }
}

// ---------------------------------------------------------------------
// client

static void random_uuid(Uuid &u) {
  FILE *f = fopen("/dev/urandom", "rb");
  bool ok = f && fread(u.b, 1, 16, f) == 16;
  if (f) fclose(f);
  if (!ok) {
    uint64_t x = (uint64_t)mono_ns() ^ ((uint64_t)wall_ns() << 1);
    for (int k = 0; k < 16; k++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      u.b[k] = (uint8_t)(x >> 56);
    }
  }
  u.b[6] = (uint8_t)((u.b[6] & 0x0f) | 0x40);  // version 4, as uuid4
  u.b[8] = (uint8_t)((u.b[8] & 0x3f) | 0x80);
}

// Parses 32 hex digits into u; returns 0 on success.
static int parse_uuid(const char *hex, Uuid &u) {
  if (strlen(hex) != 32) return -1;
  for (int k = 0; k < 16; k++) {
    unsigned v;
    if (!strchr("0123456789abcdefABCDEF", hex[2 * k]) || !strchr("0123456789abcdefABCDEF", hex[2 * k + 1]) ||
        sscanf(hex + 2 * k, "%2x", &v) != 1)
      return -1;
    u.b[k] = (uint8_t)v;
  }
  return 0;
}

// One service endpoint pair of the client.
struct Call {
  fdds::DataWriter *w;
  fdds::DataReader *r;
  int64_t seq = -1;  // the request's sequence number once sent

  // Sends req with the reply reader as the related identity (as
  // rmw_fastrtps does).
  template <class T>
  void send(T &req) {
    frtps::WriteParams wp;
    frtps::SampleIdentity rel;
    rel.writer_guid(r->guid());
    rel.sequence_number(frtps::SequenceNumber_t::unknown());
    wp.related_sample_identity(rel);
    if (!w->write(&req, wp)) fatal("write request on %s failed", w->get_topic()->get_name().c_str());
    seq = sn64(wp.sample_identity().sequence_number());
  }
  // Takes the next reply that names our request.
  template <class T>
  bool take_reply(T &m) {
    fdds::SampleInfo info;
    while (take(r, m, info)) {
      const auto &id = info.related_sample_identity;
      if (seq >= 0 && (id.writer_guid() == r->guid() || id.writer_guid() == w->guid()) && sn64(id.sequence_number()) == seq)
        return true;
    }
    return false;
  }
};

static int run_client(FdNode &n, const char *action, long order, long cancel_after, bool cancel_all, bool cancel_late,
                      const Uuid *cancel_id) {
  ActionTopics t = action_topics(n, action);
  Call goal{n.writer(t.goal_q, true, 10, false), n.reader(t.goal_r, true, 10, false)};
  Call result{n.writer(t.result_q, true, 10, false), n.reader(t.result_r, true, 10, false)};
  Call cancel{n.writer(t.cancel_q, true, 10, false), n.reader(t.cancel_r, true, 10, false)};
  fdds::DataReader *fb_r = n.reader(t.feedback, true, 10, false);
  fdds::DataReader *st_r = n.reader(t.status, true, 1, true);
  std::vector<fdds::DataReader *> readers = {goal.r, result.r, cancel.r, fb_r, st_r};
  std::vector<fdds::DataWriter *> writers = {goal.w, result.w, cancel.w};
  n.announce(readers, writers);
  auto left = []() { return (double)(g_deadline - mono_ns()) / 1e9; };
  for (auto *w : writers)
    if (fd_wait_readers(w, 1, left()) < 0) goto no_server;
  for (auto *r : readers)
    if (fd_wait_writers(r, 1, left()) < 0) goto no_server;
  fprintf(stderr, "%s: server matched\n", g_prog);
  nap(200000000);  // let the server's writers match our readers
  {
    Uuid id, cid;  // our goal; the one the cancel names
    char hex[33];
    int accepted = -1, status = -1, shown_status = -1;
    bool cancel_sent = false, cancel_done = false, got_result = false;
    long nfeedback = 0;
    ResultResp res;
    int64_t result_at = 0;
    random_uuid(id);
    uuid_hex(id, hex);
    cid = cancel_id ? *cancel_id : id;
    auto send_cancel = [&]() {
      CancelReq q;  // stamp zero; goal id zero with --cancel-all
      if (!cancel_all) q.info.id = cid;
      cancel.send(q);
      return true;
    };
    fprintf(stderr, "%s: goal %s order %ld\n", g_prog, hex, order);
    {
      GoalReq q;
      q.id = id;
      q.order = (int32_t)order;
      goal.send(q);
    }
    for (;;) {
      GoalResp gr;
      while (accepted < 0 && goal.take_reply(gr)) {
        accepted = gr.accepted ? 1 : 0;
        printf("accepted %d\n", accepted);
        if (accepted) {
          ResultReq q;
          q.id = id;
          result.send(q);
        }
      }
      if (accepted == 0) return EXIT_OK;
      {
        StatusArray sm;
        fdds::SampleInfo info;
        while (take(st_r, sm, info))
          for (const auto &s : sm.list)
            if (uuid_eq(s.info.id, id)) status = s.status;
      }
      // a status seen before the goal response is shown after "accepted"
      if (accepted == 1 && status != shown_status) {
        printf("status %d\n", status);
        shown_status = status;
      }
      {
        FeedbackMsg f;
        fdds::SampleInfo info;
        while (take(fb_r, f, info)) {
          if (!uuid_eq(f.id, id)) continue;
          nfeedback++;
          printf("feedback %zu\n", f.seq.size());
          if (cancel_after > 0 && nfeedback == cancel_after && !cancel_sent) cancel_sent = send_cancel();
        }
      }
      {
        CancelResp cr;
        while (!cancel_done && cancel.take_reply(cr)) {
          printf("cancel %d %zu\n", (int)cr.rc, cr.canceling.size());
          cancel_done = true;
        }
      }
      if (!got_result && result.take_reply(res)) {
        got_result = true;
        result_at = mono_ns();
        if (cancel_late && !cancel_sent) cancel_sent = send_cancel();
      }
      int64_t now = mono_ns();
      // the result may overtake the terminal status and the cancel reply
      // (other writers): wait up to 1 s for them before the result line
      if (got_result && ((terminal(shown_status) && (!cancel_sent || cancel_done)) || now >= result_at + NS_PER_S)) {
        printf("result %d", (int)res.status);
        for (size_t k = 0; k < res.seq.size(); k++) printf("%c%d", k ? ',' : ' ', (int)res.seq[k]);
        printf("\n");
        return EXIT_OK;
      }
      if (now >= g_deadline) {
        fprintf(stderr, "%s: %s within the timeout\n", g_prog, accepted < 0 ? "no goal response" : "no result");
        return EXIT_TIMEOUT;
      }
      nap(POLL_NS);
    }
  }
no_server:
  fprintf(stderr, "%s: no action server for %s within the timeout\n", g_prog, action);
  return EXIT_TIMEOUT;
}

int main(int argc, char **argv) {
  common_opts c;
  const char *mode = "server", *action = "/fibonacci", *cancel_id = NULL;
  Uuid cid;
  double timeout = 30;
  long count = 0, step_ms = 50, order = 10, cancel_after = 0;
  int cancel_all = 0, cancel_late = 0, rc = EXIT_OK;
  g_prog = "action_fastdds";
  common_defaults(&c, g_prog);
  {
    const flag_t fl[] = {
        {"mode", FLAG_STRING, &mode, "server | client (server)"},
        {"action", FLAG_STRING, &action, "ROS action name (/fibonacci)"},
        {"count", FLAG_INT, &count, "server: exit after N goals are terminal and their results sent (0 = at --timeout)"},
        {"step-ms", FLAG_INT, &step_ms, "server: milliseconds per Fibonacci step (50)"},
        {"order", FLAG_INT, &order, "client: the goal's order (10)"},
        {"cancel-after", FLAG_INT, &cancel_after, "client: cancel the goal after K feedback messages (0 = never)"},
        {"cancel-all", FLAG_BOOL, &cancel_all, "client: the cancel names every goal (goal id and stamp zero)"},
        {"cancel-id", FLAG_STRING, &cancel_id, "client: the cancel names this goal id (32 hex digits) instead of its own"},
        {"cancel-late", FLAG_BOOL, &cancel_late, "client: send the cancel once the result came (the goal is terminal)"},
        {"timeout", FLAG_DOUBLE, &timeout, "seconds to run (30)"},
        COMMON_FLAGS(c),
    };
    flags_parse(argc, argv, 1, "[flags]", fl, sizeof fl / sizeof fl[0]);
  }
  common_check(&c);
  if (order < INT32_MIN || order > INT32_MAX) fatal("--order out of range");
  if (cancel_id && parse_uuid(cancel_id, cid) < 0) fatal("--cancel-id wants 32 hex digits");
  setvbuf(stdout, NULL, _IOLBF, 0);
  g_deadline = mono_ns() + secs_to_ns(timeout);
  {
    FdNode n(c);
    if (strcmp(mode, "server") == 0) rc = run_server(n, action, count, step_ms);
    else if (strcmp(mode, "client") == 0) rc = run_client(n, action, order, cancel_after, cancel_all, cancel_late, cancel_id ? &cid : nullptr);
    else fatal("unknown --mode %s", mode);
  }
  return rc;
}
