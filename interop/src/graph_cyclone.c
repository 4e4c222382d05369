/* graph_cyclone - lists the ROS nodes it reads on ros_discovery_info
 * (Cyclone DDS), as `ros2 node list` sees them. Built twice: graph_cyclone
 * reads and writes the Humble layout (Gid char[24], types.idl),
 * graph_cyclone_jazzy the Iron/Jazzy one (uint8[16], graph_jazzy.idl);
 * a sample in the other layout does not deserialize and is not listed.
 *
 * Prints "node <fqn> <readers> <writers>" for every node of every sample
 * it takes (again when a participant's sample changes). With --want FQN it
 * exits 0 as soon as that node is listed with at least --readers and
 * --writers endpoints, 3 at --timeout. It announces its own node (--node,
 * no endpoints) in its layout.
 */
#include "peer.h"
#include "dds/dds.h"
#ifdef GRAPH_JAZZY
#include "graph_jazzy.h"
#define GID_SIZE 16
#else
#include "types.h"
#define GID_SIZE 24
#endif

#define LOOPBACK_ONLY                                                                          \
  "<CycloneDDS><Domain id=\"any\"><General><Interfaces>"                                       \
  "<NetworkInterface name=\"lo\" multicast=\"true\"/></Interfaces>"                            \
  "<AllowMulticast>true</AllowMulticast></General></Domain></CycloneDDS>"

int main(int argc, char **argv) {
  common_opts c;
  const char *want = "";
  long want_r = 0, want_w = 0;
  double timeout = 30, linger = 0;
  static const char enclave[] = "enclave=/;";
  g_prog = GID_SIZE == 16 ? "graph_cyclone_jazzy" : "graph_cyclone";
  common_defaults(&c, g_prog);
  {
    const flag_t fl[] = {
      {"want", FLAG_STRING, &want, "exit 0 once this node (fully qualified) is listed"},
      {"readers", FLAG_INT, &want_r, "... with at least this many readers (0)"},
      {"writers", FLAG_INT, &want_w, "... and this many writers (0)"},
      {"timeout", FLAG_DOUBLE, &timeout, "seconds to run (30); exit 3 if --want was not seen"},
      {"linger", FLAG_DOUBLE, &linger, "seconds to stay once --want was seen (0)"},
      COMMON_FLAGS(c),
    };
    flags_parse(argc, argv, 1, "[flags]", fl, sizeof fl / sizeof fl[0]);
  }
  common_check(&c);
  setvbuf(stdout, NULL, _IOLBF, 0);
  dds_entity_t dom = dds_create_domain((dds_domainid_t)c.domain, LOOPBACK_ONLY);
  if (dom < 0) fatal("dds_create_domain: %s", dds_strretcode(dom));
  dds_qos_t *q = dds_create_qos();
  dds_qset_userdata(q, enclave, strlen(enclave));
  dds_entity_t pp = dds_create_participant((dds_domainid_t)c.domain, q, NULL);
  dds_delete_qos(q);
  if (pp < 0) fatal("dds_create_participant: %s", dds_strretcode(pp));
  dds_entity_t t = dds_create_topic(pp, &rmw_dds_common_msg_dds__ParticipantEntitiesInfo__desc, "ros_discovery_info", NULL, NULL);
  if (t < 0) fatal("topic: %s", dds_strretcode(t));
  /* As rmw: RELIABLE, TRANSIENT_LOCAL; the writer KEEP_LAST 1, the reader
   * KEEP_ALL and blind to its own participant. */
  q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_INFINITY);
  dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
  dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 1);
  dds_qset_durability_service(q, 0, DDS_HISTORY_KEEP_LAST, 1, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
  dds_entity_t w = dds_create_writer(pp, t, q, NULL);
  dds_qset_history(q, DDS_HISTORY_KEEP_ALL, DDS_LENGTH_UNLIMITED);
  dds_qset_ignorelocal(q, DDS_IGNORELOCAL_PARTICIPANT);
  dds_entity_t r = dds_create_reader(pp, t, q, NULL);
  dds_delete_qos(q);
  if (w < 0 || r < 0) fatal("graph endpoints: %s / %s", dds_strretcode(w), dds_strretcode(r));
  {
    rmw_dds_common_msg_dds__ParticipantEntitiesInfo_ me;
    rmw_dds_common_msg_dds__NodeEntitiesInfo_ node;
    dds_guid_t g;
    memset(&me, 0, sizeof me);
    memset(&node, 0, sizeof node);
    if (dds_get_guid(pp, &g) == 0) memcpy(me.gid.data, g.v, 16);
    snprintf(node.node_namespace, sizeof node.node_namespace, "/");
    snprintf(node.node_name, sizeof node.node_name, "%s", c.node);
    me.node_entities_info_seq._buffer = &node;
    me.node_entities_info_seq._length = me.node_entities_info_seq._maximum = 1;
    if (dds_write(w, &me) < 0) fatal("write ros_discovery_info");
  }
  dds_entity_t ws = dds_create_waitset(pp);
  dds_entity_t cond = dds_create_readcondition(r, DDS_ANY_STATE);
  dds_waitset_attach(ws, cond, r);
  int64_t deadline = mono_ns() + secs_to_ns(timeout);
  int rc = EXIT_TIMEOUT;
  while (rc != EXIT_OK && mono_ns() < deadline) {
    void *buf[8] = {NULL};
    dds_sample_info_t info[8];
    int m, i;
    uint32_t k;
    dds_waitset_wait(ws, NULL, 0, DDS_MSECS(50));
    while ((m = dds_take(r, buf, info, 8, 8)) > 0) {
      for (i = 0; i < m; i++) {
        const rmw_dds_common_msg_dds__ParticipantEntitiesInfo_ *p = buf[i];
        if (!info[i].valid_data) continue;
        for (k = 0; k < p->node_entities_info_seq._length; k++) {
          const rmw_dds_common_msg_dds__NodeEntitiesInfo_ *n = &p->node_entities_info_seq._buffer[k];
          char fqn[600];
          if (strcmp(n->node_namespace, "/") == 0) snprintf(fqn, sizeof fqn, "/%s", n->node_name);
          else snprintf(fqn, sizeof fqn, "%s/%s", n->node_namespace, n->node_name);
          printf("node %s %u %u\n", fqn, n->reader_gid_seq._length, n->writer_gid_seq._length);
          if (*want && strcmp(fqn, want) == 0 && (long)n->reader_gid_seq._length >= want_r &&
              (long)n->writer_gid_seq._length >= want_w)
            rc = EXIT_OK;
        }
      }
      dds_return_loan(r, buf, m);
    }
    if (!*want) rc = EXIT_TIMEOUT;
  }
  if (!*want) rc = EXIT_OK;
  if (rc == EXIT_OK) nap(secs_to_ns(linger));
  dds_delete(pp);
  return rc;
}
