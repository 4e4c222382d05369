// msgbytes_fastdds - byte-exactness peer for generated ROS messages
// (Fast DDS 2.9). The same program as msgbytes_cyclone (see there for the
// modes and the output; --big-endian makes it write CDR_BE), but the messages are C++ structs serialized by
// Fast CDR the way rosidl_typesupport_fastrtps_cpp and fastddsgen code do
// it: a Cdr in DDS_CDR mode, serialize_encapsulation(), then every member
// in definition order with Cdr's own operators (fixed arrays through
// serializeArray, sequences through serializeSequence, strings with their
// NUL). Nothing here encodes a byte by hand.
#include "fastdds.hpp"
#include "msgcheck.h"

#include <array>

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>
#include <fastcdr/exceptions/Exception.h>

namespace fcdr = eprosima::fastcdr;

// ---------------------------------------------------------------------
// the messages (rosidl's C++ layout: std::string, std::array, std::vector)

struct Time {
  int32_t sec = 0;
  uint32_t nanosec = 0;
  void serialize(fcdr::Cdr &c) const { c << sec << nanosec; }
  void deserialize(fcdr::Cdr &c) { c >> sec >> nanosec; }
};
struct Header {
  Time stamp;
  std::string frame_id;
  void serialize(fcdr::Cdr &c) const { c << stamp << frame_id; }
  void deserialize(fcdr::Cdr &c) { c >> stamp >> frame_id; }
};
struct Str {  // std_msgs/String
  std::string data;
  void serialize(fcdr::Cdr &c) const { c << data; }
  void deserialize(fcdr::Cdr &c) { c >> data; }
};
struct Point {
  double x = 0, y = 0, z = 0;
  void serialize(fcdr::Cdr &c) const { c << x << y << z; }
  void deserialize(fcdr::Cdr &c) { c >> x >> y >> z; }
};
using Vector3 = Point;  // same members, same layout
struct Quaternion {
  double x = 0, y = 0, z = 0, w = 1;
  void serialize(fcdr::Cdr &c) const { c << x << y << z << w; }
  void deserialize(fcdr::Cdr &c) { c >> x >> y >> z >> w; }
};
struct Pose {
  Point position;
  Quaternion orientation;
  void serialize(fcdr::Cdr &c) const { c << position << orientation; }
  void deserialize(fcdr::Cdr &c) { c >> position >> orientation; }
};
struct PoseStamped {
  Header header;
  Pose pose;
  void serialize(fcdr::Cdr &c) const { c << header << pose; }
  void deserialize(fcdr::Cdr &c) { c >> header >> pose; }
};
struct Imu {
  Header header;
  Quaternion orientation;
  std::array<double, 9> orientation_covariance{};
  Vector3 angular_velocity;
  std::array<double, 9> angular_velocity_covariance{};
  Vector3 linear_acceleration;
  std::array<double, 9> linear_acceleration_covariance{};
  void serialize(fcdr::Cdr &c) const {
    c << header << orientation << orientation_covariance << angular_velocity << angular_velocity_covariance
      << linear_acceleration << linear_acceleration_covariance;
  }
  void deserialize(fcdr::Cdr &c) {
    c >> header >> orientation >> orientation_covariance >> angular_velocity >> angular_velocity_covariance >>
        linear_acceleration >> linear_acceleration_covariance;
  }
};
struct LaserScan {
  Header header;
  float angle_min = 0, angle_max = 0, angle_increment = 0, time_increment = 0, scan_time = 0, range_min = 0,
        range_max = 0;
  std::vector<float> ranges, intensities;
  void serialize(fcdr::Cdr &c) const {
    c << header << angle_min << angle_max << angle_increment << time_increment << scan_time << range_min << range_max
      << ranges << intensities;
  }
  void deserialize(fcdr::Cdr &c) {
    c >> header >> angle_min >> angle_max >> angle_increment >> time_increment >> scan_time >> range_min >>
        range_max >> ranges >> intensities;
  }
};
struct ParameterValue {
  uint8_t type = 0;
  bool bool_value = false;
  int64_t integer_value = 0;
  double double_value = 0;
  std::string string_value;
  std::vector<uint8_t> byte_array_value;
  std::vector<bool> bool_array_value;
  std::vector<int64_t> integer_array_value;
  std::vector<double> double_array_value;
  std::vector<std::string> string_array_value;
  void serialize(fcdr::Cdr &c) const {
    c << type << bool_value << integer_value << double_value << string_value << byte_array_value << bool_array_value
      << integer_array_value << double_array_value << string_array_value;
  }
  void deserialize(fcdr::Cdr &c) {
    c >> type >> bool_value >> integer_value >> double_value >> string_value >> byte_array_value >> bool_array_value >>
        integer_array_value >> double_array_value >> string_array_value;
  }
};
struct Parameter {
  std::string name;
  ParameterValue value;
  void serialize(fcdr::Cdr &c) const { c << name << value; }
  void deserialize(fcdr::Cdr &c) { c >> name >> value; }
};
struct SetParametersRequest {
  std::vector<Parameter> parameters;
  void serialize(fcdr::Cdr &c) const { c << parameters; }
  void deserialize(fcdr::Cdr &c) { c >> parameters; }
};

