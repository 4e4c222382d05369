/*
 * msgcheck.h - vendor-neutral part of the byte-exactness peers
 * (msgbytes_cyclone.c, msgbytes_fastdds.cpp): the fixed values each
 * message is filled with, and the text form in which a peer prints the
 * values it decoded. Plain C that also compiles as C++.
 *
 * The same values are written in Go in interop/msgbytes_test.go; keep the
 * two in step. Every floating-point value is either a literal (rounded
 * the same way by every compiler) or exact in binary, so C, C++ and Go
 * build bit-identical messages.
 *
 * Decoded values are printed one leaf per line, "path=value", in
 * definition order: path is the ROS field path ("header.stamp.sec",
 * "ranges[3]", "parameters[1].value.bool_value"), integers in decimal,
 * bool as true/false, float32 with %.9g and float64 with %.17g (both
 * round-trip exactly; inf/-inf/-0 as printf writes them), strings raw
 * (the test strings hold no newline).
 */
#ifndef NROS_INTEROP_MSGCHECK_H
#define NROS_INTEROP_MSGCHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- the values ------------------------------------------------------ */

/* std_msgs/String: 18 bytes of UTF-8 (body 23 bytes: a padded sample). */
#define MC_STRING "Hello, nros! \xc3\xa9\xe2\x9c\x93"

/* geometry_msgs/PoseStamped: "odom" leaves the position misaligned by 7. */
#define MC_POSE_SEC 1700000000
#define MC_POSE_NANOSEC 123456789u
#define MC_POSE_FRAME "odom"
static const double mc_pose_position[3] = {1.5, -2.25, 1e-300};
static const double mc_pose_orientation[4] = {0.0, -0.0, 0.7071067811865476, 0.7071067811865476};

/* sensor_msgs/Imu: a negative second, "imu_link" (misaligned by 3). */
#define MC_IMU_SEC (-5)
#define MC_IMU_NANOSEC 999999999u
#define MC_IMU_FRAME "imu_link"
static const double mc_imu_orientation[4] = {0.1, 0.2, 0.3, 0.9};
static const double mc_imu_angular_velocity[3] = {-1e-9, 3.25, 6.02214076e23};
static const double mc_imu_linear_acceleration[3] = {0.0, 0.0, 9.80665};
static inline double mc_imu_orientation_cov(int i) { return i * 0.5 - 1.0; }
static inline double mc_imu_angular_velocity_cov(int i) { return -(double)i / 8.0; }
static inline double mc_imu_linear_acceleration_cov(int i) { return i == 4 ? (double)INFINITY : (double)(i * i) + 0.03125; }

/* sensor_msgs/LaserScan: 37 ranges (two infinite), 3 intensities. */
#define MC_SCAN_SEC 42
#define MC_SCAN_NANOSEC 500000000u
#define MC_SCAN_FRAME "laser"
static const float mc_scan_params[7] = {-1.5707964f, 1.5707964f, 0.017453292f, 1e-5f, 0.1f, 0.12f, 30.0f};
#define MC_SCAN_RANGES 37
static inline float mc_scan_range(int i) { return i == 5 ? INFINITY : i == 6 ? -INFINITY : (float)i * 0.25f; }
#define MC_SCAN_INTENSITIES 3
static const float mc_scan_intensities[MC_SCAN_INTENSITIES] = {0.5f, 100.0f, 0.0f};

/* rcl_interfaces/SetParameters_Request: one parameter of each type
 * (rcl_interfaces/ParameterType 1..9) plus an unset one with an empty
 * name; all other members of each ParameterValue stay zero or empty. */
#define MC_NPARAMS 10
static const char *const mc_param_names[MC_NPARAMS] = {"use_sim_time", "rate", "count", "label", "blob",
                                                        "flags", "ints", "gains", "names", ""};
#define MC_PARAM_DOUBLE 0.1
#define MC_PARAM_INT INT64_C(-9000000000)
#define MC_PARAM_STRING "h\xc3\xa9llo"
static const uint8_t mc_param_bytes[5] = {0, 1, 0xfe, 0xff, 7};
static const int mc_param_bools[3] = {1, 0, 1};
static const int64_t mc_param_ints[3] = {1, -2, INT64_C(9223372036854775807)};
static const double mc_param_doubles[2] = {0.5, -1.25};
static const char *const mc_param_strings[3] = {"a", "", "ccc"};

/* ---- printing decoded values ------------------------------------------- */

static char mc_path[256];

/* mc_pathf formats a path into a static buffer (one path at a time). */
static inline const char *mc_pathf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(mc_path, sizeof mc_path, fmt, ap);
  va_end(ap);
  return mc_path;
}
static inline void mc_i(const char *path, int64_t v) { printf("%s=%" PRId64 "\n", path, v); }
static inline void mc_u(const char *path, uint64_t v) { printf("%s=%" PRIu64 "\n", path, v); }
static inline void mc_b(const char *path, int v) { printf("%s=%s\n", path, v ? "true" : "false"); }
static inline void mc_f(const char *path, float v) { printf("%s=%.9g\n", path, (double)v); }
static inline void mc_d(const char *path, double v) { printf("%s=%.17g\n", path, v); }
static inline void mc_s(const char *path, const char *v) { printf("%s=%s\n", path, v ? v : ""); }

/* Prints "<label>=<hex of n bytes>". */
static inline void mc_hex(const char *label, const uint8_t *p, size_t n) {
  size_t i;
  printf("%s=", label);
  for (i = 0; i < n; i++) printf("%02x", p[i]);
  printf("\n");
}

/* Type names accepted by --type. */
#define MC_TYPES "string, pose, imu, scan, setparams"

#endif
