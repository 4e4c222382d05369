/* zpingpong - the pingpong peer (interop/README.md: control protocol, result lines) on zenoh-pico, as a ROS 2 node
 * on rmw_zenoh_cpp: nros_bench/msg/Payload on /ping (ping writes) and /pong (pong writes), keys
 * <domain>/ping|pong/nros_bench::msg::dds_::Payload_/<hash>, the 33-byte attachment on every sample, NN/MP/MS
 * tokens. So it pairs with itself (pico <-> pico, scripts/bench.sh) and with `nros bench pingpong` on Zenoh.
 *   zpingpong ping|pong [--size B] [--count N] [--warmup N] [--mode latency|throughput] [--duration S]
 *                       (--mode also takes the session's client|peer)
 *                       [--best-effort] [--timeout-ms MS] [--wait-timeout S] [--keep-pong] [common options]
 * Ping prints one result line (label "zpico reliable|best-effort"); pong echoes every sample unchanged (payload;
 * its own attachment) unless sinking. Reliability only changes the label and the tokens' QoS: zenoh-pico publishes
 * with its default congestion control (drop), as rmw_zenoh does for KEEP_LAST. */
#include <pthread.h>
#include <stdlib.h>

#include "zros.h"

#define ZR_TYPE_PAYLOAD "nros_bench::msg::dds_::Payload_"
#define ZR_HASH_PAYLOAD_JAZZY "RIHS01_d5b086a21c97065999d7425c1309fb0d5e895659131a0ec71846f5d8188b08b3"
#define PP_SINK (-2)
#define PP_REPORT (-1)
#define PP_QUIT (-9)

static const char *prog = "zpingpong";
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static const z_loaned_publisher_t *g_pub;
static uint8_t g_gid[16];
static int64_t g_seq;
static long put_failed; /* z_publisher_put errors (a closed session) */
static int ping_role;

/* pong state */
static int sink, quit;
static int64_t rx, rx_bytes, rx_first, rx_last;
/* ping state: stamps seen since the last wait, newest last */
static int64_t seen_stamp;
static int seen_valid;
static uint8_t seen_rep[32];

static void put_le64(uint8_t *p, int64_t v) { zr_put_le64(p, v); }

static void publish(const uint8_t *buf, size_t len) {
  uint8_t att[33];
  pthread_mutex_lock(&mu);
  int64_t seq = ++g_seq;
  pthread_mutex_unlock(&mu);
  zr_attachment(att, seq, now_real_ns(), g_gid);
  z_owned_bytes_t payload, attachment;
  z_bytes_copy_from_buf(&payload, buf, len);
  z_bytes_copy_from_buf(&attachment, att, sizeof(att));
  z_publisher_put_options_t po;
  z_publisher_put_options_default(&po);
  po.attachment = z_move(attachment);
  if (z_publisher_put(g_pub, z_move(payload), &po) < 0) {
    pthread_mutex_lock(&mu);
    put_failed++;
    pthread_mutex_unlock(&mu);
  }
}

/* a Payload sample: header, stamp, data length, data */
static size_t encode(uint8_t *buf, int64_t stamp, const uint8_t *data, uint32_t n) {
  memcpy(buf, "\x00\x01\x00\x00", 4);
  put_le64(buf + 4, stamp);
  for (int k = 0; k < 4; k++) buf[12 + k] = (uint8_t)(n >> (8 * k));
  if (data) memcpy(buf + 16, data, n);
  else memset(buf + 16, 0, n);
  return 16 + (size_t)n;
}