// ---------------------------------------------------------------------
// fill with the values of msgcheck.h

static Header header(int32_t sec, uint32_t nanosec, const char *frame) {
  Header h;
  h.stamp.sec = sec;
  h.stamp.nanosec = nanosec;
  h.frame_id = frame;
  return h;
}
static void fill(Str &m) { m.data = MC_STRING; }
static void fill(PoseStamped &m) {
  m.header = header(MC_POSE_SEC, MC_POSE_NANOSEC, MC_POSE_FRAME);
  m.pose.position = {mc_pose_position[0], mc_pose_position[1], mc_pose_position[2]};
  m.pose.orientation = {mc_pose_orientation[0], mc_pose_orientation[1], mc_pose_orientation[2], mc_pose_orientation[3]};
}
static void fill(Imu &m) {
  m.header = header(MC_IMU_SEC, MC_IMU_NANOSEC, MC_IMU_FRAME);
  m.orientation = {mc_imu_orientation[0], mc_imu_orientation[1], mc_imu_orientation[2], mc_imu_orientation[3]};
  m.angular_velocity = {mc_imu_angular_velocity[0], mc_imu_angular_velocity[1], mc_imu_angular_velocity[2]};
  m.linear_acceleration = {mc_imu_linear_acceleration[0], mc_imu_linear_acceleration[1], mc_imu_linear_acceleration[2]};
  for (int i = 0; i < 9; i++) {
    m.orientation_covariance[i] = mc_imu_orientation_cov(i);
    m.angular_velocity_covariance[i] = mc_imu_angular_velocity_cov(i);
    m.linear_acceleration_covariance[i] = mc_imu_linear_acceleration_cov(i);
  }
}
static void fill(LaserScan &m) {
  m.header = header(MC_SCAN_SEC, MC_SCAN_NANOSEC, MC_SCAN_FRAME);
  m.angle_min = mc_scan_params[0];
  m.angle_max = mc_scan_params[1];
  m.angle_increment = mc_scan_params[2];
  m.time_increment = mc_scan_params[3];
  m.scan_time = mc_scan_params[4];
  m.range_min = mc_scan_params[5];
  m.range_max = mc_scan_params[6];
  m.ranges.clear();
  for (int i = 0; i < MC_SCAN_RANGES; i++) m.ranges.push_back(mc_scan_range(i));
  m.intensities.assign(mc_scan_intensities, mc_scan_intensities + MC_SCAN_INTENSITIES);
}
static void fill(SetParametersRequest &m) {
  m.parameters.assign(MC_NPARAMS, Parameter());
  for (int i = 0; i < MC_NPARAMS; i++) m.parameters[i].name = mc_param_names[i];
  m.parameters[0].value.type = 1;
  m.parameters[0].value.bool_value = true;
  m.parameters[1].value.type = 3;
  m.parameters[1].value.double_value = MC_PARAM_DOUBLE;
  m.parameters[2].value.type = 2;
  m.parameters[2].value.integer_value = MC_PARAM_INT;
  m.parameters[3].value.type = 4;
  m.parameters[3].value.string_value = MC_PARAM_STRING;
  m.parameters[4].value.type = 5;
  m.parameters[4].value.byte_array_value.assign(mc_param_bytes, mc_param_bytes + 5);
  m.parameters[5].value.type = 6;
  for (int b : mc_param_bools) m.parameters[5].value.bool_array_value.push_back(b != 0);
  m.parameters[6].value.type = 7;
  m.parameters[6].value.integer_array_value.assign(mc_param_ints, mc_param_ints + 3);
  m.parameters[7].value.type = 8;
  m.parameters[7].value.double_array_value.assign(mc_param_doubles, mc_param_doubles + 2);
  m.parameters[8].value.type = 9;
  m.parameters[8].value.string_array_value.assign(mc_param_strings, mc_param_strings + 3);
}

