/* action_cyclone - a ROS 2 action peer for test_msgs/action/Fibonacci the
 * way rmw_cyclonedds puts an action on the wire (actions.idl): the
 * services send_goal, get_result and cancel_goal under <action>/_action/
 * (request id in front of the body, as svc_cyclone), the feedback topic
 * and the TRANSIENT_LOCAL KEEP_LAST 1 status topic.
 *
 *   --mode server   serves --action: rejects order < 0 or > 40 ("goal
 *                   <uuid> <order> rejected"), accepts the rest ("goal
 *                   <uuid> <order> accepted", stamp = wall time now,
 *                   status ACCEPTED then EXECUTING). Sequence [0, 1]; every
 *                   --step-ms, while i < order (i from 1), appends
 *                   seq[i] + seq[i-1] and publishes the whole sequence as
 *                   feedback; one step after the last append SUCCEEDED (as
 *                   rclcpp's Fibonacci example). A goal moved to CANCELING
 *                   becomes CANCELED at its next step, the partial
 *                   sequence as result. Cancel requests follow
 *                   rcl_action_process_cancel_request; every one is
 *                   accepted: "cancel <uuid|all> <return_code> <n>".
 *                   get_result is answered once the goal is terminal (at
 *                   once if it is, status 0 and no sequence if unknown):
 *                   "result <uuid> <status> <len>". The status array (all
 *                   goals, terminal ones too) goes out on every change.
 *                   Exits 0 when --count goals are terminal and no result
 *                   request waits (after 0.5 s more); at --timeout exits 0
 *                   with --count 0, else 3.
 *   --mode client   waits for the action server, sends one goal (--order,
 *                   random UUID): "accepted <0|1>" (rejected: exit 0). Then
 *                   get_result at once; "feedback <len>" per feedback of
 *                   its goal; after the --cancel-after'th one (or, with
 *                   --cancel-late, once the result came) a cancel of its
 *                   goal, stamp zero (--cancel-id HEX: that goal id instead;
 *                   --cancel-all: goal id zero, every goal): "cancel
 *                   <return_code> <n>";
 *                   "status <code>" whenever its goal's status on the
 *                   status topic changes; at last "result <status>
 *                   <s0,s1,...>" (exit 0). Exit 3 when the server or the
 *                   result does not come within --timeout.
 */
#include "cyclone.h"
#include "actions.h"

enum { ST_UNKNOWN, ST_ACCEPTED, ST_EXECUTING, ST_CANCELING, ST_SUCCEEDED, ST_CANCELED, ST_ABORTED };
enum { CANCEL_NONE, CANCEL_REJECTED, CANCEL_UNKNOWN_GOAL_ID, CANCEL_GOAL_TERMINATED };

#define MAX_ORDER 40       /* fib(40) still fits an int32 */
#define MAX_GOALS 256
#define MAX_PENDING 256
#define TAKE_N 16
#define GRACE_NS 500000000LL
#define POLL_NS 50000000LL

static int64_t g_deadline;

typedef test_msgs_action_dds__Fibonacci_SendGoal_Request_ goal_req;
typedef test_msgs_action_dds__Fibonacci_SendGoal_Response_ goal_resp;
typedef test_msgs_action_dds__Fibonacci_GetResult_Request_ result_req;
typedef test_msgs_action_dds__Fibonacci_GetResult_Response_ result_resp;
typedef action_msgs_srv_dds__CancelGoal_Request_ cancel_req;
typedef action_msgs_srv_dds__CancelGoal_Response_ cancel_resp;
typedef test_msgs_action_dds__Fibonacci_FeedbackMessage_ feedback_msg;
typedef action_msgs_msg_dds__GoalStatusArray_ status_msg;

/* The eight DDS topics of one action. */
typedef struct {
  dds_entity_t goal_q, goal_r, result_q, result_r, cancel_q, cancel_r, feedback, status;
} action_topics;

