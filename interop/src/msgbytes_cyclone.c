/* msgbytes_cyclone - byte-exactness peer for generated ROS messages
 * (Cyclone DDS; types from msgtypes.idl through idlc).
 *
 *   msgbytes_cyclone pub --type T   fills T with the values of msgcheck.h,
 *       waits for --wait-subs remote readers, writes it once, prints
 *       "ser=<hex>": the serialized sample exactly as the writer made it
 *       (taken back through a local reader with dds_takecdr), then stays
 *       until a line arrives on stdin or --timeout passes.
 *   msgbytes_cyclone sub --type T   takes the first sample of T, prints
 *       "raw=<hex>" (the sample as received and kept by Cyclone, which
 *       normalizes a CDR_BE sample to the host's byte order), its decoded values (msgcheck.h
 *       text form), "ser=<hex>" (the decoded values serialized again by
 *       Cyclone: ddsi_serdata_from_sample, as dds_write does) and "end".
 *
 * Topic rt/msgbytes_<T> unless --topic; RELIABLE, VOLATILE, KEEP_LAST 1.
 * Exit 0 done, 2 usage, 3 timeout.
 */
#include "cyclone.h"
#include "msgcheck.h"
#include "msgtypes.h"
#include "dds/ddsi/ddsi_serdata.h"

/* ---- fill --------------------------------------------------------------- */

static void fill_header(std_msgs_msg_dds__Header_ *h, int32_t sec, uint32_t nanosec, const char *frame) {
  h->stamp.sec = sec;
  h->stamp.nanosec = nanosec;
  h->frame_id = (char *)frame;
}

static std_msgs_msg_dds__String_ v_string;
static geometry_msgs_msg_dds__PoseStamped_ v_pose;
static sensor_msgs_msg_dds__Imu_ v_imu;
static sensor_msgs_msg_dds__LaserScan_ v_scan;
static rcl_interfaces_srv_dds__SetParameters_Request_ v_params;
static float v_ranges[MC_SCAN_RANGES], v_intensities[MC_SCAN_INTENSITIES];
static rcl_interfaces_msg_dds__Parameter_ v_param[MC_NPARAMS];
static bool v_bools[3];

