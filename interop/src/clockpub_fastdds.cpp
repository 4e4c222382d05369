// clockpub_fastdds - publishes rosgraph_msgs/Clock following a script
// (Fast DDS). Flags and output: see clockpub in ../README.md.
#include "fastdds.hpp"

static void publish(void *ctx, int32_t sec, uint32_t nanosec) {
  ClockMsg m;
  m.sec = sec;
  m.nanosec = nanosec;
  static_cast<fdds::DataWriter *>(ctx)->write(&m);
}

int main(int argc, char **argv) {
  common_opts c;
  const char *script = "start=0;play 1x 5s", *topic = "/clock";
  double hz = 100, wait_timeout = 30, settle = 0.3, linger = 0.2;
  long wait_subs = 0, depth = 1;
  int reliable = 0, dry = 0, gate = 0;
  char dds_name[256], err[512];
  static clock_script sc;
  g_prog = "clockpub_fastdds";
  common_defaults(&c, g_prog);
  {
    const flag_t fl[] = {
      {"script", FLAG_STRING, &script, "clock script (default 'start=0;play 1x 5s')"},
      {"hz", FLAG_DOUBLE, &hz, "samples per wall second (100)"},
      {"topic", FLAG_STRING, &topic, "ROS topic (/clock)"},
      {"wait-subs", FLAG_INT, &wait_subs, "wait for N matched subscribers first (0)"},
      {"wait-timeout", FLAG_DOUBLE, &wait_timeout, "seconds to wait for them (30)"},
      {"timeout", FLAG_DOUBLE, &wait_timeout, "same as --wait-timeout"},
      {"settle", FLAG_DOUBLE, &settle, "seconds to wait after matching (0.3)"},
      {"linger", FLAG_DOUBLE, &linger, "seconds to stay after the last sample (0.2)"},
      {"reliable", FLAG_BOOL, &reliable, "RELIABLE instead of ClockQoS best effort"},
      {"depth", FLAG_INT, &depth, "KEEP_LAST depth (1)"},
      {"dry-run", FLAG_BOOL, &dry, "print the samples at once, publish nothing"},
      {"gate", FLAG_BOOL, &gate, "after matching, wait for a line on stdin before publishing"},
      COMMON_FLAGS(c),
    };
    flags_parse(argc, argv, 1, "[flags]  prints 'wall_ns sec nanosec' per sample", fl, sizeof fl / sizeof fl[0]);
  }
  common_check(&c);
  if (!(hz > 0)) fatal("--hz must be > 0");
  if (clock_script_parse(script, &sc, err, sizeof err) < 0) fatal("%s", err);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (dry) {
    clock_script_play(&sc, (int64_t)(1e9 / hz + 0.5), NULL, NULL, 1);
    return 0;
  }
  dds_topic_name(topic, dds_name, sizeof dds_name);
  long k;
  {
    FdNode n(c);
    fdds::Topic *t = n.topic<ClockMsg>(CLOCK_TYPE, 8, dds_name);
    fdds::DataWriter *w = n.writer(t, reliable, (int)depth, false);
    n.announce({}, {w});
    if (wait_subs > 0) {
      if (fd_wait_readers(w, wait_subs, wait_timeout) < 0) fatal("no %ld subscriber(s) within %.1f s", wait_subs, wait_timeout);
      nap(secs_to_ns(settle));
      fprintf(stderr, "%s: matched %ld subscriber(s)\n", g_prog, wait_subs);
    }
    if (gate) gate_wait();
    k = clock_script_play(&sc, (int64_t)(1e9 / hz + 0.5), publish, w, 0);
    fprintf(stderr, "%s: %ld samples on %s, domain %ld\n", g_prog, k, dds_name, c.domain);
    nap(secs_to_ns(linger));
  }
  return 0;
}
