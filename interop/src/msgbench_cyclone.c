/* msgbench_cyclone - times Cyclone DDS's own CDR serializer on the
 * messages of the Go benchmarks BenchmarkImu and BenchmarkImage640x480
 * (msg/bench_generated_test.go), for scripts/bench-msg.sh. No DDS
 * entity is created and no socket is opened: only the type's serializer
 * (dds_cdrstream, the code dds_write and dds_take run per sample) is used.
 *
 *   Marshal:   encapsulation header + dds_stream_write (XCDR1) into an
 *              output stream whose buffer is kept between iterations,
 *              like msg.Marshal into a reused []byte.
 *   Unmarshal: dds_stream_normalize_data (the validation Cyclone runs on
 *              every received sample) + dds_stream_read into one sample
 *              reused between iterations, like msg.Unmarshal into a
 *              reused message.
 *
 * The Imu is the recorded sample the Go benchmark decodes (--imu FILE);
 * the Image is built the same way as in Go: 640x480 rgb8, data[i] = i.
 * Each case runs for about --benchtime seconds (1) after a calibration,
 * and prints a line in `go test -bench -benchmem` form:
 *   BenchmarkImu/Marshal N 123.4 ns/op B 0 allocs/op
 * where allocs/op counts malloc/calloc/realloc calls (this program
 * interposes them) and B is the message size.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dds/dds.h"
#include "dds/ddsi/ddsi_cdrstream.h"
#include "msgtypes.h"

/* ---- allocation counter (glibc) ----------------------------------------- */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static uint64_t g_allocs;
void *malloc(size_t n) {
  g_allocs++;
  return __libc_malloc(n);
}
void *calloc(size_t n, size_t m) {
  g_allocs++;
  return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n) {
  g_allocs++;
  return __libc_realloc(p, n);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the two operations --------------------------------------------------- */

#define XCDR1 1u

typedef struct {
  const dds_topic_descriptor_t *desc;
  const void *sample;  /* encoded by Marshal */
  void *into;          /* decoded into by Unmarshal */
  unsigned char hdr[4];
  dds_ostream_t os; /* the body, buffer kept between iterations */
  unsigned char *wire; /* a serialized sample: header + body */
  uint32_t wire_len;
} bench_case;

static void op_marshal(bench_case *c) {
  static const unsigned char hdr[4] = {0x00, 0x01, 0x00, 0x00};
  /* As serdata_default does it: the header in front, the body in a
   * stream of its own (XCDR1 alignment counts from the body's start). */
  memcpy(c->hdr, hdr, 4);
  c->os.m_index = 0;
  dds_stream_write(&c->os, c->sample, c->desc->m_ops);
}

static void op_unmarshal(bench_case *c) {
  uint32_t off = 0, n = c->wire_len - 4;
  dds_istream_t is;
  /* Normalizing native-endian data only validates it (it would swap bytes
   * in place otherwise), so the same buffer serves every iteration. */
  if (!dds_stream_normalize_data((char *)c->wire + 4, &off, n, false, XCDR1, c->desc->m_ops)) {
    fprintf(stderr, "msgbench_cyclone: normalize rejected the sample\n");
    exit(1);
  }
  dds_istream_init(&is, n, c->wire + 4, XCDR1);
  dds_stream_read(&is, c->into, c->desc->m_ops);
}

static void run(const char *name, void (*op)(bench_case *), bench_case *c, size_t bytes, double benchtime) {
  uint64_t n = 1, i, allocs;
  int64_t t0, dt;
  /* calibrate: grow n until a run takes 1/10 of the time asked */
  for (;;) {
    t0 = now_ns();
    for (i = 0; i < n; i++) op(c);
    dt = now_ns() - t0;
    if (dt >= (int64_t)(benchtime * 1e8) || n >= (1ull << 40)) break;
    n *= dt < 1000 ? 100 : 2;
  }
  n = (uint64_t)((double)n * benchtime * 1e9 / (double)(dt > 0 ? dt : 1));
  if (n < 1) n = 1;
  allocs = g_allocs;
  t0 = now_ns();
  for (i = 0; i < n; i++) op(c);
  dt = now_ns() - t0;
  allocs = g_allocs - allocs;
  printf("%s\t%llu\t%.1f ns/op\t%zu B\t%.0f allocs/op\n", name, (unsigned long long)n, (double)dt / (double)n, bytes,
         (double)allocs / (double)n);
  fflush(stdout);
}

/* Serializes c->sample once (sizing the stream) and keeps header + body
 * as c->wire for the Unmarshal runs. */
static void prepare(bench_case *c) {
  dds_ostream_init(&c->os, 0, XCDR1);
  op_marshal(c);
  c->wire_len = 4 + c->os.m_index;
  c->wire = malloc(c->wire_len);
  memcpy(c->wire, c->hdr, 4);
  memcpy(c->wire + 4, c->os.m_buffer, c->os.m_index);
  c->into = calloc(1, c->desc->m_size);
}

static unsigned char *read_file(const char *path, uint32_t *len) {
  FILE *f = fopen(path, "rb");
  unsigned char *b;
  long n;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  b = malloc((size_t)n);
  if (fread(b, 1, (size_t)n, f) != (size_t)n) n = -1;
  fclose(f);
  if (n < 4) return NULL;
  *len = (uint32_t)n;
  return b;
}

int main(int argc, char **argv) {
  const char *imu_path = NULL;
  double benchtime = 1;
  int a;
  for (a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--imu") == 0 && a + 1 < argc) imu_path = argv[++a];
    else if (strcmp(argv[a], "--benchtime") == 0 && a + 1 < argc) benchtime = atof(argv[++a]);
    else {
      fprintf(stderr, "usage: msgbench_cyclone --imu walker_sensor_msgs.Imu_0.cdr [--benchtime SECONDS]\n");
      return 2;
    }
  }
  {
    /* the counter must see the library's allocations */
    dds_ostream_t os;
    uint64_t before = g_allocs;
    dds_ostream_init(&os, 64, XCDR1);
    dds_ostream_fini(&os);
    if (g_allocs == before) {
      fprintf(stderr, "msgbench_cyclone: cannot count Cyclone's allocations\n");
      return 1;
    }
  }
  if (!imu_path || benchtime <= 0) {
    fprintf(stderr, "usage: msgbench_cyclone --imu walker_sensor_msgs.Imu_0.cdr [--benchtime SECONDS]\n");
    return 2;
  }

  /* Imu: decode the recorded sample, then time both ways on it. */
  {
    static bench_case c;
    uint32_t len, off = 0;
    unsigned char *rec = read_file(imu_path, &len);
    sensor_msgs_msg_dds__Imu_ *m = calloc(1, sizeof *m);
    dds_istream_t is;
    if (!rec) {
      fprintf(stderr, "msgbench_cyclone: cannot read %s\n", imu_path);
      return 1;
    }
    if (rec[1] != 0x01 || !dds_stream_normalize_data((char *)rec + 4, &off, len - 4, false, XCDR1, sensor_msgs_msg_dds__Imu__desc.m_ops)) {
      fprintf(stderr, "msgbench_cyclone: %s is not a little-endian Imu\n", imu_path);
      return 1;
    }
    dds_istream_init(&is, len - 4, rec + 4, XCDR1);
    dds_stream_read(&is, (char *)m, sensor_msgs_msg_dds__Imu__desc.m_ops);
    c.desc = &sensor_msgs_msg_dds__Imu__desc;
    c.sample = m;
    prepare(&c);
    if (c.wire_len > len || memcmp(c.wire, rec, c.wire_len) != 0) {
      fprintf(stderr, "msgbench_cyclone: re-encoding the recorded Imu gave different bytes\n");
      return 1;
    }
    run("BenchmarkImu/Marshal", op_marshal, &c, len, benchtime);
    run("BenchmarkImu/Unmarshal", op_unmarshal, &c, len, benchtime);
  }

  /* Image 640x480 rgb8, as BenchmarkImage640x480 builds it. */
  {
    static bench_case c;
    static sensor_msgs_msg_dds__Image_ m;
    uint32_t i, n = 640 * 480 * 3;
    m.header.frame_id = (char *)"camera_optical_frame";
    m.height = 480;
    m.width = 640;
    m.encoding = (char *)"rgb8";
    m.step = 640 * 3;
    m.data._buffer = malloc(n);
    m.data._length = m.data._maximum = n;
    for (i = 0; i < n; i++) m.data._buffer[i] = (uint8_t)i;
    c.desc = &sensor_msgs_msg_dds__Image__desc;
    c.sample = &m;
    prepare(&c);
    run("BenchmarkImage640x480/Marshal", op_marshal, &c, n, benchtime);
    run("BenchmarkImage640x480/Unmarshal", op_unmarshal, &c, n, benchtime);
  }
  return 0;
}