// ---------------------------------------------------------------------
// print decoded values (msgcheck.h text form)

static void print_header(const Header &h) {
  mc_i("header.stamp.sec", h.stamp.sec);
  mc_u("header.stamp.nanosec", h.stamp.nanosec);
  mc_s("header.frame_id", h.frame_id.c_str());
}
static void print_vec3(const char *p, const Point &v) {
  mc_d(mc_pathf("%s.x", p), v.x);
  mc_d(mc_pathf("%s.y", p), v.y);
  mc_d(mc_pathf("%s.z", p), v.z);
}
static void print_quat(const char *p, const Quaternion &q) {
  mc_d(mc_pathf("%s.x", p), q.x);
  mc_d(mc_pathf("%s.y", p), q.y);
  mc_d(mc_pathf("%s.z", p), q.z);
  mc_d(mc_pathf("%s.w", p), q.w);
}
static void print_cov(const char *p, const std::array<double, 9> &v) {
  for (int i = 0; i < 9; i++) mc_d(mc_pathf("%s[%d]", p, i), v[i]);
}
static void print(const Str &m) { mc_s("data", m.data.c_str()); }
static void print(const PoseStamped &m) {
  print_header(m.header);
  print_vec3("pose.position", m.pose.position);
  print_quat("pose.orientation", m.pose.orientation);
}
static void print(const Imu &m) {
  print_header(m.header);
  print_quat("orientation", m.orientation);
  print_cov("orientation_covariance", m.orientation_covariance);
  print_vec3("angular_velocity", m.angular_velocity);
  print_cov("angular_velocity_covariance", m.angular_velocity_covariance);
  print_vec3("linear_acceleration", m.linear_acceleration);
  print_cov("linear_acceleration_covariance", m.linear_acceleration_covariance);
}
static void print(const LaserScan &m) {
  print_header(m.header);
  mc_f("angle_min", m.angle_min);
  mc_f("angle_max", m.angle_max);
  mc_f("angle_increment", m.angle_increment);
  mc_f("time_increment", m.time_increment);
  mc_f("scan_time", m.scan_time);
  mc_f("range_min", m.range_min);
  mc_f("range_max", m.range_max);
  for (size_t i = 0; i < m.ranges.size(); i++) mc_f(mc_pathf("ranges[%zu]", i), m.ranges[i]);
  for (size_t i = 0; i < m.intensities.size(); i++) mc_f(mc_pathf("intensities[%zu]", i), m.intensities[i]);
}
static void print(const SetParametersRequest &m) {
  for (size_t i = 0; i < m.parameters.size(); i++) {
    const Parameter &p = m.parameters[i];
    const ParameterValue &v = p.value;
    char pre[64];
    snprintf(pre, sizeof pre, "parameters[%zu]", i);
    mc_s(mc_pathf("%s.name", pre), p.name.c_str());
    mc_u(mc_pathf("%s.value.type", pre), v.type);
    mc_b(mc_pathf("%s.value.bool_value", pre), v.bool_value);
    mc_i(mc_pathf("%s.value.integer_value", pre), v.integer_value);
    mc_d(mc_pathf("%s.value.double_value", pre), v.double_value);
    mc_s(mc_pathf("%s.value.string_value", pre), v.string_value.c_str());
    for (size_t j = 0; j < v.byte_array_value.size(); j++)
      mc_u(mc_pathf("%s.value.byte_array_value[%zu]", pre, j), v.byte_array_value[j]);
    for (size_t j = 0; j < v.bool_array_value.size(); j++)
      mc_b(mc_pathf("%s.value.bool_array_value[%zu]", pre, j), v.bool_array_value[j]);
    for (size_t j = 0; j < v.integer_array_value.size(); j++)
      mc_i(mc_pathf("%s.value.integer_array_value[%zu]", pre, j), v.integer_array_value[j]);
    for (size_t j = 0; j < v.double_array_value.size(); j++)
      mc_d(mc_pathf("%s.value.double_array_value[%zu]", pre, j), v.double_array_value[j]);
    for (size_t j = 0; j < v.string_array_value.size(); j++)
      mc_s(mc_pathf("%s.value.string_array_value[%zu]", pre, j), v.string_array_value[j].c_str());
  }
}

