// chatterpub_fastdds - publishes numbered std_msgs/String samples
// (Fast DDS). Flags and output: see chatterpub in ../README.md.
#include "fastdds.hpp"

int main(int argc, char **argv) {
  common_opts c;
  const char *topic = "/chatter", *prefix = CHATTER_PREFIX;
  double hz = 10, timeout = 30, settle = 0.3, linger = 0.2;
  long count = 10, size = 0, depth = 10, wait_subs = 0, first = 1;
  int best_effort = 0, tl = 0, rc = EXIT_OK, gate = 0;
  char dds_name[256];
  g_prog = "chatterpub_fastdds";
  common_defaults(&c, g_prog);
  {
    const flag_t fl[] = {
      {"topic", FLAG_STRING, &topic, "ROS topic (/chatter)"},
      {"count", FLAG_INT, &count, "samples to publish (10)"},
      {"first", FLAG_INT, &first, "sequence number of the first sample (1)"},
      {"hz", FLAG_DOUBLE, &hz, "samples per second (10)"},
      {"prefix", FLAG_STRING, &prefix, "text before the sequence number ('Hello World: ')"},
      {"size", FLAG_INT, &size, "pad each string with '.' to BYTES characters"},
      {"best-effort", FLAG_BOOL, &best_effort, "BEST_EFFORT (default RELIABLE)"},
      {"transient-local", FLAG_BOOL, &tl, "TRANSIENT_LOCAL (default VOLATILE)"},
      {"depth", FLAG_INT, &depth, "KEEP_LAST depth, 0 = KEEP_ALL (10)"},
      {"wait-subs", FLAG_INT, &wait_subs, "wait for N matched subscribers first (0)"},
      {"timeout", FLAG_DOUBLE, &timeout, "seconds to wait for subscribers, and for acks at the end (30)"},
      {"wait-timeout", FLAG_DOUBLE, &timeout, "same as --timeout"},
      {"settle", FLAG_DOUBLE, &settle, "seconds to wait after matching (0.3)"},
      {"linger", FLAG_DOUBLE, &linger, "seconds to stay after the last sample (0.2)"},
      {"gate", FLAG_BOOL, &gate, "after matching, wait for a line on stdin before publishing"},
      COMMON_FLAGS(c),
    };
    flags_parse(argc, argv, 1, "[flags]  prints 'wall_ns len data-prefix' per sample", fl, sizeof fl / sizeof fl[0]);
  }
  common_check(&c);
  if (!(hz > 0)) fatal("--hz must be > 0");
  if (size < 0 || size > 512L * 1024 * 1024) fatal("--size out of range");
  setvbuf(stdout, NULL, _IOLBF, 0);
  dds_topic_name(topic, dds_name, sizeof dds_name);
  {
    FdNode n(c);
    fdds::Topic *t = n.topic<StringMsg>(STRING_TYPE, 64, dds_name);
    fdds::DataWriter *w = n.writer(t, !best_effort, (int)depth, tl);
    n.announce({}, {w});
    if (wait_subs > 0) {
      if (fd_wait_readers(w, wait_subs, timeout) < 0) fatal("no %ld subscriber(s) within %.1f s", wait_subs, timeout);
      nap(secs_to_ns(settle));
      fprintf(stderr, "%s: matched %ld subscriber(s)\n", g_prog, wait_subs);
    }
    if (gate) gate_wait();
    std::vector<char> text((size_t)size + strlen(prefix) + 32);
    StringMsg m;
    int64_t period = (int64_t)(1e9 / hz + 0.5), next = mono_ns();
    for (long i = first; i < first + count; i++, next += period) {
      sleep_until(next);
      size_t len = chatter_text(text.data(), text.size(), prefix, i, size);
      m.data.assign(text.data(), len);
      int64_t w0 = wall_ns();
      if (!w->write(&m)) fprintf(stderr, "%s: write #%ld failed\n", g_prog, i);
      chatter_line(w0, text.data(), len);
    }
    if (!best_effort && w->wait_for_acknowledgments(fd_duration(secs_to_ns(timeout))) != ReturnCode_t::RETCODE_OK) {
      fprintf(stderr, "%s: not all samples acknowledged within %.1f s\n", g_prog, timeout);
      rc = EXIT_TIMEOUT;
    }
    fprintf(stderr, "%s: %ld samples on %s, domain %ld\n", g_prog, count, dds_name, c.domain);
    nap(secs_to_ns(linger));
  }
  return rc;
}