static void on_sample(z_loaned_sample_t *sample, void *ctx) {
  (void)ctx;
  const z_loaned_bytes_t *b = z_sample_payload(sample);
  size_t len = z_bytes_len(b);
  static uint8_t *buf;
  static size_t cap;
  if (len > cap) {
    free(buf);
    cap = len;
    buf = (uint8_t *)malloc(cap);
  }
  zr_bytes(b, buf, cap);
  if (len < 16) return;
  int64_t stamp = zr_get_le64(buf + 4);
  uint32_t n = zr_get_le32(buf + 12);
  if (16 + (size_t)n > len) return;
  if (ping_role) {
    pthread_mutex_lock(&mu);
    seen_stamp = stamp;
    seen_valid = 1;
    memset(seen_rep, 0, sizeof(seen_rep));
    memcpy(seen_rep, buf + 16, n < 32 ? n : 32);
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return;
  }
  if (stamp == PP_QUIT) {
    pthread_mutex_lock(&mu);
    quit = 1;
    pthread_mutex_unlock(&mu);
    return;
  }
  if (stamp == PP_SINK) {
    pthread_mutex_lock(&mu);
    sink = 1;
    rx = rx_bytes = rx_first = rx_last = 0;
    pthread_mutex_unlock(&mu);
    uint8_t out[16];
    publish(out, encode(out, PP_SINK, NULL, 0));
    return;
  }
  if (stamp == PP_REPORT) {
    uint8_t rep[32], out[48];
    pthread_mutex_lock(&mu);
    sink = 0;
    put_le64(rep, rx);
    put_le64(rep + 8, rx_bytes);
    put_le64(rep + 16, rx_first);
    put_le64(rep + 24, rx_last);
    pthread_mutex_unlock(&mu);
    publish(out, encode(out, PP_REPORT, rep, 32));
    zr_log(prog, "report: %lld samples received", (long long)zr_get_le64(rep));
    return;
  }
  pthread_mutex_lock(&mu);
  int s = sink;
  if (s) {
    int64_t t = now_mono_ns();
    if (rx == 0) rx_first = t;
    rx_last = t;
    rx++;
    rx_bytes += n;
  }
  pthread_mutex_unlock(&mu);
  if (!s) publish(buf, len); /* the echo: the same bytes */
}

/* waits until a sample stamped want arrived (0) or timeout_ns passed (-1) */
static int await_stamp(int64_t want, int64_t timeout_ns, uint8_t rep[32]) {
  int64_t deadline = now_real_ns() + timeout_ns;
  struct timespec ts = {(time_t)(deadline / 1000000000LL), (long)(deadline % 1000000000LL)};
  pthread_mutex_lock(&mu);
  while (!(seen_valid && seen_stamp == want)) {
    if (pthread_cond_timedwait(&cv, &mu, &ts) != 0 && !(seen_valid && seen_stamp == want)) {
      pthread_mutex_unlock(&mu);
      return -1;
    }
  }
  if (rep) memcpy(rep, seen_rep, 32);
  seen_valid = 0;
  pthread_mutex_unlock(&mu);
  return 0;
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}
static int64_t rank(const int64_t *v, long n, int pct) {
  long i = (n * pct + 99) / 100;
  if (i < 1) i = 1;
  return v[i - 1];
}

static void usage(void) {
  fprintf(stderr,
          "usage: zpingpong ping|pong [--size B] [--count N] [--warmup N] [--mode latency|throughput]\n"
          "                 [--duration S] [--best-effort] [--reliable] [--timeout-ms MS] [--wait-timeout S]\n"
          "                 [--keep-pong] [common options]\n" ZR_COMMON_USAGE);
}

