// fastdds.hpp - the Fast DDS 2.9 side of the peers: hand-written XCDR1
// type support for the ROS messages, a participant set up the way
// rmw_fastrtps_cpp (Humble) sets one up but forced onto UDPv4 127.0.0.1,
// ROS QoS profiles and the ros_discovery_info announcement.
#ifndef NROS_INTEROP_FASTDDS_HPP
#define NROS_INTEROP_FASTDDS_HPP

#include "peer.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>

#define VENDOR "fastdds"

namespace fdds = eprosima::fastdds::dds;
namespace frtps = eprosima::fastrtps::rtps;
using eprosima::fastrtps::Duration_t;

// ---------------------------------------------------------------------
// XCDR1 (plain CDR) encoding. Offsets and alignment count from the first
// byte after the 4-byte encapsulation header.

class CdrOut {
 public:
  CdrOut(uint8_t *buf, size_t cap) : b_(buf), cap_(cap) {}
  bool ok() const { return ok_; }
  size_t size() const { return n_; }
  void align(size_t a) {
    while (n_ % a) byte(0);
  }
  void byte(uint8_t v) {
    if (n_ >= cap_) { ok_ = false; return; }
    b_[n_++] = v;
  }
  void raw(const void *p, size_t len) {
    if (len > cap_ - n_ || n_ > cap_) { ok_ = false; return; }
    if (len) memcpy(b_ + n_, p, len);
    n_ += len;
  }
  void u32(uint32_t v) {
    align(4);
    for (int k = 0; k < 4; k++) byte((uint8_t)(v >> (8 * k)));
  }
  void i64(int64_t v) {
    align(8);
    for (int k = 0; k < 8; k++) byte((uint8_t)((uint64_t)v >> (8 * k)));
  }
  void str(const std::string &s) {
    u32((uint32_t)s.size() + 1);
    raw(s.data(), s.size());
    byte(0);
  }

 private:
  uint8_t *b_;
  size_t cap_, n_ = 0;
  bool ok_ = true;
};

class CdrIn {
 public:
  CdrIn(const uint8_t *buf, size_t len, bool big) : b_(buf), len_(len), big_(big) {}
  bool ok() const { return ok_; }
  void align(size_t a) { n_ = (n_ + a - 1) / a * a; }
  const uint8_t *take(size_t len) {
    if (!ok_ || n_ > len_ || len > len_ - n_) { ok_ = false; return nullptr; }
    const uint8_t *p = b_ + n_;
    n_ += len;
    return p;
  }
  uint64_t uint(size_t width) {
    align(width);
    const uint8_t *p = take(width);
    uint64_t v = 0;
    if (!p) return 0;
    for (size_t k = 0; k < width; k++) v |= (uint64_t)p[big_ ? width - 1 - k : k] << (8 * k);
    return v;
  }
  uint32_t u32() { return (uint32_t)uint(4); }
  int64_t i64() { return (int64_t)uint(8); }
  std::string str() {
    uint32_t n = u32();
    const uint8_t *p = n ? take(n) : nullptr;
    if (!p) { ok_ = false; return std::string(); }
    return std::string((const char *)p, n - 1);  // drop the NUL
  }
  // length prefix of a sequence whose elements take at least elem bytes
  uint32_t count(size_t elem) {
    uint32_t n = u32();
    if (ok_ && elem && (size_t)n > (len_ - n_) / elem) ok_ = false;
    return ok_ ? n : 0;
  }

 private:
  const uint8_t *b_;
  size_t len_, n_ = 0;
  bool big_, ok_ = true;
};

// ---------------------------------------------------------------------
// messages

struct ClockMsg {  // rosgraph_msgs/Clock
  int32_t sec = 0;
  uint32_t nanosec = 0;
};
struct StringMsg {  // std_msgs/String
  std::string data;
};
struct PayloadMsg {  // nros_bench/Payload
  int64_t stamp_ns = 0;
  std::vector<uint8_t> data;
};
struct Gid {
  uint8_t data[24] = {0};
};
struct NodeEntities {
  std::string ns, name;
  std::vector<Gid> readers, writers;
};
struct GraphMsg {  // rmw_dds_common/ParticipantEntitiesInfo (Humble)
  Gid gid;
  std::vector<NodeEntities> nodes;
};