static action_topics action_topics_new(cy_node *n, const char *action) {
  action_topics t;
  char name[300];
  const char *a = action[0] == '/' ? action + 1 : action;
  if (*a == 0 || strlen(a) > 200) fatal("bad --action '%s'", action);
#define ACTION_TOPIC(field, fmt, desc)                                                         \
  snprintf(name, sizeof name, fmt, a);                                                         \
  t.field = cy_topic(n, &desc, name)
  ACTION_TOPIC(goal_q, "rq/%s/_action/send_goalRequest", test_msgs_action_dds__Fibonacci_SendGoal_Request__desc);
  ACTION_TOPIC(goal_r, "rr/%s/_action/send_goalReply", test_msgs_action_dds__Fibonacci_SendGoal_Response__desc);
  ACTION_TOPIC(result_q, "rq/%s/_action/get_resultRequest", test_msgs_action_dds__Fibonacci_GetResult_Request__desc);
  ACTION_TOPIC(result_r, "rr/%s/_action/get_resultReply", test_msgs_action_dds__Fibonacci_GetResult_Response__desc);
  ACTION_TOPIC(cancel_q, "rq/%s/_action/cancel_goalRequest", action_msgs_srv_dds__CancelGoal_Request__desc);
  ACTION_TOPIC(cancel_r, "rr/%s/_action/cancel_goalReply", action_msgs_srv_dds__CancelGoal_Response__desc);
  ACTION_TOPIC(feedback, "rt/%s/_action/feedback", test_msgs_action_dds__Fibonacci_FeedbackMessage__desc);
  ACTION_TOPIC(status, "rt/%s/_action/status", action_msgs_msg_dds__GoalStatusArray__desc);
#undef ACTION_TOPIC
  return t;
}

/* A waitset that fires when any of the n readers has a sample. */
static dds_entity_t waitset_of(cy_node *n, const dds_entity_t *readers, int nr) {
  dds_entity_t ws = dds_create_waitset(n->participant);
  int i;
  if (ws < 0) fatal("cannot create waitset");
  for (i = 0; i < nr; i++) {
    dds_entity_t cond = dds_create_readcondition(readers[i], DDS_ANY_STATE);
    if (cond < 0) fatal("cannot create read condition");
    CY_OK(dds_waitset_attach(ws, cond, readers[i]));
  }
  return ws;
}

/* Takes up to TAKE_N samples on loan; the caller gives them back with
 * dds_return_loan when the count is > 0. */
static int take_loaned(dds_entity_t r, void **buf, dds_sample_info_t *info) {
  int i;
  for (i = 0; i < TAKE_N; i++) buf[i] = NULL;
  return dds_take(r, buf, info, TAKE_N, TAKE_N);
}

/* A service reply: waits (up to 1 s) for a matched reader first, as the
 * svc_cyclone server does. */
static void reply(dds_entity_t w, const void *sample) {
  cy_wait_readers(w, 1, 1.0);
  CY_OK(dds_write(w, sample));
}

static int uuid_zero(const uint8_t *id) {
  int k;
  for (k = 0; k < 16; k++)
    if (id[k]) return 0;
  return 1;
}
static const char *uuid_hex(const uint8_t *id, char *out) {
  int k;
  for (k = 0; k < 16; k++) snprintf(out + 2 * k, 3, "%02x", id[k]);
  return out;
}
static int terminal(int status) { return status >= ST_SUCCEEDED; }

/* ------------------------------------------------------------------ */
/* server                                                               */

typedef struct {
  uint8_t id[16];
  int32_t sec;
  uint32_t nanosec;
  int order, i;   /* rclcpp's loop: for (i = 1; i < order; ++i) */
  int8_t status;
  uint32_t len;
  int32_t seq[MAX_ORDER + 1];
  int64_t next_step;
} goal_t;

typedef struct {
  uint64_t client_guid;
  int64_t sequence_number;
  int goal;
} pending_t;

typedef struct {
  dds_entity_t goal_rq, result_rq, cancel_rq;       /* readers */
  dds_entity_t goal_rr, result_rr, cancel_rr, fb, st; /* writers */
  int64_t step;
  int ngoals, npending;
  goal_t goal[MAX_GOALS];
  pending_t pending[MAX_PENDING];
} server_t;

static server_t g_srv;

static int find_goal(const server_t *s, const uint8_t *id) {
  int k;
  for (k = 0; k < s->ngoals; k++)
    if (memcmp(s->goal[k].id, id, 16) == 0) return k;
  return -1;
}

