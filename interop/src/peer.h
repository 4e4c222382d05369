/*
 * peer.h - vendor-neutral part of the nros interop peers.
 *
 * Included by the Cyclone DDS programs (C11) and the Fast DDS programs
 * (C++17), so everything here is plain C that also compiles as C++.
 * It holds: clocks, the flag parser, ROS topic-name mapping, the /clock
 * script engine (exact integer arithmetic), the chatter string format,
 * the pingpong control protocol and its report lines.
 */
#ifndef NROS_INTEROP_PEER_H
#define NROS_INTEROP_PEER_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* time                                                                 */

#define NS_PER_S 1000000000LL

static inline int64_t ts_to_ns(const struct timespec *ts) {
  return (int64_t)ts->tv_sec * NS_PER_S + (int64_t)ts->tv_nsec;
}
/* Monotonic time, for intervals and schedules. */
static inline int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts_to_ns(&ts);
}
/* Wall time (CLOCK_REALTIME), for the timestamps printed on stdout. */
static inline int64_t wall_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts_to_ns(&ts);
}
/* Sleeps until the monotonic instant t (absolute). */
static inline void sleep_until(int64_t t) {
  struct timespec ts;
  if (t <= 0) return;
  ts.tv_sec = (time_t)(t / NS_PER_S);
  ts.tv_nsec = (long)(t % NS_PER_S);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}
static inline void nap(int64_t ns) {
  if (ns > 0) sleep_until(mono_ns() + ns);
}
static inline int64_t secs_to_ns(double s) { return s <= 0 ? 0 : (int64_t)(s * 1e9 + 0.5); }

/* ------------------------------------------------------------------ */
/* errors                                                               */

static const char *g_prog = "peer";

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
static void fatal(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: ", g_prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(2);
}

/* Exit codes shared by every program. */
enum { EXIT_OK = 0, EXIT_USAGE = 2, EXIT_TIMEOUT = 3, EXIT_ORDER = 4 };

/* ------------------------------------------------------------------ */
/* exact decimals                                                       */

/* Parses "[+-]digits[.digits]" scaled by 1e9 (so "1.5" -> 1500000000).
 * Digits past the ninth decimal are ignored (truncation). Returns a
 * pointer to the first unparsed char, or NULL if there were no digits
 * or the value overflows. */
static inline const char *parse_nano(const char *s, int64_t *out) {
  int neg = 0, digits = 0, frac = 0;
  int64_t whole = 0, part = 0;
  if (*s == '+' || *s == '-') neg = (*s++ == '-');
  for (; *s >= '0' && *s <= '9'; s++, digits++) {
    if (whole > (INT64_MAX / NS_PER_S - 9) / 10) return NULL;
    whole = whole * 10 + (*s - '0');
  }
  if (*s == '.') {
    for (s++; *s >= '0' && *s <= '9'; s++, digits++)
      if (frac < 9) { part = part * 10 + (*s - '0'); frac++; }
  }
  if (digits == 0) return NULL;
  for (; frac < 9; frac++) part *= 10;
  *out = (whole * NS_PER_S + part) * (neg ? -1 : 1);
  return s;
}

/* Parses a duration "1s", "500ms", "2.25", "10us", "7ns" into ns.
 * No unit means seconds. Returns 0 on success. */
static inline int parse_duration(const char *s, int64_t *out) {
  int64_t v;
  const char *unit = parse_nano(s, &v);
  if (!unit) return -1;
  if (*unit == 0 || strcmp(unit, "s") == 0) *out = v;
  else if (strcmp(unit, "ms") == 0) *out = v / 1000;
  else if (strcmp(unit, "us") == 0) *out = v / 1000000;
  else if (strcmp(unit, "ns") == 0) *out = v / NS_PER_S;
  else return -1;
  return 0;
}

/* ------------------------------------------------------------------ */
/* flags                                                                */

enum flag_kind { FLAG_BOOL, FLAG_INT, FLAG_DOUBLE, FLAG_STRING };

typedef struct {
  const char *name; /* without the leading "--" */
  enum flag_kind kind;
  void *dst;        /* int*, long*, double*, const char** ; FLAG_BOOL sets int* to 1 */
  const char *help;
} flag_t;