static void *fill_string(void) {
  v_string.data = (char *)MC_STRING;
  return &v_string;
}
static void *fill_pose(void) {
  fill_header(&v_pose.header, MC_POSE_SEC, MC_POSE_NANOSEC, MC_POSE_FRAME);
  v_pose.pose.position.x = mc_pose_position[0];
  v_pose.pose.position.y = mc_pose_position[1];
  v_pose.pose.position.z = mc_pose_position[2];
  v_pose.pose.orientation.x = mc_pose_orientation[0];
  v_pose.pose.orientation.y = mc_pose_orientation[1];
  v_pose.pose.orientation.z = mc_pose_orientation[2];
  v_pose.pose.orientation.w = mc_pose_orientation[3];
  return &v_pose;
}
static void *fill_imu(void) {
  int i;
  fill_header(&v_imu.header, MC_IMU_SEC, MC_IMU_NANOSEC, MC_IMU_FRAME);
  v_imu.orientation.x = mc_imu_orientation[0];
  v_imu.orientation.y = mc_imu_orientation[1];
  v_imu.orientation.z = mc_imu_orientation[2];
  v_imu.orientation.w = mc_imu_orientation[3];
  v_imu.angular_velocity.x = mc_imu_angular_velocity[0];
  v_imu.angular_velocity.y = mc_imu_angular_velocity[1];
  v_imu.angular_velocity.z = mc_imu_angular_velocity[2];
  v_imu.linear_acceleration.x = mc_imu_linear_acceleration[0];
  v_imu.linear_acceleration.y = mc_imu_linear_acceleration[1];
  v_imu.linear_acceleration.z = mc_imu_linear_acceleration[2];
  for (i = 0; i < 9; i++) {
    v_imu.orientation_covariance[i] = mc_imu_orientation_cov(i);
    v_imu.angular_velocity_covariance[i] = mc_imu_angular_velocity_cov(i);
    v_imu.linear_acceleration_covariance[i] = mc_imu_linear_acceleration_cov(i);
  }
  return &v_imu;
}
static void *fill_scan(void) {
  int i;
  fill_header(&v_scan.header, MC_SCAN_SEC, MC_SCAN_NANOSEC, MC_SCAN_FRAME);
  v_scan.angle_min = mc_scan_params[0];
  v_scan.angle_max = mc_scan_params[1];
  v_scan.angle_increment = mc_scan_params[2];
  v_scan.time_increment = mc_scan_params[3];
  v_scan.scan_time = mc_scan_params[4];
  v_scan.range_min = mc_scan_params[5];
  v_scan.range_max = mc_scan_params[6];
  for (i = 0; i < MC_SCAN_RANGES; i++) v_ranges[i] = mc_scan_range(i);
  for (i = 0; i < MC_SCAN_INTENSITIES; i++) v_intensities[i] = mc_scan_intensities[i];
  v_scan.ranges._buffer = v_ranges;
  v_scan.ranges._length = v_scan.ranges._maximum = MC_SCAN_RANGES;
  v_scan.intensities._buffer = v_intensities;
  v_scan.intensities._length = v_scan.intensities._maximum = MC_SCAN_INTENSITIES;
  return &v_scan;
}
static void *fill_params(void) {
  int i;
  memset(v_param, 0, sizeof v_param);
  for (i = 0; i < MC_NPARAMS; i++) {
    v_param[i].name = (char *)mc_param_names[i];
    v_param[i].value.string_value = (char *)"";
  }
  v_param[0].value.type = 1;
  v_param[0].value.bool_value = true;
  v_param[1].value.type = 3;
  v_param[1].value.double_value = MC_PARAM_DOUBLE;
  v_param[2].value.type = 2;
  v_param[2].value.integer_value = MC_PARAM_INT;
  v_param[3].value.type = 4;
  v_param[3].value.string_value = (char *)MC_PARAM_STRING;
  v_param[4].value.type = 5;
  v_param[4].value.byte_array_value._buffer = (uint8_t *)mc_param_bytes;
  v_param[4].value.byte_array_value._length = v_param[4].value.byte_array_value._maximum = 5;
  v_param[5].value.type = 6;
  for (i = 0; i < 3; i++) v_bools[i] = mc_param_bools[i] != 0;
  v_param[5].value.bool_array_value._buffer = v_bools;
  v_param[5].value.bool_array_value._length = v_param[5].value.bool_array_value._maximum = 3;
  v_param[6].value.type = 7;
  v_param[6].value.integer_array_value._buffer = (int64_t *)mc_param_ints;
  v_param[6].value.integer_array_value._length = v_param[6].value.integer_array_value._maximum = 3;
  v_param[7].value.type = 8;
  v_param[7].value.double_array_value._buffer = (double *)mc_param_doubles;
  v_param[7].value.double_array_value._length = v_param[7].value.double_array_value._maximum = 2;
  v_param[8].value.type = 9;
  v_param[8].value.string_array_value._buffer = (char **)mc_param_strings;
  v_param[8].value.string_array_value._length = v_param[8].value.string_array_value._maximum = 3;
  v_params.parameters._buffer = v_param;
  v_params.parameters._length = v_params.parameters._maximum = MC_NPARAMS;
  return &v_params;
}

/* ---- print -------------------------------------------------------------- */

static void print_header(const std_msgs_msg_dds__Header_ *h) {
  mc_i("header.stamp.sec", h->stamp.sec);
  mc_u("header.stamp.nanosec", h->stamp.nanosec);
  mc_s("header.frame_id", h->frame_id);
}
static void print_quat(const char *p, const geometry_msgs_msg_dds__Quaternion_ *q) {
  mc_d(mc_pathf("%s.x", p), q->x);
  mc_d(mc_pathf("%s.y", p), q->y);
  mc_d(mc_pathf("%s.z", p), q->z);
  mc_d(mc_pathf("%s.w", p), q->w);
}
static void print_vec3(const char *p, double x, double y, double z) {
  mc_d(mc_pathf("%s.x", p), x);
  mc_d(mc_pathf("%s.y", p), y);
  mc_d(mc_pathf("%s.z", p), z);
}
static void print_cov(const char *p, const double *v) {
  int i;
  for (i = 0; i < 9; i++) mc_d(mc_pathf("%s[%d]", p, i), v[i]);
}