// ---------------------------------------------------------------------
// type support with Fast CDR

// The byte order this program writes in: little endian (as every ROS host
// does) unless --big-endian.
static fcdr::Cdr::Endianness g_endian = fcdr::Cdr::LITTLE_ENDIANNESS;

// Serializes m as rmw_fastrtps_cpp's TypeSupport::serialize does into
// buf[0..cap); returns the length, or 0 when it does not fit.
template <class T>
static size_t cdr_serialize(const T &m, char *buf, size_t cap) {
  fcdr::FastBuffer fb(buf, cap);
  fcdr::Cdr ser(fb, g_endian, fcdr::Cdr::DDS_CDR);
  try {
    ser.serialize_encapsulation();
    m.serialize(ser);
  } catch (fcdr::exception::Exception &) {
    return 0;
  }
  return ser.getSerializedDataLength();
}

// The bytes of the last sample deserialize saw (the sub mode prints them).
static std::vector<uint8_t> g_last_raw;

template <class T>
class CdrType : public fdds::TopicDataType {
 public:
  explicit CdrType(const char *name) {
    setName(name);
    m_typeSize = 4096;
    m_isGetKeyDefined = false;
    auto_fill_type_object(false);
    auto_fill_type_information(false);
  }
  bool serialize(void *data, frtps::SerializedPayload_t *payload) override {
    fcdr::FastBuffer fb((char *)payload->data, payload->max_size);
    fcdr::Cdr ser(fb, g_endian, fcdr::Cdr::DDS_CDR);
    try {
      ser.serialize_encapsulation();
      static_cast<const T *>(data)->serialize(ser);
    } catch (fcdr::exception::Exception &) {
      return false;
    }
    payload->encapsulation = ser.endianness() == fcdr::Cdr::BIG_ENDIANNESS ? CDR_BE : CDR_LE;
    payload->length = (uint32_t)ser.getSerializedDataLength();
    return true;
  }
  bool deserialize(frtps::SerializedPayload_t *payload, void *data) override {
    g_last_raw.assign(payload->data, payload->data + payload->length);
    fcdr::FastBuffer fb((char *)payload->data, payload->length);
    fcdr::Cdr deser(fb, fcdr::Cdr::DEFAULT_ENDIAN, fcdr::Cdr::DDS_CDR);
    try {
      deser.read_encapsulation();
      payload->encapsulation = deser.endianness() == fcdr::Cdr::BIG_ENDIANNESS ? CDR_BE : CDR_LE;
      static_cast<T *>(data)->deserialize(deser);
    } catch (fcdr::exception::Exception &) {
      return false;
    }
    return true;
  }
  // The exact size: serialize once into a scratch buffer.
  std::function<uint32_t()> getSerializedSizeProvider(void *data) override {
    const T *m = static_cast<const T *>(data);
    return [m]() {
      std::vector<char> scratch(1 << 20);
      return (uint32_t)cdr_serialize(*m, scratch.data(), scratch.size());
    };
  }
  void *createData() override { return new T(); }
  void deleteData(void *data) override { delete static_cast<T *>(data); }
  bool getKey(void *, frtps::InstanceHandle_t *, bool) override { return false; }
};

template <class T>
static void print_ser(const char *label, const T &m) {
  std::vector<char> buf(1 << 20);
  size_t n = cdr_serialize(m, buf.data(), buf.size());
  if (n == 0) fatal("Fast CDR could not serialize the message");
  mc_hex(label, (const uint8_t *)buf.data(), n);
}

