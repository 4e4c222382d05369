/* clocksub_cyclone - prints every rosgraph_msgs/Clock sample it takes
 * (Cyclone DDS). Flags and output: see clocksub in ../README.md. */
#include "cyclone.h"

int main(int argc, char **argv) {
  common_opts c;
  const char *topic = "/clock";
  double timeout = 30;
  long count = 0, got = 0, depth = 1;
  int reliable = 0;
  char dds_name[256];
  g_prog = "clocksub_cyclone";
  common_defaults(&c, g_prog);
  {
    const flag_t fl[] = {
      {"topic", FLAG_STRING, &topic, "ROS topic (/clock)"},
      {"count", FLAG_INT, &count, "exit 0 after N samples (0 = run until --timeout)"},
      {"timeout", FLAG_DOUBLE, &timeout, "seconds to run (30); exit 3 if --count was not reached"},
      {"reliable", FLAG_BOOL, &reliable, "RELIABLE instead of ClockQoS best effort"},
      {"depth", FLAG_INT, &depth, "KEEP_LAST depth (1)"},
      COMMON_FLAGS(c),
    };
    flags_parse(argc, argv, 1, "[flags]  prints 'recv_wall_ns sec nanosec' per sample", fl, sizeof fl / sizeof fl[0]);
  }
  common_check(&c);
  setvbuf(stdout, NULL, _IOLBF, 0);
  dds_topic_name(topic, dds_name, sizeof dds_name);
  cy_node n = cy_node_new(&c);
  dds_entity_t t = cy_topic(&n, &rosgraph_msgs_msg_dds__Clock__desc, dds_name);
  dds_entity_t r = cy_reader(&n, t, reliable, (int)depth, 0);
  dds_entity_t ws = cy_waitset(&n, r);
  cy_announce(&n, &r, 1, NULL, 0);
  int64_t deadline = mono_ns() + secs_to_ns(timeout);
  match_seen matched = {0, 0};
  while (count == 0 || got < count) {
    void *buf[16] = {NULL};
    dds_subscription_matched_status_t ms;
    dds_sample_info_t info[16];
    int64_t left = deadline - mono_ns();
    int m, i;
    if (left <= 0) break;
    dds_waitset_wait(ws, NULL, 0, left < DDS_MSECS(50) ? left : DDS_MSECS(50));
    if (dds_get_subscription_matched_status(r, &ms) == 0) report_matched(&matched, (long)ms.current_count, (long)ms.total_count, "publisher(s)");
    while ((m = dds_take(r, buf, info, 16, 16)) > 0) {
      int64_t now = wall_ns();
      for (i = 0; i < m; i++) {
        const rosgraph_msgs_msg_dds__Clock_ *s = (const rosgraph_msgs_msg_dds__Clock_ *)buf[i];
        if (!info[i].valid_data || (count && got >= count)) continue;
        printf("%lld %d %u\n", (long long)now, (int)s->clock.sec, (unsigned)s->clock.nanosec);
        got++;
      }
      dds_return_loan(r, buf, m);
      if (count && got >= count) break;
    }
  }
  fprintf(stderr, "%s: %ld samples on %s, domain %ld\n", g_prog, got, dds_name, c.domain);
  cy_node_close(&n);
  return count && got < count ? EXIT_TIMEOUT : EXIT_OK;
}
