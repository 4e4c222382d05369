// chattersub_fastdds - prints every std_msgs/String sample it takes and
// checks their order (Fast DDS). See chattersub in ../README.md.
#include "fastdds.hpp"

int main(int argc, char **argv) {
  common_opts c;
  const char *topic = "/chatter";
  double timeout = 30;
  long count = 0, got = 0, depth = 10, first = 1;
  int best_effort = 0, tl = 0, quiet = 0;
  order_check oc;
  char dds_name[256];
  g_prog = "chattersub_fastdds";
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
  {
    FdNode n(c);
    fdds::Topic *t = n.topic<StringMsg>(STRING_TYPE, 64, dds_name);
    fdds::DataReader *r = n.reader(t, !best_effort, (int)depth, tl);
    n.announce({r}, {});
    int64_t deadline = mono_ns() + secs_to_ns(timeout);
    StringMsg m;
    fdds::SampleInfo info;
    match_seen matched = {0, 0};
    while (count == 0 || got < count) {
      fdds::SubscriptionMatchedStatus ms;
      int64_t left = deadline - mono_ns();
      if (left <= 0) break;
      r->wait_for_unread_message(fd_duration(left < 50000000 ? left : 50000000));
      if (r->get_subscription_matched_status(ms) == ReturnCode_t::RETCODE_OK) report_matched(&matched, ms.current_count, ms.total_count, "publisher(s)");
      while ((count == 0 || got < count) && r->take_next_sample(&m, &info) == ReturnCode_t::RETCODE_OK) {
        if (!info.valid_data) continue;
        order_see(&oc, m.data.c_str(), m.data.size());
        if (!quiet) chatter_line(wall_ns(), m.data.c_str(), m.data.size());
        got++;
      }
    }
    fprintf(stderr, "%s: %ld samples on %s, domain %ld, %ld out of order\n", g_prog, got, dds_name, c.domain, oc.errors);
  }
  return chatter_exit(count, got, &oc);
}
