/* pingpong_cyclone - round-trip latency and throughput peer on rt/ping and
 * rt/pong, type nros_bench::msg::dds_::Payload_ (Cyclone DDS). The control
 * protocol is in peer.h; flags and output lines in ../README.md. */
#include <signal.h>
#include "cyclone.h"

typedef nros_bench_msg_dds__Payload_ Payload;

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int s) { (void)s; g_stop = 1; }

static void send_control(dds_entity_t w, int64_t code, uint8_t *data, uint32_t len) {
  Payload m;
  m.stamp_ns = code;
  m.data._buffer = data;
  m.data._length = m.data._maximum = len;
  m.data._release = false;
  dds_write(w, &m);
}

/* Takes samples until one has stamp_ns == want (copying up to outlen bytes
 * of its data to out) or timeout_ns passes. 0 found, -1 timeout. */
static int await_stamp(dds_entity_t ws, dds_entity_t r, int64_t want, int64_t timeout_ns, uint8_t *out, size_t outlen) {
  int64_t deadline = mono_ns() + timeout_ns;
  for (;;) {
    void *buf[8] = {NULL};
    dds_sample_info_t info[8];
    int m, i, found = 0;
    while ((m = dds_take(r, buf, info, 8, 8)) > 0) {
      for (i = 0; i < m; i++) {
        const Payload *p = (const Payload *)buf[i];
        if (!info[i].valid_data || p->stamp_ns != want) continue;
        found = 1;
        if (out) {
          size_t k = p->data._length < outlen ? p->data._length : outlen;
          memset(out, 0, outlen);
          memcpy(out, p->data._buffer, k);
        }
      }
      dds_return_loan(r, buf, m);
      if (found) return 0;
    }
    int64_t left = deadline - mono_ns();
    if (left <= 0 || g_stop) return -1;
    dds_waitset_wait(ws, NULL, 0, left);
  }
}

static void run_pong(dds_entity_t ws, dds_entity_t r, dds_entity_t w) {
  pong_state st;
  memset(&st, 0, sizeof st);
  while (!g_stop) {
    void *buf[64] = {NULL};
    dds_sample_info_t info[64];
    int m, i;
    dds_waitset_wait(ws, NULL, 0, DDS_MSECS(100));
    while ((m = dds_take(r, buf, info, 64, 64)) > 0) {
      for (i = 0; i < m; i++) {
        const Payload *p = (const Payload *)buf[i];
        if (!info[i].valid_data) continue;
        if (p->stamp_ns >= 0) {
          if (st.sink) pong_count(&st, p->data._length);
          else dds_write(w, p);
        } else if (p->stamp_ns == PP_SINK) {
          memset(&st, 0, sizeof st);
          st.sink = 1;
          send_control(w, PP_SINK, NULL, 0);
        } else if (p->stamp_ns == PP_REPORT) {
          uint8_t rep[32];
          pong_report(&st, rep);
          send_control(w, PP_REPORT, rep, sizeof rep);
          if (st.sink) fprintf(stderr, "%s: sink counted %lld samples, %lld bytes\n", g_prog, (long long)st.rx, (long long)st.bytes);
          st.sink = 0;
        } else if (p->stamp_ns == PP_QUIT) {
          g_stop = 1;
        }
      }
      dds_return_loan(r, buf, m);
    }
  }
}