// bound on the encoded body size (the encapsulation header excluded)
inline size_t body_bound(const ClockMsg &) { return 8; }
inline size_t body_bound(const StringMsg &m) { return 4 + m.data.size() + 1; }
inline size_t body_bound(const PayloadMsg &m) { return 8 + 4 + m.data.size(); }
inline size_t body_bound(const GraphMsg &m) {
  size_t z = 24 + 4;
  for (const auto &n : m.nodes) z += 3 + 4 + n.ns.size() + 1 + 3 + 4 + n.name.size() + 1 + 3 + 8 + 24 * (n.readers.size() + n.writers.size());
  return z;
}

inline void encode(CdrOut &o, const ClockMsg &m) {
  o.u32((uint32_t)m.sec);
  o.u32(m.nanosec);
}
inline void decode(CdrIn &in, ClockMsg &m) {
  m.sec = (int32_t)in.u32();
  m.nanosec = in.u32();
}
inline void encode(CdrOut &o, const StringMsg &m) { o.str(m.data); }
inline void decode(CdrIn &in, StringMsg &m) { m.data = in.str(); }
inline void encode(CdrOut &o, const PayloadMsg &m) {
  o.i64(m.stamp_ns);
  o.u32((uint32_t)m.data.size());
  o.raw(m.data.data(), m.data.size());
}
inline void decode(CdrIn &in, PayloadMsg &m) {
  m.stamp_ns = in.i64();
  uint32_t n = in.count(1);
  const uint8_t *p = in.take(n);
  if (p) m.data.assign(p, p + n);
  else m.data.clear();
}
inline void encode_gids(CdrOut &o, const std::vector<Gid> &v) {
  o.u32((uint32_t)v.size());
  for (const auto &g : v) o.raw(g.data, 24);
}
inline void decode_gids(CdrIn &in, std::vector<Gid> &v) {
  v.resize(in.count(24));
  for (auto &g : v) {
    const uint8_t *p = in.take(24);
    if (p) memcpy(g.data, p, 24);
  }
}
inline void encode(CdrOut &o, const GraphMsg &m) {
  o.raw(m.gid.data, 24);
  o.u32((uint32_t)m.nodes.size());
  for (const auto &n : m.nodes) {
    o.str(n.ns);
    o.str(n.name);
    encode_gids(o, n.readers);
    encode_gids(o, n.writers);
  }
}
inline void decode(CdrIn &in, GraphMsg &m) {
  const uint8_t *p = in.take(24);
  if (p) memcpy(m.gid.data, p, 24);
  m.nodes.resize(in.count(16));
  for (auto &n : m.nodes) {
    n.ns = in.str();
    n.name = in.str();
    decode_gids(in, n.readers);
    decode_gids(in, n.writers);
  }
}

// Keyless, final type; no TypeObject/TypeInformation is announced
// (rmw_fastrtps turns both off too).
template <class T>
class RosType : public fdds::TopicDataType {
 public:
  explicit RosType(const char *name, uint32_t typical) {
    setName(name);
    m_typeSize = typical + 4;
    m_isGetKeyDefined = false;
    auto_fill_type_object(false);
    auto_fill_type_information(false);
  }
  bool serialize(void *data, frtps::SerializedPayload_t *payload) override {
    const T &m = *static_cast<const T *>(data);
    if (payload->max_size < 4) return false;
    payload->data[0] = 0x00;  // CDR_LE
    payload->data[1] = 0x01;
    payload->data[2] = payload->data[3] = 0x00;
    CdrOut o(payload->data + 4, payload->max_size - 4);
    encode(o, m);
    if (!o.ok()) return false;
    payload->encapsulation = CDR_LE;
    payload->length = (uint32_t)(4 + o.size());
    return true;
  }
  bool deserialize(frtps::SerializedPayload_t *payload, void *data) override {
    if (payload->length < 4 || payload->data[0] != 0x00 || payload->data[1] > 0x01) return false;
    CdrIn in(payload->data + 4, payload->length - 4, payload->data[1] == 0x00);
    decode(in, *static_cast<T *>(data));
    return in.ok();
  }
  std::function<uint32_t()> getSerializedSizeProvider(void *data) override {
    const T *m = static_cast<const T *>(data);
    return [m]() { return (uint32_t)(4 + body_bound(*m) + 8); };
  }
  void *createData() override { return new T(); }
  void deleteData(void *data) override { delete static_cast<T *>(data); }
  bool getKey(void *, frtps::InstanceHandle_t *, bool) override { return false; }
};

#define CLOCK_TYPE "rosgraph_msgs::msg::dds_::Clock_"
#define STRING_TYPE "std_msgs::msg::dds_::String_"
#define PAYLOAD_TYPE "nros_bench::msg::dds_::Payload_"
#define GRAPH_TYPE "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"