static inline void flags_usage(const char *synopsis, const flag_t *fl, int n) {
  int i;
  fprintf(stderr, "usage: %s %s\n", g_prog, synopsis);
  for (i = 0; i < n; i++) {
    const char *arg = fl[i].kind == FLAG_BOOL ? "" : fl[i].kind == FLAG_STRING ? " S" : " N";
    fprintf(stderr, "  --%s%s\t%s\n", fl[i].name, arg, fl[i].help);
  }
}

/* Parses argv[first..] as "--name value", "--name=value" or "--flag".
 * Unknown flags and bad numbers print usage and exit 2. */
static inline void flags_parse(int argc, char **argv, int first, const char *synopsis, const flag_t *fl, int n) {
  int a, i;
  for (a = first; a < argc; a++) {
    const char *arg = argv[a], *val = NULL, *eq;
    size_t len;
    const flag_t *f = NULL;
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      flags_usage(synopsis, fl, n);
      exit(0);
    }
    if (strncmp(arg, "--", 2) != 0) goto bad;
    arg += 2;
    eq = strchr(arg, '=');
    len = eq ? (size_t)(eq - arg) : strlen(arg);
    for (i = 0; i < n; i++)
      if (strlen(fl[i].name) == len && strncmp(fl[i].name, arg, len) == 0) { f = &fl[i]; break; }
    if (!f) goto bad;
    if (f->kind == FLAG_BOOL) {
      if (eq) goto bad;
      *(int *)f->dst = 1;
      continue;
    }
    if (eq) val = eq + 1;
    else if (a + 1 < argc) val = argv[++a];
    else { fprintf(stderr, "%s: --%s needs a value\n", g_prog, f->name); exit(EXIT_USAGE); }
    if (f->kind == FLAG_STRING) { *(const char **)f->dst = val; continue; }
    {
      char *end = NULL;
      errno = 0;
      if (f->kind == FLAG_INT) *(long *)f->dst = strtol(val, &end, 10);
      else *(double *)f->dst = strtod(val, &end);
      if (errno || end == val || *end) {
        fprintf(stderr, "%s: bad number for --%s: '%s'\n", g_prog, f->name, val);
        exit(EXIT_USAGE);
      }
    }
    continue;
  bad:
    fprintf(stderr, "%s: unknown argument '%s'\n", g_prog, argv[a]);
    flags_usage(synopsis, fl, n);
    exit(EXIT_USAGE);
  }
}

/* Options every program takes. */
typedef struct {
  long domain;            /* --domain, default $ROS_DOMAIN_ID, else 0 */
  const char *node;       /* --node: node name announced on ros_discovery_info */
  int fixed_ports;        /* --fixed-ports: Cyclone ParticipantIndex auto (well-known ports) */
  int no_graph;           /* --no-graph: do not publish ros_discovery_info */
  const char *keystore;   /* --keystore: SROS2 keystore, default $ROS_SECURITY_KEYSTORE when enabled */
  const char *enclave;    /* --enclave: enclave name, default $ROS_SECURITY_ENCLAVE_OVERRIDE, else "/" */
} common_opts;

#define COMMON_FLAGS(c)                                                                   \
  {"domain", FLAG_INT, &(c).domain, "DDS domain id (default $ROS_DOMAIN_ID, else 0)"},    \
  {"node", FLAG_STRING, &(c).node, "node name announced on ros_discovery_info"},        \
  {"fixed-ports", FLAG_BOOL, &(c).fixed_ports,                                          \
   "well-known unicast ports (Cyclone: ParticipantIndex auto; Fast DDS always)"},       \
  {"no-graph", FLAG_BOOL, &(c).no_graph, "do not publish ros_discovery_info"},          \
  {"keystore", FLAG_STRING, &(c).keystore,                                              \
   "SROS2 keystore: DDS Security from enclaves/<enclave> (default $ROS_SECURITY_KEYSTORE " \
   "if $ROS_SECURITY_ENABLE=true)"},                                                     \
  {"enclave", FLAG_STRING, &(c).enclave, "SROS2 enclave name (default $ROS_SECURITY_ENCLAVE_OVERRIDE, else /)"}

static inline void common_defaults(common_opts *c, const char *prog) {
  const char *d = getenv("ROS_DOMAIN_ID");
  c->domain = 0;
  if (d && *d) {
    char *end;
    long v = strtol(d, &end, 10);
    if (*end == 0 && v >= 0) c->domain = v;
  }
  c->node = prog;
  c->fixed_ports = 0;
  c->no_graph = 0;
  c->keystore = NULL;
  c->enclave = NULL;
}
static inline void common_check(const common_opts *c) {
  if (c->domain < 0 || c->domain > 232) fatal("--domain must be in 0..232");
}

