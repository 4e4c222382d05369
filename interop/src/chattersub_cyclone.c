/* chattersub_cyclone - prints every std_msgs/String sample it takes and
 * checks their order (Cyclone DDS). See chattersub in ../README.md. */
#include "cyclone.h"

int main(int argc, char **argv) {
  common_opts c;
  const char *topic = "/chatter";
  double timeout = 30;
  long count = 0, got = 0, depth = 10, first = 1;
  int best_effort = 0, tl = 0, quiet = 0;
  order_check oc;
  char dds_name[256];
  g_prog = "chattersub_cyclone";
  common_defaults(&c, g_prog);
  memset(&oc, 0, sizeof oc);
  oc.prefix = CHATTER_PREFIX;
  {
    const flag_t fl[] = {
      {"topic", FLAG_STRING, &topic, "ROS topic (/chatter)"},
      {"count", FLAG_INT, &count, "exit after N samples (0 = run until --timeout)"},
      {"timeout", FLAG_DOUBLE, &timeout, "seconds to run (30); exit 3 if --count was not reached"},
      {"best-effort", FLAG_BOOL, &best_effort, "BEST_EFFORT (default RELIABLE)"},
      {"transient-local", FLAG_BOOL, &tl, "TRANSIENT_LOCAL (default VOLATILE)"},
      {"depth", FLAG_INT, &depth, "KEEP_LAST depth, 0 = KEEP_ALL (10)"},
      {"prefix", FLAG_STRING, &oc.prefix, "text before the sequence number ('Hello World: ')"},
      {"first", FLAG_INT, &first, "sequence number expected first, 0 = any (1)"},
      {"allow-gaps", FLAG_BOOL, &oc.allow_gaps, "only require increasing numbers"},
      {"quiet", FLAG_BOOL, &quiet, "print nothing per sample"},
      COMMON_FLAGS(c),
    };
    flags_parse(argc, argv, 1, "[flags]  prints 'recv_wall_ns len data-prefix'; exit 3 short, 4 out of order", fl,
                sizeof fl / sizeof fl[0]);
  }
  common_check(&c);
  oc.expect = first;
  setvbuf(stdout, NULL, _IOLBF, 0);
  dds_topic_name(topic, dds_name, sizeof dds_name);
  cy_node n = cy_node_new(&c);
  dds_entity_t t = cy_topic(&n, &std_msgs_msg_dds__String__desc, dds_name);
  dds_entity_t r = cy_reader(&n, t, !best_effort, (int)depth, tl);
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
        const std_msgs_msg_dds__String_ *s = (const std_msgs_msg_dds__String_ *)buf[i];
        size_t len;
        if (!info[i].valid_data || (count && got >= count)) continue;
        len = s->data ? strlen(s->data) : 0;
        order_see(&oc, s->data ? s->data : "", len);
        if (!quiet) chatter_line(now, s->data ? s->data : "", len);
        got++;
      }
      dds_return_loan(r, buf, m);
    }
  }
  fprintf(stderr, "%s: %ld samples on %s, domain %ld, %ld out of order\n", g_prog, got, dds_name, c.domain, oc.errors);
  cy_node_close(&n);
  return chatter_exit(count, got, &oc);
}