static void publish_status(server_t *s) {
  static action_msgs_msg_dds__GoalStatus_ list[MAX_GOALS];
  status_msg m;
  int k;
  memset(&m, 0, sizeof m);
  for (k = 0; k < s->ngoals; k++) {
    memcpy(list[k].goal_info.goal_id.uuid, s->goal[k].id, 16);
    list[k].goal_info.stamp.sec = s->goal[k].sec;
    list[k].goal_info.stamp.nanosec = s->goal[k].nanosec;
    list[k].status = s->goal[k].status;
  }
  m.status_list._buffer = list;
  m.status_list._length = m.status_list._maximum = (uint32_t)s->ngoals;
  CY_OK(dds_write(s->st, &m));
}

/* Answers one get_result request; g NULL: unknown goal id. */
static void send_result(server_t *s, uint64_t guid, int64_t seqno, const uint8_t *id, const goal_t *g) {
  result_resp r;
  char hex[33];
  memset(&r, 0, sizeof r);
  r.client_guid = guid;
  r.sequence_number = seqno;
  r.status = g ? g->status : ST_UNKNOWN;
  if (g) {
    r.result.sequence._buffer = (int32_t *)g->seq;
    r.result.sequence._length = r.result.sequence._maximum = g->len;
  }
  reply(s->result_rr, &r);
  printf("result %s %d %u\n", uuid_hex(id, hex), (int)r.status, g ? g->len : 0u);
}

/* Moves goal k to a terminal status: status array first, then the held
 * result requests. */
static void finish(server_t *s, int k, int status) {
  int p, q = 0;
  s->goal[k].status = (int8_t)status;
  publish_status(s);
  for (p = 0; p < s->npending; p++) {
    pending_t pd = s->pending[p];
    if (pd.goal == k) send_result(s, pd.client_guid, pd.sequence_number, s->goal[k].id, &s->goal[k]);
    else s->pending[q++] = pd;
  }
  s->npending = q;
}

static void on_goal(server_t *s, const goal_req *q) {
  goal_resp r;
  char hex[33];
  int order = q->goal.order;
  memset(&r, 0, sizeof r);
  r.client_guid = q->client_guid;
  r.sequence_number = q->sequence_number;
  uuid_hex(q->goal_id.uuid, hex);
  if (order < 0 || order > MAX_ORDER || s->ngoals == MAX_GOALS || find_goal(s, q->goal_id.uuid) >= 0) {
    r.accepted = false;
    reply(s->goal_rr, &r);
    printf("goal %s %d rejected\n", hex, order);
    return;
  }
  {
    goal_t *g = &s->goal[s->ngoals++];
    memset(g, 0, sizeof *g);
    memcpy(g->id, q->goal_id.uuid, 16);
    split_time(wall_ns(), &g->sec, &g->nanosec);
    g->order = order;
    g->i = 1;
    g->seq[0] = 0;
    g->seq[1] = 1;
    g->len = 2;
    g->status = ST_ACCEPTED;
    g->next_step = mono_ns() + s->step;
    r.accepted = true;
    r.stamp.sec = g->sec;
    r.stamp.nanosec = g->nanosec;
    reply(s->goal_rr, &r);
    printf("goal %s %d accepted\n", hex, order);
    publish_status(s);
    g->status = ST_EXECUTING;
    publish_status(s);
  }
}

static void on_result(server_t *s, const result_req *q) {
  int k = find_goal(s, q->goal_id.uuid);
  if (k < 0) {
    send_result(s, q->client_guid, q->sequence_number, q->goal_id.uuid, NULL);
  } else if (terminal(s->goal[k].status)) {
    send_result(s, q->client_guid, q->sequence_number, q->goal_id.uuid, &s->goal[k]);
  } else if (s->npending == MAX_PENDING) {
    fprintf(stderr, "%s: too many result requests held, dropping one\n", g_prog);
  } else {
    pending_t *p = &s->pending[s->npending++];
    p->client_guid = q->client_guid;
    p->sequence_number = q->sequence_number;
    p->goal = k;
  }
}

/* rcl_action_process_cancel_request, then every goal it names accepted
 * for canceling (rclcpp with a handle_cancel that always accepts). */
