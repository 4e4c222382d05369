/*
 * cyclone.h - the Cyclone DDS 0.10 side of the peers: a domain that can
 * only use loopback, a participant set up the way rmw_cyclonedds_cpp
 * (Humble) sets one up, ROS QoS profiles and the ros_discovery_info
 * announcement.
 */
#ifndef NROS_INTEROP_CYCLONE_H
#define NROS_INTEROP_CYCLONE_H

#include "peer.h"
#include "dds/dds.h"
#include "types.h"

#define VENDOR "cyclone"

#define CY_OK(call)                                                            \
  do {                                                                         \
    dds_return_t rc_ = (call);                                                 \
    if (rc_ < 0) fatal("%s failed: %s", #call, dds_strretcode(rc_));           \
  } while (0)

/* lo is the only interface, multicast forced on (Cyclone treats lo as
 * non-multicast by default, and SPDP needs it). */
#define CY_FORCE_LOOPBACK                                                                      \
  "<CycloneDDS><Domain id=\"any\"><General><Interfaces>"                                       \
  "<NetworkInterface name=\"lo\" multicast=\"true\"/></Interfaces>"                            \
  "<AllowMulticast>true</AllowMulticast></General></Domain></CycloneDDS>"
/* --fixed-ports: unicast on 7410+2i like rmw_cyclonedds on Jazzy, so a
 * port-range filter can see all of a domain's traffic. */
#define CY_FIXED_PORTS                                                                         \
  "<CycloneDDS><Domain id=\"any\"><Discovery><ParticipantIndex>auto</ParticipantIndex>"        \
  "<MaxAutoParticipantIndex>32</MaxAutoParticipantIndex></Discovery></Domain></CycloneDDS>"

typedef struct {
  dds_entity_t participant, publisher, subscriber;
  dds_entity_t graph_writer, graph_reader;
  const char *node;
  int graph;
} cy_node;

/* DDS Security from an enclave, exactly the properties rmw_cyclonedds
 * (Humble configure_qos_for_security) sets: the six files as "file:" URIs
 * and the three builtin plugin libraries (Debian's libddsc finds
 * libdds_security_*.so in its private directory). */
static inline void cy_qset_security(dds_qos_t *q, const char *root) {
  static const char *const file_props[6] = {
    "dds.sec.auth.identity_ca", "dds.sec.auth.identity_certificate", "dds.sec.auth.private_key",
    "dds.sec.access.permissions_ca", "dds.sec.access.governance", "dds.sec.access.permissions",
  };
  char uri[1100];
  int i;
  for (i = 0; i < 6; i++) {
    snprintf(uri, sizeof uri, "file:%s/%s", root, SEC_FILES[i]);
    dds_qset_prop(q, file_props[i], uri);
  }
  dds_qset_prop(q, "dds.sec.auth.library.path", "dds_security_auth");
  dds_qset_prop(q, "dds.sec.auth.library.init", "init_authentication");
  dds_qset_prop(q, "dds.sec.auth.library.finalize", "finalize_authentication");
  dds_qset_prop(q, "dds.sec.crypto.library.path", "dds_security_crypto");
  dds_qset_prop(q, "dds.sec.crypto.library.init", "init_crypto");
  dds_qset_prop(q, "dds.sec.crypto.library.finalize", "finalize_crypto");
  dds_qset_prop(q, "dds.sec.access.library.path", "dds_security_ac");
  dds_qset_prop(q, "dds.sec.access.library.init", "init_access_control");
  dds_qset_prop(q, "dds.sec.access.library.finalize", "finalize_access_control");
}

/* Creates the domain from the built-in loopback-only config (plus
 * --fixed-ports), then one participant with USER_DATA "enclave=/;" (10
 * bytes, no NUL; the enclave's name when secure), secured from the enclave
 * when asked (sec_root), one publisher and one subscriber. $CYCLONEDDS_URI
 * is deliberately not used: Cyclone merges interface lists across config
 * sources, so any config added there could widen the interface set. */
static inline cy_node cy_node_new(const common_opts *c) {
  cy_node n;
  char enclave[300], root[1024];
  dds_qos_t *q;
  dds_entity_t dom;
  dom = dds_create_domain((dds_domainid_t)c->domain, c->fixed_ports ? CY_FORCE_LOOPBACK "," CY_FIXED_PORTS : CY_FORCE_LOOPBACK);
  if (dom < 0) fatal("dds_create_domain(%ld) failed: %s", c->domain, dds_strretcode(dom));

  memset(&n, 0, sizeof(n));
  q = dds_create_qos();
  snprintf(enclave, sizeof enclave, "enclave=%s;", sec_enclave_name(c));
  dds_qset_userdata(q, enclave, strlen(enclave));
  if (sec_root(c, root, sizeof root)) cy_qset_security(q, root);
  n.participant = dds_create_participant((dds_domainid_t)c->domain, q, NULL);
  if (n.participant < 0) fatal("dds_create_participant: %s", dds_strretcode(n.participant));
  dds_delete_qos(q);
  n.publisher = dds_create_publisher(n.participant, NULL, NULL);
  n.subscriber = dds_create_subscriber(n.participant, NULL, NULL);
  if (n.publisher < 0 || n.subscriber < 0) fatal("cannot create publisher/subscriber");
  n.node = c->node;
  n.graph = !c->no_graph;
  return n;
}

/* Deletes everything, the domain created by cy_node_new included, so that
 * no Cyclone thread is left running while exit() runs: with security on,
 * a thread still inside the plugins after OpenSSL's atexit cleanup crashed
 * the process at exit (SIGSEGV, about one exit in two). */
static inline void cy_node_close(cy_node *n) {
  (void)n;
  dds_delete(DDS_CYCLONEDDS_HANDLE);
}

/* QoS the way rmw_cyclonedds builds it from a ROS profile: KEEP_LAST(depth)
 * or KEEP_ALL (depth 0), RELIABLE with infinite max_blocking_time or
 * BEST_EFFORT, VOLATILE or TRANSIENT_LOCAL, AUTOMATIC liveliness with an
 * infinite lease, writers without autodispose. */
static inline dds_qos_t *cy_qos(int reliable, int depth, int transient_local) {
  dds_qos_t *q = dds_create_qos();
  if (depth > 0) dds_qset_history(q, DDS_HISTORY_KEEP_LAST, depth);
  else dds_qset_history(q, DDS_HISTORY_KEEP_ALL, DDS_LENGTH_UNLIMITED);
  if (reliable) dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_INFINITY);
  else dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
  dds_qset_durability(q, transient_local ? DDS_DURABILITY_TRANSIENT_LOCAL : DDS_DURABILITY_VOLATILE);
  if (transient_local)
    dds_qset_durability_service(q, 0, depth > 0 ? DDS_HISTORY_KEEP_LAST : DDS_HISTORY_KEEP_ALL, depth > 0 ? depth : 1,
                                DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
  dds_qset_liveliness(q, DDS_LIVELINESS_AUTOMATIC, DDS_INFINITY);
  dds_qset_writer_data_lifecycle(q, false);
  return q;
}

static inline dds_entity_t cy_topic(cy_node *n, const dds_topic_descriptor_t *desc, const char *name) {
  dds_entity_t t = dds_create_topic(n->participant, desc, name, NULL, NULL);
  if (t < 0) fatal("dds_create_topic(%s): %s", name, dds_strretcode(t));
  return t;
}
static inline dds_entity_t cy_writer(cy_node *n, dds_entity_t topic, int reliable, int depth, int tl) {
  dds_qos_t *q = cy_qos(reliable, depth, tl);
  dds_entity_t w = dds_create_writer(n->publisher, topic, q, NULL);
  dds_delete_qos(q);
  if (w < 0) fatal("dds_create_writer: %s", dds_strretcode(w));
  return w;
}
static inline dds_entity_t cy_reader(cy_node *n, dds_entity_t topic, int reliable, int depth, int tl) {
  dds_qos_t *q = cy_qos(reliable, depth, tl);
  dds_entity_t r = dds_create_reader(n->subscriber, topic, q, NULL);
  dds_delete_qos(q);
  if (r < 0) fatal("dds_create_reader: %s", dds_strretcode(r));
  return r;
}

/* Waits until writer w has at least want matched readers. 0 ok, -1 timeout. */
static inline int cy_wait_readers(dds_entity_t w, long want, double timeout_s) {
  int64_t deadline = mono_ns() + secs_to_ns(timeout_s);
  for (;;) {
    dds_publication_matched_status_t st;
    if (dds_get_publication_matched_status(w, &st) == 0 && (long)st.current_count >= want) return 0;
    if (mono_ns() >= deadline) return -1;
    nap(5000000);
  }
}
/* Waits until reader r has at least want matched writers. */
static inline int cy_wait_writers(dds_entity_t r, long want, double timeout_s) {
  int64_t deadline = mono_ns() + secs_to_ns(timeout_s);
  for (;;) {
    dds_subscription_matched_status_t st;
    if (dds_get_subscription_matched_status(r, &st) == 0 && (long)st.current_count >= want) return 0;
    if (mono_ns() >= deadline) return -1;
    nap(5000000);
  }
}

/* A waitset that fires when rd has any sample. */
static inline dds_entity_t cy_waitset(cy_node *n, dds_entity_t rd) {
  dds_entity_t ws = dds_create_waitset(n->participant);
  dds_entity_t cond = dds_create_readcondition(rd, DDS_ANY_STATE);
  if (ws < 0 || cond < 0) fatal("cannot create waitset");
  CY_OK(dds_waitset_attach(ws, cond, rd));
  return ws;
}

/* ---- ros_discovery_info ---------------------------------------------- */

static inline void cy_gid(dds_entity_t e, rmw_dds_common_msg_dds__Gid_ *g) {
  dds_guid_t guid;
  memset(g, 0, sizeof(*g));
  if (dds_get_guid(e, &guid) == 0) memcpy(g->data, guid.v, 16); /* + 8 zero bytes (Humble) */
}

/* Publishes this process's single node "/<node>" with its endpoints on
 * ros_discovery_info: writer RELIABLE, TRANSIENT_LOCAL, KEEP_LAST 1;
 * reader the same but KEEP_ALL and blind to its own participant. */
static inline void cy_announce(cy_node *n, const dds_entity_t *readers, int nr, const dds_entity_t *writers, int nw) {
  rmw_dds_common_msg_dds__ParticipantEntitiesInfo_ msg;
  rmw_dds_common_msg_dds__NodeEntitiesInfo_ node;
  rmw_dds_common_msg_dds__Gid_ rg[8], wg[8];
  int i;
  if (!n->graph) return;
  if (nr > 8 || nw > 8) fatal("cy_announce: too many endpoints");
  if (!n->graph_writer) {
    dds_entity_t t = cy_topic(n, &rmw_dds_common_msg_dds__ParticipantEntitiesInfo__desc, "ros_discovery_info");
    dds_qos_t *q = cy_qos(1, 0, 1);
    n->graph_writer = cy_writer(n, t, 1, 1, 1);
    dds_qset_ignorelocal(q, DDS_IGNORELOCAL_PARTICIPANT);
    n->graph_reader = dds_create_reader(n->subscriber, t, q, NULL);
    dds_delete_qos(q);
    if (n->graph_reader < 0) fatal("ros_discovery_info reader: %s", dds_strretcode(n->graph_reader));
  }
  memset(&msg, 0, sizeof(msg));
  memset(&node, 0, sizeof(node));
  cy_gid(n->participant, &msg.gid);
  snprintf(node.node_namespace, sizeof(node.node_namespace), "/");
  snprintf(node.node_name, sizeof(node.node_name), "%s", n->node);
  for (i = 0; i < nr; i++) cy_gid(readers[i], &rg[i]);
  for (i = 0; i < nw; i++) cy_gid(writers[i], &wg[i]);
  node.reader_gid_seq._buffer = rg;
  node.reader_gid_seq._length = node.reader_gid_seq._maximum = (uint32_t)nr;
  node.writer_gid_seq._buffer = wg;
  node.writer_gid_seq._length = node.writer_gid_seq._maximum = (uint32_t)nw;
  msg.node_entities_info_seq._buffer = &node;
  msg.node_entities_info_seq._length = msg.node_entities_info_seq._maximum = 1;
  CY_OK(dds_write(n->graph_writer, &msg));
}

#endif