/* ------------------------------------------------------------------ */
/* SROS2 security, as rcl finds an enclave and rmw reads its files      */

/* The six files of an enclave, in the order the vendors' properties take
 * them (rmw_dds_common get_security_files). */
static const char *const SEC_FILES[6] = {
  "identity_ca.cert.pem", "cert.pem", "key.pem", "permissions_ca.cert.pem", "governance.p7s", "permissions.p7s",
};
enum { SEC_IDENTITY_CA, SEC_CERT, SEC_KEY, SEC_PERMISSIONS_CA, SEC_GOVERNANCE, SEC_PERMISSIONS };

/* The enclave this process runs in (for USER_DATA "enclave=<name>;"). */
static inline const char *sec_enclave_name(const common_opts *c) {
  const char *e = c->enclave;
  if (!e || !*e) e = getenv("ROS_SECURITY_ENCLAVE_OVERRIDE");
  return e && *e ? e : "/";
}

/* Fills root with <keystore>/enclaves<enclave> and returns 1 when security
 * is asked for: --keystore, or $ROS_SECURITY_ENABLE=true with
 * $ROS_SECURITY_KEYSTORE. Enforced, a missing file is fatal and named;
 * permissive, it prints a warning and returns 0 (unsecured), as rcl does. */
static inline int sec_root(const common_opts *c, char *root, size_t n) {
  const char *ks = c->keystore, *enable = getenv("ROS_SECURITY_ENABLE"), *strategy = getenv("ROS_SECURITY_STRATEGY");
  const char *enclave = sec_enclave_name(c);
  /* rcl: Enforce only when ROS_SECURITY_STRATEGY=Enforce; an explicit
   * --keystore enforces unless the strategy says Permissive. */
  int permissive = c->keystore && *c->keystore ? (strategy && strcmp(strategy, "Permissive") == 0)
                                                : !(strategy && strcmp(strategy, "Enforce") == 0);
  int i;
  if (!ks || !*ks) {
    if (!enable || strcmp(enable, "true") != 0) return 0;
    ks = getenv("ROS_SECURITY_KEYSTORE");
    if (!ks || !*ks) {
      if (permissive) { fprintf(stderr, "%s: warning: ROS_SECURITY_KEYSTORE unset, running unsecured\n", g_prog); return 0; }
      fatal("ROS_SECURITY_ENABLE=true but ROS_SECURITY_KEYSTORE is not set");
    }
  }
  snprintf(root, n, "%s/enclaves%s%s", ks, enclave[0] == '/' ? "" : "/", strcmp(enclave, "/") == 0 ? "" : enclave);
  for (i = 0; i < 6; i++) {
    char path[1100];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", root, SEC_FILES[i]);
    if ((f = fopen(path, "r")) != NULL) { fclose(f); continue; }
    if (permissive) { fprintf(stderr, "%s: warning: %s missing, running unsecured\n", g_prog, path); return 0; }
    fatal("security enabled but %s is missing (enclave %s)", path, enclave);
  }
  fprintf(stderr, "%s: secure, enclave %s (%s)\n", g_prog, enclave, root);
  return 1;
}

/* Prints "<prog>: matched N <what> (T so far)" on stderr whenever the
 * current count N or the cumulative count T changes, so a test driving
 * the peer can tell when discovery is done. */
typedef struct {
  long current, total;
} match_seen;

static inline void report_matched(match_seen *seen, long current, long total, const char *what) {
  if (current == seen->current && total == seen->total) return;
  seen->current = current;
  seen->total = total;
  fprintf(stderr, "%s: matched %ld %s (%ld so far)\n", g_prog, current, what, total);
  fflush(stderr);
}

/* --gate: after matching, block until a line (or EOF) arrives on stdin.
 * Lets a test start publishing only once the subscriber side reports its
 * own match (reader-side discovery can lag behind the writer's). */
static inline void gate_wait(void) {
  char line[64];
  fprintf(stderr, "%s: gated, waiting for a line on stdin\n", g_prog);
  fflush(stderr);
  if (!fgets(line, sizeof line, stdin)) clearerr(stdin);
}

/* ------------------------------------------------------------------ */
/* topic names                                                          */