template <class T>
static int run(bool pub, FdNode &n, const char *type_name, const char *dds_name, long wait_subs, double timeout) {
  fdds::TypeSupport ts(new CdrType<T>(type_name));
  if (ts.register_type(n.participant) != ReturnCode_t::RETCODE_OK) fatal("register_type(%s) failed", type_name);
  fdds::Topic *t = n.participant->create_topic(dds_name, type_name, fdds::TOPIC_QOS_DEFAULT);
  if (!t) fatal("create_topic(%s) failed", dds_name);
  int64_t deadline = mono_ns() + secs_to_ns(timeout);
  if (pub) {
    fdds::DataWriter *w = n.writer(t, true, 1, false);
    n.announce({}, {w});
    if (fd_wait_readers(w, wait_subs, timeout) != 0) {
      fprintf(stderr, "%s: no reader matched\n", g_prog);
      return EXIT_TIMEOUT;
    }
    fprintf(stderr, "%s: matched %ld subscription(s)\n", g_prog, wait_subs);
    T m;
    fill(m);
    if (!w->write(&m)) fatal("write failed");
    print_ser("ser", m);
    gate_wait();
    return EXIT_OK;
  }
  fdds::DataReader *r = n.reader(t, true, 1, false);
  n.announce({r}, {});
  match_seen seen = {0, 0};
  T m;
  fdds::SampleInfo info;
  for (;;) {
    fdds::SubscriptionMatchedStatus ms;
    int64_t left = deadline - mono_ns();
    if (r->get_subscription_matched_status(ms) == ReturnCode_t::RETCODE_OK)
      report_matched(&seen, ms.current_count, ms.total_count, "publisher(s)");
    if (r->take_next_sample(&m, &info) == ReturnCode_t::RETCODE_OK && info.valid_data) break;
    if (left <= 0) {
      fprintf(stderr, "%s: no sample before the timeout\n", g_prog);
      return EXIT_TIMEOUT;
    }
    r->wait_for_unread_message(fd_duration(left < 50000000 ? left : 50000000));
  }
  mc_hex("raw", g_last_raw.data(), g_last_raw.size());
  print(m);
  print_ser("ser", m);
  printf("end\n");
  return EXIT_OK;
}

int main(int argc, char **argv) {
  common_opts c;
  const char *type = "", *topic = NULL;
  double timeout = 30;
  long wait_subs = 1;
  int big_endian = 0;
  char ros_name[128], dds_name[256];
  g_prog = "msgbytes_fastdds";
  common_defaults(&c, g_prog);
  if (argc < 2 || (strcmp(argv[1], "pub") != 0 && strcmp(argv[1], "sub") != 0)) {
    fprintf(stderr, "usage: %s pub|sub --type T [flags]  (T: %s)\n", g_prog, MC_TYPES);
    return EXIT_USAGE;
  }
  {
    const flag_t fl[] = {
      {"type", FLAG_STRING, &type, "message: " MC_TYPES},
      {"topic", FLAG_STRING, &topic, "ROS topic (/msgbytes_<type>)"},
      {"timeout", FLAG_DOUBLE, &timeout, "seconds to run (30)"},
      {"wait-subs", FLAG_INT, &wait_subs, "pub: remote readers to wait for before writing (1)"},
      {"big-endian", FLAG_BOOL, &big_endian, "write CDR_BE instead of CDR_LE"},
      COMMON_FLAGS(c),
    };
    flags_parse(argc, argv, 2, "pub|sub --type T [flags]", fl, sizeof fl / sizeof fl[0]);
  }
  common_check(&c);
  if (big_endian) g_endian = fcdr::Cdr::BIG_ENDIANNESS;
  if (!topic) {
    snprintf(ros_name, sizeof ros_name, "/msgbytes_%s", type);
    topic = ros_name;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  dds_topic_name(topic, dds_name, sizeof dds_name);
  bool pub = strcmp(argv[1], "pub") == 0;
  FdNode n(c);
  std::string ty = type;
  if (ty == "string") return run<Str>(pub, n, "std_msgs::msg::dds_::String_", dds_name, wait_subs, timeout);
  if (ty == "pose") return run<PoseStamped>(pub, n, "geometry_msgs::msg::dds_::PoseStamped_", dds_name, wait_subs, timeout);
  if (ty == "imu") return run<Imu>(pub, n, "sensor_msgs::msg::dds_::Imu_", dds_name, wait_subs, timeout);
  if (ty == "scan") return run<LaserScan>(pub, n, "sensor_msgs::msg::dds_::LaserScan_", dds_name, wait_subs, timeout);
  if (ty == "setparams")
    return run<SetParametersRequest>(pub, n, "rcl_interfaces::srv::dds_::SetParameters_Request_", dds_name, wait_subs, timeout);
  fatal("--type must be one of %s", MC_TYPES);
}