static void on_cancel(server_t *s, const cancel_req *q) {
  static action_msgs_msg_dds__GoalInfo_ infos[MAX_GOALS];
  cancel_resp r;
  const uint8_t *id = q->goal_info.goal_id.uuid;
  int64_t stamp = (int64_t)q->goal_info.stamp.sec * NS_PER_S + (int64_t)q->goal_info.stamp.nanosec;
  int k, n = 0, rc;
  char hex[33];
#define CANCELABLE(g) ((g)->status == ST_ACCEPTED || (g)->status == ST_EXECUTING)
#define MARK(g)                                                                                \
  do {                                                                                         \
    memcpy(infos[n].goal_id.uuid, (g)->id, 16);                                                \
    infos[n].stamp.sec = (g)->sec;                                                             \
    infos[n].stamp.nanosec = (g)->nanosec;                                                     \
    n++;                                                                                       \
    (g)->status = ST_CANCELING;                                                                \
  } while (0)
  if (!uuid_zero(id) && stamp == 0) {
    k = find_goal(s, id);
    if (k < 0) rc = CANCEL_UNKNOWN_GOAL_ID;
    else if (!CANCELABLE(&s->goal[k])) rc = CANCEL_GOAL_TERMINATED;
    else { rc = CANCEL_NONE; MARK(&s->goal[k]); }
  } else {
    rc = CANCEL_NONE;
    if (uuid_zero(id) && stamp == 0) stamp = INT64_MAX;
    for (k = 0; k < s->ngoals; k++) {
      goal_t *g = &s->goal[k];
      int64_t t = (int64_t)g->sec * NS_PER_S + (int64_t)g->nanosec;
      if (CANCELABLE(g) && (t <= stamp || memcmp(g->id, id, 16) == 0)) MARK(g);
    }
  }
#undef MARK
#undef CANCELABLE
  if (n > 0) publish_status(s);
  memset(&r, 0, sizeof r);
  r.client_guid = q->client_guid;
  r.sequence_number = q->sequence_number;
  r.return_code = (int8_t)rc;
  r.goals_canceling._buffer = infos;
  r.goals_canceling._length = r.goals_canceling._maximum = (uint32_t)n;
  reply(s->cancel_rr, &r);
  printf("cancel %s %d %d\n", uuid_zero(id) ? "all" : uuid_hex(id, hex), rc, n);
}

/* One step of goal k: CANCELING -> CANCELED; else append and publish
 * feedback while i < order; else SUCCEEDED. */
static void step_goal(server_t *s, int k) {
  goal_t *g = &s->goal[k];
  g->next_step += s->step;
  if (g->status == ST_CANCELING) {
    finish(s, k, ST_CANCELED);
  } else if (g->i < g->order) {
    feedback_msg f;
    g->seq[g->len] = g->seq[g->i] + g->seq[g->i - 1];
    g->len++;
    g->i++;
    memset(&f, 0, sizeof f);
    memcpy(f.goal_id.uuid, g->id, 16);
    f.feedback.sequence._buffer = g->seq;
    f.feedback.sequence._length = f.feedback.sequence._maximum = g->len;
    CY_OK(dds_write(s->fb, &f));
  } else {
    finish(s, k, ST_SUCCEEDED);
  }
}

static void serve_requests(server_t *s) {
  void *buf[TAKE_N];
  dds_sample_info_t info[TAKE_N];
  int m, j;
  if ((m = take_loaned(s->goal_rq, buf, info)) > 0) {
    for (j = 0; j < m; j++)
      if (info[j].valid_data) on_goal(s, buf[j]);
    dds_return_loan(s->goal_rq, buf, m);
  }
  if ((m = take_loaned(s->cancel_rq, buf, info)) > 0) {
    for (j = 0; j < m; j++)
      if (info[j].valid_data) on_cancel(s, buf[j]);
    dds_return_loan(s->cancel_rq, buf, m);
  }
  if ((m = take_loaned(s->result_rq, buf, info)) > 0) {
    for (j = 0; j < m; j++)
      if (info[j].valid_data) on_result(s, buf[j]);
    dds_return_loan(s->result_rq, buf, m);
  }
}