static void print_string(const void *s) { mc_s("data", ((const std_msgs_msg_dds__String_ *)s)->data); }
static void print_pose(const void *s) {
  const geometry_msgs_msg_dds__PoseStamped_ *m = s;
  print_header(&m->header);
  print_vec3("pose.position", m->pose.position.x, m->pose.position.y, m->pose.position.z);
  print_quat("pose.orientation", &m->pose.orientation);
}
static void print_imu(const void *s) {
  const sensor_msgs_msg_dds__Imu_ *m = s;
  print_header(&m->header);
  print_quat("orientation", &m->orientation);
  print_cov("orientation_covariance", m->orientation_covariance);
  print_vec3("angular_velocity", m->angular_velocity.x, m->angular_velocity.y, m->angular_velocity.z);
  print_cov("angular_velocity_covariance", m->angular_velocity_covariance);
  print_vec3("linear_acceleration", m->linear_acceleration.x, m->linear_acceleration.y, m->linear_acceleration.z);
  print_cov("linear_acceleration_covariance", m->linear_acceleration_covariance);
}
static void print_scan(const void *s) {
  const sensor_msgs_msg_dds__LaserScan_ *m = s;
  uint32_t i;
  print_header(&m->header);
  mc_f("angle_min", m->angle_min);
  mc_f("angle_max", m->angle_max);
  mc_f("angle_increment", m->angle_increment);
  mc_f("time_increment", m->time_increment);
  mc_f("scan_time", m->scan_time);
  mc_f("range_min", m->range_min);
  mc_f("range_max", m->range_max);
  for (i = 0; i < m->ranges._length; i++) mc_f(mc_pathf("ranges[%u]", i), m->ranges._buffer[i]);
  for (i = 0; i < m->intensities._length; i++) mc_f(mc_pathf("intensities[%u]", i), m->intensities._buffer[i]);
}
static void print_params(const void *s) {
  const rcl_interfaces_srv_dds__SetParameters_Request_ *m = s;
  uint32_t i, j;
  for (i = 0; i < m->parameters._length; i++) {
    const rcl_interfaces_msg_dds__Parameter_ *p = &m->parameters._buffer[i];
    const rcl_interfaces_msg_dds__ParameterValue_ *v = &p->value;
    char pre[64];
    snprintf(pre, sizeof pre, "parameters[%u]", i);
    mc_s(mc_pathf("%s.name", pre), p->name);
    mc_u(mc_pathf("%s.value.type", pre), v->type);
    mc_b(mc_pathf("%s.value.bool_value", pre), v->bool_value);
    mc_i(mc_pathf("%s.value.integer_value", pre), v->integer_value);
    mc_d(mc_pathf("%s.value.double_value", pre), v->double_value);
    mc_s(mc_pathf("%s.value.string_value", pre), v->string_value);
    for (j = 0; j < v->byte_array_value._length; j++)
      mc_u(mc_pathf("%s.value.byte_array_value[%u]", pre, j), v->byte_array_value._buffer[j]);
    for (j = 0; j < v->bool_array_value._length; j++)
      mc_b(mc_pathf("%s.value.bool_array_value[%u]", pre, j), v->bool_array_value._buffer[j]);
    for (j = 0; j < v->integer_array_value._length; j++)
      mc_i(mc_pathf("%s.value.integer_array_value[%u]", pre, j), v->integer_array_value._buffer[j]);
    for (j = 0; j < v->double_array_value._length; j++)
      mc_d(mc_pathf("%s.value.double_array_value[%u]", pre, j), v->double_array_value._buffer[j]);
    for (j = 0; j < v->string_array_value._length; j++)
      mc_s(mc_pathf("%s.value.string_array_value[%u]", pre, j), v->string_array_value._buffer[j]);
  }
}

/* ---- types --------------------------------------------------------------- */

typedef struct {
  const char *name;
  const dds_topic_descriptor_t *desc;
  void *(*fill)(void);
  void (*print)(const void *);
} msgtype;

static const msgtype types[] = {
  {"string", &std_msgs_msg_dds__String__desc, fill_string, print_string},
  {"pose", &geometry_msgs_msg_dds__PoseStamped__desc, fill_pose, print_pose},
  {"imu", &sensor_msgs_msg_dds__Imu__desc, fill_imu, print_imu},
  {"scan", &sensor_msgs_msg_dds__LaserScan__desc, fill_scan, print_scan},
  {"setparams", &rcl_interfaces_srv_dds__SetParameters_Request__desc, fill_params, print_params},
};

/* Prints label=<hex> of the serialized form of serdata sd. */
static void print_serdata(const char *label, const struct ddsi_serdata *sd) {
  uint32_t n = ddsi_serdata_size(sd);
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) fatal("out of memory");
  ddsi_serdata_to_ser(sd, 0, n, buf);
  mc_hex(label, buf, n);
  free(buf);
}