int main(int argc, char **argv) {
  zr_opts_t o;
  const char *mode = "latency";
  long size = 64, count = 10000, warmup = 100, timeout_ms = 1000;
  double duration = 5, wait_timeout = 30;
  int best_effort = 0, keep_pong = 0;
  if (argc < 2 || (strcmp(argv[1], "ping") && strcmp(argv[1], "pong"))) {
    usage();
    return 2;
  }
  ping_role = !strcmp(argv[1], "ping");
  zr_opts_init(&o, ping_role ? "zpingpong_ping" : "zpingpong_pong");
  for (int i = 2; i < argc; i++) {
    /* --mode is the benchmark's (latency|throughput) or the session's (client|peer) */
    if (!strcmp(argv[i], "--mode") && i + 1 < argc && (!strcmp(argv[i + 1], "latency") || !strcmp(argv[i + 1], "throughput"))) {
      mode = argv[++i];
      continue;
    }
    if (zr_common_arg(&o, argc, argv, &i)) continue;
    if (!strcmp(argv[i], "--size")) size = opt_long(argc, argv, &i);
    else if (!strcmp(argv[i], "--count")) count = opt_long(argc, argv, &i);
    else if (!strcmp(argv[i], "--warmup")) warmup = opt_long(argc, argv, &i);
    else if (!strcmp(argv[i], "--mode")) mode = opt_val(argc, argv, &i);
    else if (!strcmp(argv[i], "--duration")) duration = opt_double(argc, argv, &i);
    else if (!strcmp(argv[i], "--best-effort")) best_effort = 1;
    else if (!strcmp(argv[i], "--reliable")) best_effort = 0;
    else if (!strcmp(argv[i], "--timeout-ms")) timeout_ms = opt_long(argc, argv, &i);
    else if (!strcmp(argv[i], "--wait-timeout")) wait_timeout = opt_double(argc, argv, &i);
    else if (!strcmp(argv[i], "--keep-pong")) keep_pong = 1;
    else { usage(); return 2; }
  }
  if (size < 0 || size > (1 << 20) || count < 0 || warmup < 0 || (strcmp(mode, "latency") && strcmp(mode, "throughput")))
    die("bad --size, --count, --warmup or --mode");
  setvbuf(stdout, NULL, _IOLBF, 0);

  z_owned_session_t s;
  if (zr_open(&s, &o, prog) < 0) return 1;
  z_id_t zid = z_info_zid(z_loan(s));
  char zids[33], fqo[64], fqi[64], ko[256], ki[256], nn[1024], mp[1024], ms[1024];
  zr_zid_str(&zid, zids);
  zr_fq_topic(o.ns, ping_role ? "/ping" : "/pong", fqo, sizeof(fqo));
  zr_fq_topic(o.ns, ping_role ? "/pong" : "/ping", fqi, sizeof(fqi));
  const char *hash = o.humble ? ZR_HASH_HUMBLE : ZR_HASH_PAYLOAD_JAZZY;
  const char *qos = best_effort ? "2::,10:,:,:,," : ZR_QOS_DEFAULT10;
  zr_data_key(&o, fqo, ZR_TYPE_PAYLOAD, hash, ko, sizeof(ko));
  zr_data_key(&o, fqi, ZR_TYPE_PAYLOAD, hash, ki, sizeof(ki));
  zr_node_token(&o, zids, 0, nn, sizeof(nn));
  zr_endpoint_token(&o, zids, 0, 10, "MP", fqo, ZR_TYPE_PAYLOAD, hash, qos, mp, sizeof(mp));
  zr_endpoint_token(&o, zids, 0, 11, "MS", fqi, ZR_TYPE_PAYLOAD, hash, qos, ms, sizeof(ms));
  zr_gid_from_token(mp, g_gid);

  z_view_keyexpr_t keo, kei;
  if (z_view_keyexpr_from_str(&keo, ko) < 0 || z_view_keyexpr_from_str(&kei, ki) < 0) die("bad key");
  z_owned_publisher_t pub;
  if (z_declare_publisher(z_loan(s), &pub, z_loan(keo), NULL) < 0) {
    zr_log(prog, "unable to declare the publisher on %s", ko);
    return 1;
  }
  g_pub = z_loan(pub);
  z_owned_closure_sample_t cb;
  z_closure(&cb, on_sample, NULL, NULL);
  z_owned_subscriber_t sub;
  if (z_declare_subscriber(z_loan(s), &sub, z_loan(kei), z_move(cb), NULL) < 0) {
    zr_log(prog, "unable to declare the subscriber on %s", ki);
    return 1;
  }
  z_owned_liveliness_token_t tnn, tmp, tms;
  if (!o.no_tokens && (zr_declare_token(z_loan(s), &tnn, nn, prog) < 0 || zr_declare_token(z_loan(s), &tmp, mp, prog) < 0 ||
                       zr_declare_token(z_loan(s), &tms, ms, prog) < 0))
    return 1;
  zr_log(prog, "zid %s publishing on %s", zids, ko);

  int rc = 0;
  if (!ping_role) {
    for (;;) {
      pthread_mutex_lock(&mu);
      int q = quit;
      pthread_mutex_unlock(&mu);
      if (q) break;
      sleep_ns(20000000LL);
    }
  } else {
    char label[64];
    snprintf(label, sizeof(label), "zpico %s", best_effort ? "best-effort" : "reliable");
    if (zr_wait_match(z_loan(pub), wait_timeout) < 0) {
      zr_log(prog, "no pong matched within %.1f s", wait_timeout);
      return 3;
    }
    sleep_ns(300000000LL);
    uint8_t *buf = (uint8_t *)malloc(16 + (size_t)size);
    size_t len = encode(buf, 0, NULL, (uint32_t)size);
    if (!strcmp(mode, "latency")) {
      int64_t *rtt = (int64_t *)malloc(sizeof(int64_t) * (size_t)(count + 1));
      long ok = 0, lost = 0;
      for (long i = 0; i < warmup + count; i++) {
        int64_t t0 = now_mono_ns();
        put_le64(buf + 4, t0);
        publish(buf, len);
        if (await_stamp(t0, timeout_ms * 1000000LL, NULL) < 0) {
          if (i >= warmup) lost++;
          continue;
        }
        if (i >= warmup) rtt[ok++] = now_mono_ns() - t0;
      }
      if (ok == 0) {
        printf("%s size=%ld samples=0 lost=%ld\n", label, size, lost);
      } else {
        double sum = 0;
        qsort(rtt, (size_t)ok, sizeof(rtt[0]), cmp64);
        for (long i = 0; i < ok; i++) sum += (double)rtt[i];
        printf("%s size=%ld samples=%ld lost=%ld rtt_us min=%.1f mean=%.1f p50=%.1f p90=%.1f p99=%.1f max=%.1f\n",
               label, size, ok, lost, rtt[0] / 1e3, sum / (double)ok / 1e3, rank(rtt, ok, 50) / 1e3,
               rank(rtt, ok, 90) / 1e3, rank(rtt, ok, 99) / 1e3, rtt[ok - 1] / 1e3);
      }
      free(rtt);
    } else {
      uint8_t ctl[48], rep[32];
      int tries;
      for (tries = 0; tries < 25; tries++) {
        publish(ctl, encode(ctl, PP_SINK, NULL, 0));
        if (await_stamp(PP_SINK, 200000000LL, NULL) == 0) break;
      }
      if (tries == 25) die("pong did not acknowledge the throughput start");
      long sent = 0;
      int64_t t0 = now_mono_ns(), end = t0 + (int64_t)(duration * 1e9), t1;
      while ((t1 = now_mono_ns()) < end) {
        for (int j = 0; j < 64; j++) {
          put_le64(buf + 4, sent++);
          publish(buf, len);
        }
      }
      double dt = (double)(t1 - t0) / 1e9;
      zr_log(prog, "flooded %ld samples in %.2f s (%ld puts failed)", sent, dt, put_failed);
      for (tries = 0; tries < 100; tries++) {
        publish(ctl, encode(ctl, PP_REPORT, NULL, 0));
        if (await_stamp(PP_REPORT, 300000000LL, rep) == 0) break;
      }
      if (tries == 100) {
        zr_log(prog, "no report from pong");
        rc = 1;
      } else {
        int64_t r = zr_get_le64(rep), bytes = zr_get_le64(rep + 8), first = zr_get_le64(rep + 16),
                last = zr_get_le64(rep + 24);
        double rdt = last > first ? (double)(last - first) / 1e9 : dt;
        printf("%s throughput size=%ld depth=10 duration_s=%.2f sent=%ld sent_msgs_per_s=%.0f received=%lld "
               "lost=%lld recv_msgs_per_s=%.0f recv_MB_per_s=%.2f recv_Mbit_per_s=%.1f\n",
               label, size, dt, sent, (double)sent / dt, (long long)r, (long long)(sent - r), (double)r / rdt,
               (double)bytes / rdt / 1e6, (double)bytes * 8 / rdt / 1e6);
      }
    }
    if (!keep_pong) {
      uint8_t ctl[16];
      for (int q = 0; q < 3; q++) {
        publish(ctl, encode(ctl, PP_QUIT, NULL, 0));
        sleep_ns(20000000LL);
      }
    }
    free(buf);
  }
  z_drop(z_move(sub));
  z_drop(z_move(pub));
  if (!o.no_tokens) {
    z_drop(z_move(tms));
    z_drop(z_move(tmp));
    z_drop(z_move(tnn));
  }
  z_drop(z_move(s));
  return rc;
}