static int run_server(cy_node *n, const char *action, long count, long step_ms) {
  server_t *s = &g_srv;
  action_topics t = action_topics_new(n, action);
  dds_entity_t readers[3], writers[5], ws;
  int64_t grace_end = 0;
  if (step_ms < 1) fatal("--step-ms must be >= 1");
  s->step = step_ms * 1000000LL;
  s->goal_rq = cy_reader(n, t.goal_q, 1, 10, 0);
  s->result_rq = cy_reader(n, t.result_q, 1, 10, 0);
  s->cancel_rq = cy_reader(n, t.cancel_q, 1, 10, 0);
  s->goal_rr = cy_writer(n, t.goal_r, 1, 10, 0);
  s->result_rr = cy_writer(n, t.result_r, 1, 10, 0);
  s->cancel_rr = cy_writer(n, t.cancel_r, 1, 10, 0);
  s->fb = cy_writer(n, t.feedback, 1, 10, 0);
  s->st = cy_writer(n, t.status, 1, 1, 1);
  readers[0] = s->goal_rq; readers[1] = s->result_rq; readers[2] = s->cancel_rq;
  writers[0] = s->goal_rr; writers[1] = s->result_rr; writers[2] = s->cancel_rr;
  writers[3] = s->fb; writers[4] = s->st;
  ws = waitset_of(n, readers, 3);
  cy_announce(n, readers, 3, writers, 5);
  fprintf(stderr, "%s: serving %s\n", g_prog, action);
  for (;;) {
    int64_t now, wake;
    int k, done = 0;
    serve_requests(s);
    now = mono_ns();
    for (k = 0; k < s->ngoals; k++) {
      goal_t *g = &s->goal[k];
      if (!terminal(g->status) && g->next_step <= now) step_goal(s, k);
      if (terminal(g->status)) done++;
    }
    if (count > 0 && done >= count && s->npending == 0) {
      if (grace_end == 0) grace_end = now + GRACE_NS;
      else if (now >= grace_end) return EXIT_OK;
    }
    if (now >= g_deadline) {
      fprintf(stderr, "%s: timeout, %d of %ld goals done, %d result requests held\n", g_prog, done, count, s->npending);
      return count == 0 ? EXIT_OK : EXIT_TIMEOUT;
    }
    wake = now + POLL_NS;
    if (wake > g_deadline) wake = g_deadline;
    if (grace_end && wake > grace_end) wake = grace_end;
    for (k = 0; k < s->ngoals; k++)
      if (!terminal(s->goal[k].status) && s->goal[k].next_step < wake) wake = s->goal[k].next_step;
    if (wake > now) dds_waitset_wait(ws, NULL, 0, wake - now);
  }
}

/* ------------------------------------------------------------------ */
/* client                                                               */

static void random_uuid(uint8_t *id) {
  FILE *f = fopen("/dev/urandom", "rb");
  int ok = f && fread(id, 1, 16, f) == 16;
  if (f) fclose(f);
  if (!ok) {
    uint64_t x = (uint64_t)mono_ns() ^ ((uint64_t)wall_ns() << 1);
    int k;
    for (k = 0; k < 16; k++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      id[k] = (uint8_t)(x >> 56);
    }
  }
  id[6] = (uint8_t)((id[6] & 0x0f) | 0x40); /* version 4, as uuid4 */
  id[8] = (uint8_t)((id[8] & 0x3f) | 0x80);
}

static uint64_t guid_of(dds_entity_t w) {
  dds_instance_handle_t h;
  CY_OK(dds_get_instance_handle(w, &h));
  return (uint64_t)h;
}

/* A cancel request for goal id (NULL: every goal), stamp zero. */
static int send_cancel(dds_entity_t w, uint64_t guid, const uint8_t *id) {
  cancel_req q;
  memset(&q, 0, sizeof q);
  q.client_guid = guid;
  q.sequence_number = 1;
  if (id) memcpy(q.goal_info.goal_id.uuid, id, 16);
  CY_OK(dds_write(w, &q));
  return 1;
}

