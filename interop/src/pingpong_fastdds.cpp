// pingpong_fastdds - round-trip latency and throughput peer on rt/ping and
// rt/pong, type nros_bench::msg::dds_::Payload_ (Fast DDS). The control
// protocol is in peer.h; flags and output lines in ../README.md.
#include <signal.h>
#include "fastdds.hpp"

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int) { g_stop = 1; }

static void send_control(fdds::DataWriter *w, int64_t code, const uint8_t *data = nullptr, size_t len = 0) {
  PayloadMsg m;
  m.stamp_ns = code;
  if (len) m.data.assign(data, data + len);
  w->write(&m);
}

// Takes samples until one has stamp_ns == want (copying up to outlen bytes
// of its data to out) or timeout_ns passes. 0 found, -1 timeout.
static int await_stamp(fdds::DataReader *r, int64_t want, int64_t timeout_ns, uint8_t *out = nullptr, size_t outlen = 0) {
  static PayloadMsg m;
  fdds::SampleInfo info;
  int64_t deadline = mono_ns() + timeout_ns;
  for (;;) {
    bool found = false;
    while (r->take_next_sample(&m, &info) == ReturnCode_t::RETCODE_OK) {
      if (!info.valid_data || m.stamp_ns != want) continue;
      found = true;
      if (out) {
        memset(out, 0, outlen);
        memcpy(out, m.data.data(), m.data.size() < outlen ? m.data.size() : outlen);
      }
    }
    if (found) return 0;
    int64_t left = deadline - mono_ns();
    if (left <= 0 || g_stop) return -1;
    r->wait_for_unread_message(fd_duration(left));
  }
}

static void run_pong(fdds::DataReader *r, fdds::DataWriter *w) {
  pong_state st;
  memset(&st, 0, sizeof st);
  PayloadMsg m;
  fdds::SampleInfo info;
  while (!g_stop) {
    r->wait_for_unread_message(fd_duration(100000000));
    while (r->take_next_sample(&m, &info) == ReturnCode_t::RETCODE_OK) {
      if (!info.valid_data) continue;
      if (m.stamp_ns >= 0) {
        if (st.sink) pong_count(&st, m.data.size());
        else w->write(&m);
      } else if (m.stamp_ns == PP_SINK) {
        memset(&st, 0, sizeof st);
        st.sink = 1;
        send_control(w, PP_SINK);
      } else if (m.stamp_ns == PP_REPORT) {
        uint8_t rep[32];
        pong_report(&st, rep);
        send_control(w, PP_REPORT, rep, sizeof rep);
        if (st.sink) fprintf(stderr, "%s: sink counted %lld samples, %lld bytes\n", g_prog, (long long)st.rx, (long long)st.bytes);
        st.sink = 0;
      } else if (m.stamp_ns == PP_QUIT) {
        g_stop = 1;
      }
    }
  }
}

int main(int argc, char **argv) {
  common_opts c;
  pingpong_opts o;
  char label[64];
  int rc = EXIT_OK;
  g_prog = "pingpong_fastdds";
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
  bool ping = strcmp(o.role, "ping") == 0, reliable = !o.best_effort;
  snprintf(label, sizeof label, "%s %s", VENDOR, reliable ? "reliable" : "best-effort");

  FdNode n(c);
  fdds::Topic *tping = n.topic<PayloadMsg>(PAYLOAD_TYPE, 8 + 4 + 64, "rt/ping");
  fdds::Topic *tpong = n.topic<PayloadMsg>(PAYLOAD_TYPE, 8 + 4 + 64, "rt/pong");
  fdds::DataWriter *w = n.writer(ping ? tping : tpong, reliable, (int)o.depth, false);
  fdds::DataReader *r = n.reader(ping ? tpong : tping, reliable, (int)o.depth, false);
  n.announce({r}, {w});

  if (!ping) {
    run_pong(r, w);
    if (reliable) w->wait_for_acknowledgments(fd_duration(NS_PER_S));
    return 0;
  }

  if (fd_wait_readers(w, 1, o.wait_timeout) < 0 || fd_wait_writers(r, 1, o.wait_timeout) < 0)
    fatal("no pong matched within %.1f s", o.wait_timeout);
  nap(300000000);
  PayloadMsg m;
  m.data.assign((size_t)o.size, 0);
  if (strcmp(o.mode, "latency") == 0) {
    std::vector<int64_t> rtt;
    rtt.reserve((size_t)o.count + 1);
    long lost = 0;
    for (long i = 0; i < o.warmup + o.count && !g_stop; i++) {
      int64_t t0 = mono_ns();
      m.stamp_ns = t0;
      w->write(&m);
      if (await_stamp(r, t0, o.timeout_ms * 1000000LL) < 0) {
        if (i >= o.warmup) lost++;
        continue;
      }
      if (i >= o.warmup) rtt.push_back(mono_ns() - t0);
    }
    print_latency_line(label, rtt.data(), (long)rtt.size(), lost, o.size);
  } else {
    uint8_t rep[32] = {0};
    long sent = 0, failed = 0;
    int tries;
    for (tries = 0; tries < 25; tries++) {
      send_control(w, PP_SINK);
      if (await_stamp(r, PP_SINK, 200000000LL) == 0) break;
    }
    if (tries == 25) fatal("pong did not acknowledge the throughput start");
    int64_t t0 = mono_ns(), end = t0 + secs_to_ns(o.duration), t1;
    while ((t1 = mono_ns()) < end && !g_stop) {
      for (int j = 0; j < 64; j++) {
        m.stamp_ns = sent;
        if (w->write(&m)) sent++;
        else failed++;
      }
    }
    double dt = (double)(t1 - t0) / 1e9;
    if (failed) fprintf(stderr, "%s: %ld writes failed (history full past max_blocking_time)\n", g_prog, failed);
    for (tries = 0; tries < 100; tries++) {
      send_control(w, PP_REPORT);
      if (await_stamp(r, PP_REPORT, 300000000LL, rep, sizeof rep) == 0) break;
    }
    if (tries == 100) {
      fprintf(stderr, "%s: no report from pong\n", g_prog);
      rc = 1;
    } else {
      print_throughput_line(label, o.size, o.depth, dt, sent, rep);
    }
  }
  if (!o.keep_pong)
    for (int q = 0; q < 3; q++) {
      send_control(w, PP_QUIT);
      nap(20000000);
    }
  if (reliable) w->wait_for_acknowledgments(fd_duration(NS_PER_S));
  return rc;
}