int main(int argc, char **argv) {
  common_opts c;
  pingpong_opts o;
  char label[64];
  int rc = EXIT_OK;
  g_prog = "pingpong_cyclone";
  common_defaults(&c, g_prog);
  pingpong_defaults(&o);
  {
    const flag_t fl[] = {PINGPONG_FLAGS(o), COMMON_FLAGS(c)};
    if (argc > 1 && argv[1][0] != '-') o.role = argv[1];
    flags_parse(argc, argv, o.role ? 2 : 1, "ping|pong [flags]", fl, sizeof fl / sizeof fl[0]);
  }
  common_check(&c);
  pingpong_check(&o);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  setvbuf(stdout, NULL, _IOLBF, 0);
  int ping = strcmp(o.role, "ping") == 0, reliable = !o.best_effort;
  snprintf(label, sizeof label, "%s %s", VENDOR, reliable ? "reliable" : "best-effort");

  cy_node n = cy_node_new(&c);
  dds_entity_t tping = cy_topic(&n, &nros_bench_msg_dds__Payload__desc, "rt/ping");
  dds_entity_t tpong = cy_topic(&n, &nros_bench_msg_dds__Payload__desc, "rt/pong");
  dds_entity_t w = cy_writer(&n, ping ? tping : tpong, reliable, (int)o.depth, 0);
  dds_entity_t r = cy_reader(&n, ping ? tpong : tping, reliable, (int)o.depth, 0);
  dds_entity_t ws = cy_waitset(&n, r);
  cy_announce(&n, &r, 1, &w, 1);

  if (!ping) {
    run_pong(ws, r, w);
    if (reliable) dds_wait_for_acks(w, DDS_SECS(1));
    cy_node_close(&n);
    return 0;
  }

  if (cy_wait_readers(w, 1, o.wait_timeout) < 0 || cy_wait_writers(r, 1, o.wait_timeout) < 0)
    fatal("no pong matched within %.1f s", o.wait_timeout);
  nap(300000000);
  uint8_t *data = (uint8_t *)calloc(1, (size_t)o.size + 1);
  Payload m;
  m.data._buffer = data;
  m.data._length = m.data._maximum = (uint32_t)o.size;
  m.data._release = false;
  if (strcmp(o.mode, "latency") == 0) {
    int64_t *rtt = (int64_t *)malloc(sizeof(int64_t) * (size_t)(o.count + 1));
    long ok = 0, lost = 0, i;
    for (i = 0; i < o.warmup + o.count && !g_stop; i++) {
      int64_t t0 = mono_ns();
      m.stamp_ns = t0;
      CY_OK(dds_write(w, &m));
      if (await_stamp(ws, r, t0, o.timeout_ms * 1000000LL, NULL, 0) < 0) {
        if (i >= o.warmup) lost++;
        continue;
      }
      if (i >= o.warmup) rtt[ok++] = mono_ns() - t0;
    }
    print_latency_line(label, rtt, ok, lost, o.size);
    free(rtt);
  } else {
    uint8_t rep[32];
    long sent = 0;
    int tries;
    for (tries = 0; tries < 25; tries++) {
      send_control(w, PP_SINK, NULL, 0);
      if (await_stamp(ws, r, PP_SINK, 200000000LL, NULL, 0) == 0) break;
    }
    if (tries == 25) fatal("pong did not acknowledge the throughput start");
    int64_t t0 = mono_ns(), end = t0 + secs_to_ns(o.duration), t1;
    while ((t1 = mono_ns()) < end && !g_stop) {
      int j;
      for (j = 0; j < 64; j++) {
        m.stamp_ns = sent++;
        CY_OK(dds_write(w, &m));
      }
    }
    double dt = (double)(t1 - t0) / 1e9;
    for (tries = 0; tries < 100; tries++) {
      send_control(w, PP_REPORT, NULL, 0);
      if (await_stamp(ws, r, PP_REPORT, 300000000LL, rep, sizeof rep) == 0) break;
    }
    if (tries == 100) {
      fprintf(stderr, "%s: no report from pong\n", g_prog);
      rc = 1;
    } else {
      print_throughput_line(label, o.size, o.depth, dt, sent, rep);
    }
  }
  if (!o.keep_pong) {
    int q;
    for (q = 0; q < 3; q++) {
      send_control(w, PP_QUIT, NULL, 0);
      nap(20000000);
    }
  }
  if (reliable) dds_wait_for_acks(w, DDS_SECS(1));
  cy_node_close(&n);
  free(data);
  return rc;
}