/* Takes one serialized sample from r (waiting on ws until deadline);
 * NULL on timeout. Reports reader matches on stderr meanwhile. */
static struct ddsi_serdata *take_one(dds_entity_t r, dds_entity_t ws, int64_t deadline, match_seen *seen) {
  for (;;) {
    struct ddsi_serdata *sd = NULL;
    dds_sample_info_t info;
    dds_subscription_matched_status_t ms;
    int64_t left = deadline - mono_ns();
    if (dds_get_subscription_matched_status(r, &ms) == 0) report_matched(seen, (long)ms.current_count, (long)ms.total_count, "publisher(s)");
    if (dds_takecdr(r, &sd, 1, &info, DDS_ANY_STATE) == 1) {
      if (info.valid_data) return sd;
      ddsi_serdata_unref(sd);
      continue;
    }
    if (left <= 0) return NULL;
    dds_waitset_wait(ws, NULL, 0, left < DDS_MSECS(50) ? left : DDS_MSECS(50));
  }
}

int main(int argc, char **argv) {
  common_opts c;
  const char *type = "", *topic = NULL;
  double timeout = 30;
  long wait_subs = 1;
  const msgtype *mt = NULL;
  char ros_name[128], dds_name[256];
  size_t i;
  g_prog = "msgbytes_cyclone";
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
      COMMON_FLAGS(c),
    };
    flags_parse(argc, argv, 2, "pub|sub --type T [flags]", fl, sizeof fl / sizeof fl[0]);
  }
  common_check(&c);
  for (i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp(types[i].name, type) == 0) mt = &types[i];
  if (!mt) fatal("--type must be one of %s", MC_TYPES);
  if (!topic) {
    snprintf(ros_name, sizeof ros_name, "/msgbytes_%s", mt->name);
    topic = ros_name;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  dds_topic_name(topic, dds_name, sizeof dds_name);
  cy_node n = cy_node_new(&c);
  dds_entity_t t = cy_topic(&n, mt->desc, dds_name);
  int64_t deadline = mono_ns() + secs_to_ns(timeout);
  match_seen seen = {0, 0};

  if (strcmp(argv[1], "pub") == 0) {
    /* The local reader matches too: wait for wait_subs + 1 readers. */
    dds_entity_t w = cy_writer(&n, t, 1, 1, 0);
    dds_entity_t local = cy_reader(&n, t, 1, 1, 0);
    dds_entity_t ws = cy_waitset(&n, local);
    struct ddsi_serdata *sd;
    cy_announce(&n, &local, 1, &w, 1);
    if (cy_wait_readers(w, wait_subs + 1, timeout) != 0) {
      fprintf(stderr, "%s: no reader matched\n", g_prog);
      return EXIT_TIMEOUT;
    }
    fprintf(stderr, "%s: matched %ld subscription(s)\n", g_prog, wait_subs);
    CY_OK(dds_write(w, mt->fill()));
    sd = take_one(local, ws, deadline, &seen);
    if (!sd) fatal("the local reader did not get the sample");
    print_serdata("ser", sd);
    ddsi_serdata_unref(sd);
    gate_wait();
    cy_node_close(&n);
    return EXIT_OK;
  }

  {
    dds_entity_t r = cy_reader(&n, t, 1, 1, 0);
    dds_entity_t ws = cy_waitset(&n, r);
    struct ddsi_serdata *sd, *again;
    void *sample;
    cy_announce(&n, &r, 1, NULL, 0);
    sd = take_one(r, ws, deadline, &seen);
    if (!sd) {
      fprintf(stderr, "%s: no sample before the timeout\n", g_prog);
      return EXIT_TIMEOUT;
    }
    print_serdata("raw", sd);
    sample = calloc(1, mt->desc->m_size);
    if (!sample || !ddsi_serdata_to_sample(sd, sample, NULL, NULL)) fatal("cannot decode the sample");
    mt->print(sample);
    again = ddsi_serdata_from_sample(sd->type, SDK_DATA, sample);
    if (!again) fatal("cannot serialize the decoded sample");
    print_serdata("ser", again);
    printf("end\n");
    ddsi_serdata_unref(again);
    ddsi_serdata_unref(sd);
    dds_sample_free(sample, mt->desc, DDS_FREE_ALL);
    cy_node_close(&n);
  }
  return EXIT_OK;
}