/* Maps a ROS topic name to its DDS name: "/clock" -> "rt/clock",
 * "chatter" -> "rt/chatter". A name that already starts with "rt/" (or
 * any name given with a leading "dds:") is used as is. */
static inline void dds_topic_name(const char *ros, char *out, size_t n) {
  if (strncmp(ros, "dds:", 4) == 0) snprintf(out, n, "%s", ros + 4);
  else if (strncmp(ros, "rt/", 3) == 0) snprintf(out, n, "%s", ros);
  else snprintf(out, n, "rt/%s", ros[0] == '/' ? ros + 1 : ros);
}

/* ------------------------------------------------------------------ */
/* the /clock script                                                    */
/*
 * Statements, separated by ';' (blanks around words are ignored):
 *   start=T          initial sim time, T seconds (exact decimal)
 *   play Rx D        wall duration D during which sim advances R x wall
 *   pause D          sim frozen for D, the frozen stamp keeps being sent
 *   stall D          sim frozen for D and nothing sent (hung simulator)
 *   jump +D | -D     instant relative jump of sim time
 *   jump =T          instant absolute jump to T seconds
 *   hz F             publish rate from here on
 * "silent" after play/pause suppresses publishing for that segment.
 * Samples sit on one wall-clock grid (period 1/hz) that starts with the
 * script; a grid instant belongs to the segment whose [begin, end) holds
 * it, and carries sim = s0 + R*(w - w0) rounded to the nearest ns.
 */
enum step_kind { STEP_RUN, STEP_JUMP_BY, STEP_JUMP_TO, STEP_HZ };
typedef struct {
  enum step_kind kind;
  int64_t rate;   /* STEP_RUN: rate x 1e9 (1x = 1e9) */
  int64_t dur;    /* STEP_RUN: wall ns */
  int64_t value;  /* STEP_JUMP_*: ns; STEP_HZ: period ns */
  int quiet;      /* STEP_RUN: publish nothing */
} clock_step;

#define MAX_STEPS 1024
typedef struct {
  int64_t start;
  int n;
  clock_step step[MAX_STEPS];
} clock_script;

static inline char *trim(char *s) {
  char *e;
  while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
  e = s + strlen(s);
  while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = 0;
  return s;
}