/* Parses 32 hex digits into id; returns 0 on success. */
static int parse_uuid(const char *hex, uint8_t *id) {
  int k;
  if (strlen(hex) != 32) return -1;
  for (k = 0; k < 16; k++) {
    unsigned v;
    if (sscanf(hex + 2 * k, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF", hex[2 * k]) ||
        !strchr("0123456789abcdefABCDEF", hex[2 * k + 1]))
      return -1;
    id[k] = (uint8_t)v;
  }
  return 0;
}

static int run_client(cy_node *n, const char *action, long order, long cancel_after, int cancel_all, int cancel_late,
                      const uint8_t *cancel_id) {
  action_topics t = action_topics_new(n, action);
  dds_entity_t goal_w = cy_writer(n, t.goal_q, 1, 10, 0);
  dds_entity_t result_w = cy_writer(n, t.result_q, 1, 10, 0);
  dds_entity_t cancel_w = cy_writer(n, t.cancel_q, 1, 10, 0);
  dds_entity_t goal_r = cy_reader(n, t.goal_r, 1, 10, 0);
  dds_entity_t result_r = cy_reader(n, t.result_r, 1, 10, 0);
  dds_entity_t cancel_r = cy_reader(n, t.cancel_r, 1, 10, 0);
  dds_entity_t fb_r = cy_reader(n, t.feedback, 1, 10, 0);
  dds_entity_t st_r = cy_reader(n, t.status, 1, 1, 1);
  dds_entity_t readers[5] = {goal_r, result_r, cancel_r, fb_r, st_r};
  dds_entity_t writers[3] = {goal_w, result_w, cancel_w};
  dds_entity_t ws = waitset_of(n, readers, 5);
  uint64_t goal_guid = guid_of(goal_w), result_guid = guid_of(result_w), cancel_guid = guid_of(cancel_w);
  uint8_t id[16], cid[16]; /* our goal; the one the cancel names */
  char hex[33];
  int accepted = -1, cancel_sent = 0, cancel_done = 0, got_result = 0, result_status = 0;
  int status = -1, shown_status = -1;
  long nfeedback = 0;
  int32_t *result_seq = NULL;
  uint32_t result_len = 0;
  int64_t result_at = 0;
  int i;
  cy_announce(n, readers, 5, writers, 3);
  for (i = 0; i < 3; i++)
    if (cy_wait_readers(writers[i], 1, (double)(g_deadline - mono_ns()) / 1e9) < 0) goto no_server;
  for (i = 0; i < 5; i++)
    if (cy_wait_writers(readers[i], 1, (double)(g_deadline - mono_ns()) / 1e9) < 0) goto no_server;
  fprintf(stderr, "%s: server matched\n", g_prog);
  nap(200000000); /* let the server's writers match our readers */

  random_uuid(id);
  uuid_hex(id, hex);
  memcpy(cid, cancel_id ? cancel_id : id, 16);
  fprintf(stderr, "%s: goal %s order %ld\n", g_prog, hex, order);
  {
    goal_req q;
    memset(&q, 0, sizeof q);
    q.client_guid = goal_guid;
    q.sequence_number = 1;
    memcpy(q.goal_id.uuid, id, 16);
    q.goal.order = (int32_t)order;
    CY_OK(dds_write(goal_w, &q));
  }
  for (;;) {
    void *buf[TAKE_N];
    dds_sample_info_t info[TAKE_N];
    int m, j;
    int64_t now;
    if ((m = take_loaned(goal_r, buf, info)) > 0) {
      for (j = 0; j < m; j++) {
        const goal_resp *r = buf[j];
        if (!info[j].valid_data || r->client_guid != goal_guid || r->sequence_number != 1 || accepted >= 0) continue;
        accepted = r->accepted ? 1 : 0;
        printf("accepted %d\n", accepted);
        if (accepted) {
          result_req q;
          memset(&q, 0, sizeof q);
          q.client_guid = result_guid;
          q.sequence_number = 1;
          memcpy(q.goal_id.uuid, id, 16);
          CY_OK(dds_write(result_w, &q));
        }
      }
      dds_return_loan(goal_r, buf, m);
      if (accepted == 0) return EXIT_OK;
    }
    if ((m = take_loaned(st_r, buf, info)) > 0) {
      for (j = 0; j < m; j++) {
        const status_msg *sm = buf[j];
        uint32_t k;
        if (!info[j].valid_data) continue;
        for (k = 0; k < sm->status_list._length; k++)
          if (memcmp(sm->status_list._buffer[k].goal_info.goal_id.uuid, id, 16) == 0) status = sm->status_list._buffer[k].status;
      }
      dds_return_loan(st_r, buf, m);
    }
    /* a status seen before the goal response is shown after "accepted" */
    if (accepted == 1 && status != shown_status) {
      printf("status %d\n", status);
      shown_status = status;
    }
    if ((m = take_loaned(fb_r, buf, info)) > 0) {
      for (j = 0; j < m; j++) {
        const feedback_msg *f = buf[j];
        if (!info[j].valid_data || memcmp(f->goal_id.uuid, id, 16) != 0) continue;
        nfeedback++;
        printf("feedback %u\n", f->feedback.sequence._length);
        if (cancel_after > 0 && nfeedback == cancel_after && !cancel_sent) cancel_sent = send_cancel(cancel_w, cancel_guid, cancel_all ? NULL : cid);
      }
      dds_return_loan(fb_r, buf, m);
    }
    if ((m = take_loaned(cancel_r, buf, info)) > 0) {
      for (j = 0; j < m; j++) {
        const cancel_resp *r = buf[j];
        if (!info[j].valid_data || r->client_guid != cancel_guid || r->sequence_number != 1 || cancel_done) continue;
        printf("cancel %d %u\n", (int)r->return_code, r->goals_canceling._length);
        cancel_done = 1;
      }
      dds_return_loan(cancel_r, buf, m);
    }
    if ((m = take_loaned(result_r, buf, info)) > 0) {
      for (j = 0; j < m; j++) {
        const result_resp *r = buf[j];
        if (!info[j].valid_data || r->client_guid != result_guid || r->sequence_number != 1 || got_result) continue;
        got_result = 1;
        result_at = mono_ns();
        result_status = r->status;
        result_len = r->result.sequence._length;
        result_seq = malloc(sizeof(int32_t) * (result_len ? result_len : 1));
        if (!result_seq) fatal("out of memory");
        if (result_len) memcpy(result_seq, r->result.sequence._buffer, sizeof(int32_t) * result_len);
      }
      dds_return_loan(result_r, buf, m);
      if (got_result && cancel_late && !cancel_sent) cancel_sent = send_cancel(cancel_w, cancel_guid, cancel_all ? NULL : cid);
    }
    now = mono_ns();
    /* the result may overtake the terminal status and the cancel reply
     * (other writers): wait up to 1 s for them before the result line */
    if (got_result && ((terminal(shown_status) && (!cancel_sent || cancel_done)) || now >= result_at + NS_PER_S)) {
      uint32_t k;
      printf("result %d", result_status);
      for (k = 0; k < result_len; k++) printf("%c%d", k ? ',' : ' ', (int)result_seq[k]);
      printf("\n");
      free(result_seq);
      return EXIT_OK;
    }
    if (now >= g_deadline) {
      fprintf(stderr, "%s: %s within the timeout\n", g_prog, accepted < 0 ? "no goal response" : "no result");
      return EXIT_TIMEOUT;
    }
    dds_waitset_wait(ws, NULL, 0, g_deadline - now < POLL_NS ? g_deadline - now : POLL_NS);
  }
no_server:
  fprintf(stderr, "%s: no action server for %s within the timeout\n", g_prog, action);
  return EXIT_TIMEOUT;
}

int main(int argc, char **argv) {
  common_opts c;
  const char *mode = "server", *action = "/fibonacci", *cancel_id = NULL;
  uint8_t cid[16];
  double timeout = 30;
  long count = 0, step_ms = 50, order = 10, cancel_after = 0;
  int cancel_all = 0, cancel_late = 0, rc;
  g_prog = "action_cyclone";
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
  cy_node n = cy_node_new(&c);
  if (strcmp(mode, "server") == 0) rc = run_server(&n, action, count, step_ms);
  else if (strcmp(mode, "client") == 0) rc = run_client(&n, action, order, cancel_after, cancel_all, cancel_late, cancel_id ? cid : NULL);
  else fatal("unknown --mode %s", mode);
  cy_node_close(&n);
  return rc;
}