// ---------------------------------------------------------------------
// participant and endpoints

inline Duration_t fd_duration(int64_t ns) {
  if (ns < 0) ns = 0;
  return Duration_t((int32_t)(ns / NS_PER_S), (uint32_t)(ns % NS_PER_S));
}

struct FdNode {
  fdds::DomainParticipant *participant = nullptr;
  fdds::Publisher *publisher = nullptr;
  fdds::Subscriber *subscriber = nullptr;
  fdds::DataWriter *graph_writer = nullptr;
  fdds::DataReader *graph_reader = nullptr;
  std::string node;
  bool graph = true;

  // Loads the XML profiles (FASTRTPS_DEFAULT_PROFILES_FILE), then forces
  // the transport whatever they say: builtin transports (and with them
  // shared memory) off, one UDPv4 transport whitelisted to 127.0.0.1.
  // USER_DATA is "enclave=/;" plus the NUL, 11 bytes, as rmw_fastrtps
  // sends it; the participant is named "/".
  explicit FdNode(const common_opts &c) : node(c.node), graph(!c.no_graph) {
    auto *factory = fdds::DomainParticipantFactory::get_instance();
    factory->load_profiles();
    fdds::DomainParticipantQos q = factory->get_default_participant_qos();
    q.transport().use_builtin_transports = false;
    q.transport().user_transports.clear();
    auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
    udp->interfaceWhiteList.clear();
    udp->interfaceWhiteList.push_back("127.0.0.1");
    q.transport().user_transports.push_back(udp);
    std::string enclave = std::string("enclave=") + sec_enclave_name(&c) + ";";
    q.user_data().resize(enclave.size() + 1);
    memcpy(q.user_data().data(), enclave.c_str(), enclave.size() + 1);
    char root[1024];
    if (sec_root(&c, root, sizeof root)) set_security(q, root);
    q.name("/");
    q.wire_protocol().builtin.readerHistoryMemoryPolicy = frtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    q.wire_protocol().builtin.writerHistoryMemoryPolicy = frtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    participant = factory->create_participant((fdds::DomainId_t)c.domain, q);
    if (!participant) fatal("create_participant(domain %ld) failed", c.domain);
    publisher = participant->create_publisher(fdds::PUBLISHER_QOS_DEFAULT);
    subscriber = participant->create_subscriber(fdds::SUBSCRIBER_QOS_DEFAULT);
    if (!publisher || !subscriber) fatal("cannot create publisher/subscriber");
  }
  // DDS Security from an enclave, the properties rmw_fastrtps (Humble
  // participant.cpp) sets: the builtin PKI-DH, Access-Permissions and
  // AES-GCM-GMAC plugins and the six files as "file://" URIs.
  static void set_security(fdds::DomainParticipantQos &q, const char *root) {
    auto file = [root](int i) { return std::string("file://") + root + "/" + SEC_FILES[i]; };
    auto &p = q.properties().properties();
    p.emplace_back("dds.sec.auth.plugin", "builtin.PKI-DH");
    p.emplace_back("dds.sec.auth.builtin.PKI-DH.identity_ca", file(SEC_IDENTITY_CA));
    p.emplace_back("dds.sec.auth.builtin.PKI-DH.identity_certificate", file(SEC_CERT));
    p.emplace_back("dds.sec.auth.builtin.PKI-DH.private_key", file(SEC_KEY));
    p.emplace_back("dds.sec.crypto.plugin", "builtin.AES-GCM-GMAC");
    p.emplace_back("dds.sec.access.plugin", "builtin.Access-Permissions");
    p.emplace_back("dds.sec.access.builtin.Access-Permissions.permissions_ca", file(SEC_PERMISSIONS_CA));
    p.emplace_back("dds.sec.access.builtin.Access-Permissions.governance", file(SEC_GOVERNANCE));
    p.emplace_back("dds.sec.access.builtin.Access-Permissions.permissions", file(SEC_PERMISSIONS));
  }
  ~FdNode() {
    participant->delete_contained_entities();
    fdds::DomainParticipantFactory::get_instance()->delete_participant(participant);
  }
  FdNode(const FdNode &) = delete;
  FdNode &operator=(const FdNode &) = delete;