/* Parses a script; on error writes a message to err and returns -1. */
static inline int clock_script_parse(const char *text, clock_script *sc, char *err, size_t errn) {
  char *buf = strdup(text), *cursor = buf, *stmt;
  memset(sc, 0, sizeof(*sc));
  if (!buf) { snprintf(err, errn, "out of memory"); return -1; }
  while ((stmt = cursor) != NULL) {
    char *semi = strchr(cursor, ';');
    char *w[4] = {NULL, NULL, NULL, NULL};
    int nw = 0;
    clock_step st;
    char shown[128];
    memset(&st, 0, sizeof(st));
    if (semi) { *semi = 0; cursor = semi + 1; } else cursor = NULL;
    stmt = trim(stmt);
    if (*stmt == 0) continue;
    snprintf(shown, sizeof shown, "%s", stmt);
    if (strncmp(stmt, "start", 5) == 0 && strchr(stmt, '=')) {
      char *v = trim(strchr(stmt, '=') + 1);
      const char *e = parse_nano(v, &sc->start);
      if (!e || *e) goto bad;
      continue;
    }
    {
      char *tok, *save = NULL;
      for (tok = strtok_r(stmt, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (nw == 4) goto bad;
        w[nw++] = tok;
      }
    }
    if (sc->n == MAX_STEPS) { snprintf(err, errn, "script has too many statements"); free(buf); return -1; }
    if (strcmp(w[0], "play") == 0 && (nw == 3 || nw == 4)) {
      size_t l = strlen(w[1]);
      const char *e;
      if (l < 2 || w[1][l - 1] != 'x') goto bad;
      w[1][l - 1] = 0;
      e = parse_nano(w[1], &st.rate);
      if (!e || *e || st.rate < 0) goto bad;
      if (parse_duration(w[2], &st.dur) < 0 || st.dur < 0) goto bad;
      if (nw == 4) { if (strcmp(w[3], "silent") != 0) goto bad; st.quiet = 1; }
      st.kind = STEP_RUN;
    } else if ((strcmp(w[0], "pause") == 0 || strcmp(w[0], "stall") == 0) && (nw == 2 || nw == 3)) {
      if (parse_duration(w[1], &st.dur) < 0 || st.dur < 0) goto bad;
      st.quiet = w[0][0] == 's';
      if (nw == 3) { if (strcmp(w[2], "silent") != 0) goto bad; st.quiet = 1; }
      st.kind = STEP_RUN;
      st.rate = 0;
    } else if (strcmp(w[0], "jump") == 0 && nw == 2) {
      if (w[1][0] == '=') {
        const char *e = parse_nano(w[1] + 1, &st.value);
        if (!e || *e) goto bad;
        st.kind = STEP_JUMP_TO;
      } else if (w[1][0] == '+' || w[1][0] == '-') {
        if (parse_duration(w[1], &st.value) < 0) goto bad;
        st.kind = STEP_JUMP_BY;
      } else goto bad;
    } else if (strcmp(w[0], "hz") == 0 && nw == 2) {
      char *e;
      double hz = strtod(w[1], &e);
      if (*e || !(hz > 0) || hz > 1e6) goto bad;
      st.kind = STEP_HZ;
      st.value = (int64_t)(1e9 / hz + 0.5);
    } else goto bad;
    sc->step[sc->n++] = st;
    continue;
  bad:
    snprintf(err, errn, "bad script statement '%s' (want start=T | play Rx D | pause D | stall D | jump +D|-D|=T | hz F)", shown);
    free(buf);
    return -1;
  }
  free(buf);
  return 0;
}

/* sim advance for wall interval e at rate r (x1e9), rounded to nearest ns */
static inline int64_t clock_advance(int64_t rate, int64_t e) {
  __int128 p = (__int128)rate * e;
  return (int64_t)((p + NS_PER_S / 2) / NS_PER_S);
}

/* ROS builtin_interfaces/Time from signed ns: nanosec always in [0, 1e9). */
static inline void split_time(int64_t ns, int32_t *sec, uint32_t *nanosec) {
  int64_t s = ns / NS_PER_S, r = ns % NS_PER_S;
  if (r < 0) { r += NS_PER_S; s--; }
  *sec = (int32_t)s;
  *nanosec = (uint32_t)r;
}

/* Count of samples a script publishes at the given period (for tests/help). */
typedef void (*clock_publish_fn)(void *ctx, int32_t sec, uint32_t nanosec);

/* Plays the script: sleeps to each grid instant, calls publish and prints
 * "wall_ns sec nanosec" with the wall time taken just before publishing.
 * If dry is set it does not sleep and prints 0 as wall time. Returns the
 * number of samples. */
static inline long clock_script_play(const clock_script *sc, int64_t period, clock_publish_fn publish, void *ctx, int dry) {
  int64_t origin = dry ? 0 : mono_ns();
  int64_t seg_begin = 0;   /* relative to origin */
  int64_t next = 0;        /* next grid instant, relative to origin */
  int64_t sim = sc->start; /* sim time at seg_begin */
  long count = 0;
  int i;
  for (i = 0; i < sc->n; i++) {
    const clock_step *st = &sc->step[i];
    switch (st->kind) {
    case STEP_HZ: period = st->value; continue;
    case STEP_JUMP_BY: sim += st->value; continue;
    case STEP_JUMP_TO: sim = st->value; continue;
    case STEP_RUN: break;
    }
    for (; next < seg_begin + st->dur; next += period) {
      int32_t sec;
      uint32_t nsec;
      int64_t w;
      if (st->quiet) continue;
      if (!dry) sleep_until(origin + next);
      split_time(sim + clock_advance(st->rate, next - seg_begin), &sec, &nsec);
      w = dry ? 0 : wall_ns();
      if (publish) publish(ctx, sec, nsec);
      printf("%lld %d %u\n", (long long)w, (int)sec, (unsigned)nsec);
      count++;
    }
    sim += clock_advance(st->rate, st->dur);
    seg_begin += st->dur;
  }
  if (!dry) sleep_until(origin + seg_begin);
  fflush(stdout);
  return count;
}

/* ------------------------------------------------------------------ */
/* chatter strings                                                      */

#define CHATTER_PREFIX "Hello World: "
#define SHOW_PREFIX 40 /* characters of data shown on a chatter line */

/* Writes "<prefix><i>" padded with '.' up to size chars into buf (cap >=
 * max(size, strlen(prefix)+21)+1). Returns the length. */
static inline size_t chatter_text(char *buf, size_t cap, const char *prefix, long i, long size) {
  int n = snprintf(buf, cap, "%s%ld", prefix, i);
  size_t len = n < 0 ? 0 : (size_t)n;
  while ((long)len < size && len + 1 < cap) buf[len++] = '.';
  buf[len] = 0;
  return len;
}
/* Returns the sequence number after prefix in s, or -1 if s is not one of ours. */
static inline long chatter_index(const char *s, size_t len, const char *prefix) {
  size_t pl = strlen(prefix), k;
  long v = 0;
  if (len <= pl || strncmp(s, prefix, pl) != 0) return -1;
  for (k = pl; k < len && s[k] >= '0' && s[k] <= '9'; k++) {
    if (v > 100000000000L) return -1;
    v = v * 10 + (s[k] - '0');
  }
  if (k == pl) return -1;
  return v;
}
/* Prints "<wall_ns> <len> <first SHOW_PREFIX chars of data>". */
static inline void chatter_line(int64_t wall, const char *s, size_t len) {
  int show = (int)(len < SHOW_PREFIX ? len : SHOW_PREFIX);
  printf("%lld %zu %.*s\n", (long long)wall, len, show, s);
}

/* The subscriber's order check: numbered strings must arrive as
 * first, first+1, ... (first 0 = start anywhere). With allow_gaps, only
 * increasing. Strings without our prefix and a number are not checked. */
typedef struct {
  const char *prefix;
  long expect;    /* next index wanted; 0 = not known yet */
  int allow_gaps;
  long errors;
} order_check;

static inline void order_see(order_check *o, const char *s, size_t len) {
  long i = chatter_index(s, len, o->prefix);
  if (i < 0) return;
  if (o->expect != 0 && (o->allow_gaps ? i < o->expect : i != o->expect)) {
    o->errors++;
    fprintf(stderr, "%s: out of order: got #%ld, want #%ld\n", g_prog, i, o->expect);
  }
  o->expect = i + 1;
}

/* Chatter subscriber exit code: 3 if --count was not reached, 4 if it was
 * but the order check failed, else 0. */
static inline int chatter_exit(long count, long got, const order_check *o) {
  if (count && got < count) return EXIT_TIMEOUT;
  return o->errors ? EXIT_ORDER : EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* pingpong                                                             */
/*
 * Control samples have stamp_ns < 0:
 *   -2 ping -> pong: reset counters and only count (sink); pong answers -2
 *   -1 ping -> pong: report; pong answers -1 with 32 bytes of data, four
 *      little-endian int64: samples counted, data bytes counted, first and
 *      last receive instants (pong's monotonic ns); pong goes back to echo
 *   -9 ping -> pong: quit
 * Everything else pong echoes back unchanged.
 */
enum { PP_SINK = -2, PP_REPORT = -1, PP_QUIT = -9 };

static inline void le64_put(uint8_t *p, int64_t v) {
  int k;
  for (k = 0; k < 8; k++) p[k] = (uint8_t)((uint64_t)v >> (8 * k));
}
static inline int64_t le64_get(const uint8_t *p) {
  uint64_t v = 0;
  int k;
  for (k = 7; k >= 0; k--) v = (v << 8) | p[k];
  return (int64_t)v;
}

typedef struct {
  const char *role;
  long size, count, warmup, depth, timeout_ms;
  int best_effort, reliable, keep_pong;
  const char *mode;
  double duration, wait_timeout;
} pingpong_opts;

static inline void pingpong_defaults(pingpong_opts *o) {
  o->role = NULL;
  o->size = 64;
  o->count = 10000;
  o->warmup = 100;
  o->depth = 10;
  o->timeout_ms = 1000;
  o->best_effort = 0;
  o->reliable = 0;
  o->keep_pong = 0;
  o->mode = "latency";
  o->duration = 5;
  o->wait_timeout = 30;
}

#define PINGPONG_FLAGS(o)                                                                          \
  {"size", FLAG_INT, &(o).size, "length of the data sequence in bytes (64)"},                     \
  {"count", FLAG_INT, &(o).count, "measured round trips (10000)"},                                \
  {"warmup", FLAG_INT, &(o).warmup, "unmeasured round trips first (100)"},                        \
  {"best-effort", FLAG_BOOL, &(o).best_effort, "BEST_EFFORT (default RELIABLE)"},                 \
  {"reliable", FLAG_BOOL, &(o).reliable, "RELIABLE (the default)"},                               \
  {"depth", FLAG_INT, &(o).depth, "KEEP_LAST depth, 0 = KEEP_ALL (10)"},                          \
  {"mode", FLAG_STRING, &(o).mode, "latency | throughput"},                                       \
  {"duration", FLAG_DOUBLE, &(o).duration, "throughput: flood seconds (5)"},                      \
  {"timeout-ms", FLAG_INT, &(o).timeout_ms, "latency: give up on one round trip after MS (1000)"}, \
  {"wait-timeout", FLAG_DOUBLE, &(o).wait_timeout, "seconds to wait for the other side (30)"},    \
  {"keep-pong", FLAG_BOOL, &(o).keep_pong, "do not tell pong to quit at the end"}

static inline void pingpong_check(pingpong_opts *o) {
  if (!o->role || (strcmp(o->role, "ping") && strcmp(o->role, "pong"))) fatal("first argument must be ping or pong");
  if (strcmp(o->mode, "latency") && strcmp(o->mode, "throughput")) fatal("--mode must be latency or throughput");
  if (o->size < 0 || o->size > 256L * 1024 * 1024) fatal("--size out of range");
  if (o->count < 0 || o->warmup < 0 || o->depth < 0) fatal("negative --count/--warmup/--depth");
  if (o->best_effort && o->reliable) fatal("--best-effort and --reliable together");
}

static inline int cmp_int64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}
/* nearest-rank percentile p (0..100] of n sorted values */
static inline int64_t nearest_rank(const int64_t *v, long n, double p) {
  long k = (long)(p / 100.0 * (double)n);
  if ((double)k < p / 100.0 * (double)n) k++;
  if (k < 1) k = 1;
  if (k > n) k = n;
  return v[k - 1];
}
/* "<vendor> <qos> size=B samples=N lost=L rtt_us min= mean= p50= p90= p99= max=" */
static inline void print_latency_line(const char *label, int64_t *rtt, long n, long lost, long size) {
  double sum = 0;
  long i;
  if (n == 0) {
    printf("%s size=%ld samples=0 lost=%ld\n", label, size, lost);
    return;
  }
  qsort(rtt, (size_t)n, sizeof(rtt[0]), cmp_int64);
  for (i = 0; i < n; i++) sum += (double)rtt[i];
  printf("%s size=%ld samples=%ld lost=%ld rtt_us min=%.1f mean=%.1f p50=%.1f p90=%.1f p99=%.1f max=%.1f\n", label,
         size, n, lost, (double)rtt[0] / 1e3, sum / (double)n / 1e3, (double)nearest_rank(rtt, n, 50) / 1e3,
         (double)nearest_rank(rtt, n, 90) / 1e3, (double)nearest_rank(rtt, n, 99) / 1e3, (double)rtt[n - 1] / 1e3);
}
/* the throughput result line; rep is pong's 32-byte report */
static inline void print_throughput_line(const char *label, long size, long depth, double dt, long sent, const uint8_t *rep) {
  int64_t rx = le64_get(rep), bytes = le64_get(rep + 8), first = le64_get(rep + 16), last = le64_get(rep + 24);
  double rdt = last > first ? (double)(last - first) / 1e9 : dt;
  printf("%s throughput size=%ld depth=%ld duration_s=%.2f sent=%ld sent_msgs_per_s=%.0f received=%lld "
         "lost=%lld recv_msgs_per_s=%.0f recv_MB_per_s=%.2f recv_Mbit_per_s=%.1f\n",
         label, size, depth, dt, sent, (double)sent / dt, (long long)rx, (long long)(sent - rx), (double)rx / rdt,
         (double)bytes / rdt / 1e6, (double)bytes * 8 / rdt / 1e6);
}

/* Pong's counters while sinking. */
typedef struct {
  int sink;
  int64_t rx, bytes, first, last;
} pong_state;

static inline void pong_count(pong_state *p, size_t len) {
  int64_t t = mono_ns();
  if (p->rx == 0) p->first = t;
  p->last = t;
  p->rx++;
  p->bytes += (int64_t)len;
}
static inline void pong_report(const pong_state *p, uint8_t out[32]) {
  le64_put(out, p->rx);
  le64_put(out + 8, p->bytes);
  le64_put(out + 16, p->first);
  le64_put(out + 24, p->last);
}

#endif
