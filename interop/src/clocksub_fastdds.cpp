// clocksub_fastdds - prints every rosgraph_msgs/Clock sample it takes
// (Fast DDS). Flags and output: see clocksub in ../README.md.
#include "fastdds.hpp"

int main(int argc, char **argv) {
  common_opts c;
  const char *topic = "/clock";
  double timeout = 30;
  long count = 0, got = 0, depth = 1;
  int reliable = 0;
  char dds_name[256];
  g_prog = "clocksub_fastdds";
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
  {
    FdNode n(c);
    fdds::Topic *t = n.topic<ClockMsg>(CLOCK_TYPE, 8, dds_name);
    fdds::DataReader *r = n.reader(t, reliable, (int)depth, false);
    n.announce({r}, {});
    int64_t deadline = mono_ns() + secs_to_ns(timeout);
    ClockMsg m;
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
        printf("%lld %d %u\n", (long long)wall_ns(), (int)m.sec, (unsigned)m.nanosec);
        got++;
      }
    }
    fprintf(stderr, "%s: %ld samples on %s, domain %ld\n", g_prog, got, dds_name, c.domain);
  }
  return count && got < count ? EXIT_TIMEOUT : EXIT_OK;
}