  template <class T>
  fdds::Topic *topic(const char *type_name, uint32_t typical, const char *name) {
    if (participant->find_type(type_name).empty()) {
      fdds::TypeSupport ts(new RosType<T>(type_name, typical));
      if (ts.register_type(participant) != ReturnCode_t::RETCODE_OK) fatal("register_type(%s) failed", type_name);
    }
    fdds::Topic *t = participant->create_topic(name, type_name, fdds::TOPIC_QOS_DEFAULT);
    if (!t) fatal("create_topic(%s) failed", name);
    return t;
  }

  // rmw_fastrtps fill_entity_qos_from_profile: KEEP_LAST(depth) or KEEP_ALL
  // (depth 0), reliability, durability, AUTOMATIC liveliness; history
  // memory PREALLOCATED_WITH_REALLOC, data sharing off.
  template <class Q>
  static void ros_qos(Q &q, bool reliable, int depth, bool tl) {
    if (depth > 0) {
      q.history().kind = fdds::KEEP_LAST_HISTORY_QOS;
      q.history().depth = depth;
    } else {
      q.history().kind = fdds::KEEP_ALL_HISTORY_QOS;
    }
    q.reliability().kind = reliable ? fdds::RELIABLE_RELIABILITY_QOS : fdds::BEST_EFFORT_RELIABILITY_QOS;
    q.durability().kind = tl ? fdds::TRANSIENT_LOCAL_DURABILITY_QOS : fdds::VOLATILE_DURABILITY_QOS;
    q.liveliness().kind = fdds::AUTOMATIC_LIVELINESS_QOS;
    q.endpoint().history_memory_policy = frtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    q.data_sharing().off();
  }
  // Writers publish synchronously, as rmw_fastrtps does by default.
  fdds::DataWriter *writer(fdds::Topic *t, bool reliable, int depth, bool tl) {
    fdds::DataWriterQos q = publisher->get_default_datawriter_qos();
    ros_qos(q, reliable, depth, tl);
    q.publish_mode().kind = eprosima::fastrtps::SYNCHRONOUS_PUBLISH_MODE;
    fdds::DataWriter *w = publisher->create_datawriter(t, q);
    if (!w) fatal("create_datawriter(%s) failed", t->get_name().c_str());
    return w;
  }
  fdds::DataReader *reader(fdds::Topic *t, bool reliable, int depth, bool tl) {
    fdds::DataReaderQos q = subscriber->get_default_datareader_qos();
    ros_qos(q, reliable, depth, tl);
    fdds::DataReader *r = subscriber->create_datareader(t, q);
    if (!r) fatal("create_datareader(%s) failed", t->get_name().c_str());
    return r;
  }

  static Gid gid(const frtps::GUID_t &g) {
    Gid r;
    memcpy(r.data, g.guidPrefix.value, 12);
    memcpy(r.data + 12, g.entityId.value, 4);
    return r;
  }
  // One ParticipantEntitiesInfo on ros_discovery_info naming node "/<node>".
  void announce(const std::vector<fdds::DataReader *> &rds, const std::vector<fdds::DataWriter *> &wrs) {
    if (!graph) return;
    if (!graph_writer) {
      fdds::Topic *t = topic<GraphMsg>(GRAPH_TYPE, 128, "ros_discovery_info");
      graph_writer = writer(t, true, 1, true);
      graph_reader = reader(t, true, 0, true);
    }
    GraphMsg m;
    NodeEntities n;
    m.gid = gid(participant->guid());
    n.ns = "/";
    n.name = node;
    for (auto *r : rds) n.readers.push_back(gid(r->guid()));
    for (auto *w : wrs) n.writers.push_back(gid(w->guid()));
    m.nodes.push_back(n);
    graph_writer->write(&m);
  }
};

inline int fd_wait_readers(fdds::DataWriter *w, long want, double timeout_s) {
  int64_t deadline = mono_ns() + secs_to_ns(timeout_s);
  for (;;) {
    fdds::PublicationMatchedStatus st;
    if (w->get_publication_matched_status(st) == ReturnCode_t::RETCODE_OK && st.current_count >= want) return 0;
    if (mono_ns() >= deadline) return -1;
    nap(5000000);
  }
}
inline int fd_wait_writers(fdds::DataReader *r, long want, double timeout_s) {
  int64_t deadline = mono_ns() + secs_to_ns(timeout_s);
  for (;;) {
    fdds::SubscriptionMatchedStatus st;
    if (r->get_subscription_matched_status(st) == ReturnCode_t::RETCODE_OK && st.current_count >= want) return 0;
    if (mono_ns() >= deadline) return -1;
    nap(5000000);
  }
}

#endif
