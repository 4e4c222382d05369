/* chatterpub_cyclone - publishes numbered std_msgs/String samples
 * (Cyclone DDS). Flags and output: see chatterpub in ../README.md. */
#include "cyclone.h"

int main(int argc, char **argv) {
  common_opts c;
  const char *topic = "/chatter", *prefix = CHATTER_PREFIX;
  double hz = 10, timeout = 30, settle = 0.3, linger = 0.2;
  long count = 10, size = 0, depth = 10, wait_subs = 0, first = 1, i;
  int best_effort = 0, tl = 0, rc = EXIT_OK, gate = 0;
  char dds_name[256];
  g_prog = "chatterpub_cyclone";
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
  cy_node n = cy_node_new(&c);
  dds_entity_t t = cy_topic(&n, &std_msgs_msg_dds__String__desc, dds_name);
  dds_entity_t w = cy_writer(&n, t, !best_effort, (int)depth, tl);
  cy_announce(&n, NULL, 0, &w, 1);
  if (wait_subs > 0) {
    if (cy_wait_readers(w, wait_subs, timeout) < 0) fatal("no %ld subscriber(s) within %.1f s", wait_subs, timeout);
    nap(secs_to_ns(settle));
    fprintf(stderr, "%s: matched %ld subscriber(s)\n", g_prog, wait_subs);
  }
  if (gate) gate_wait();
  size_t cap = (size_t)size + strlen(prefix) + 32;
  char *text = (char *)malloc(cap);
  int64_t period = (int64_t)(1e9 / hz + 0.5), next = mono_ns();
  for (i = first; i < first + count; i++, next += period) {
    std_msgs_msg_dds__String_ m;
    size_t len;
    int64_t w0;
    sleep_until(next);
    len = chatter_text(text, cap, prefix, i, size);
    m.data = text;
    w0 = wall_ns();
    CY_OK(dds_write(w, &m));
    chatter_line(w0, text, len);
  }
  if (!best_effort && dds_wait_for_acks(w, secs_to_ns(timeout)) != 0) {
    fprintf(stderr, "%s: not all samples acknowledged within %.1f s\n", g_prog, timeout);
    rc = EXIT_TIMEOUT;
  }
  fprintf(stderr, "%s: %ld samples on %s, domain %ld\n", g_prog, count, dds_name, c.domain);
  nap(secs_to_ns(linger));
  cy_node_close(&n);
  free(text);
  return rc;
}
