/* zsvcserver - a std_srvs/srv/SetBool service server as a ROS 2 node on rmw_zenoh_cpp, on zenoh-pico:
 *   queryable (complete) on <domain>/<service>/std_srvs::srv::dds_::SetBool_/<service type hash>
 *   tokens NN and SS (the SS token is what a client's service_server_is_available looks for)
 *   each query: payload CDR SetBool_Request (00 01 00 00, bool data), attachment 33 bytes carrying the client's
 *   sequence number and gid (its request id); the reply goes out on the server's own key with the response
 *   (success = data, message = "<label> <true|false>") and an attachment with the request's sequence number, the
 *   reply's time and the client's gid, as rmw_zenoh's rmw_send_response does.
 * Prints per query:  request seq=<n> ts=<ns> gid=<32 hex> att=<len> data=<0|1> dup=<0|1>
 * A query whose attachment is not 33 bytes, or a (gid, seq) seen before, is answered by nothing (rmw_zenoh drops
 * both). Exit 0 after --count answered requests, 3 on --timeout, 1 on session errors, 2 on a bad command line. */
#include <pthread.h>

#include "zros.h"

#define ZR_TYPE_SETBOOL "std_srvs::srv::dds_::SetBool_"
#define ZR_HASH_SETBOOL_JAZZY "RIHS01_abe9e4bb6b41b40e6789712c00ec8871923e089af3f667a79992a428cff2da0a"

static const char *prog = "zsvcserver";
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long answered, dropped;
static const char *label = "pico";
static const z_loaned_keyexpr_t *own_key;

typedef struct {
  uint8_t gid[16];
  int64_t seq;
} seen_t;
static seen_t seen[1024];
static int nseen;

static void on_query(z_loaned_query_t *query, void *ctx) {
  (void)ctx;
  uint8_t pl[256], at[64];
  size_t plen = zr_bytes(z_query_payload(query), pl, sizeof(pl));
  size_t alen = zr_bytes(z_query_attachment(query), at, sizeof(at));
  if (alen != 33 || at[16] != 16 || plen < 5 || plen > sizeof(pl) || memcmp(pl, "\x00\x01\x00\x00", 4) != 0) {
    pthread_mutex_lock(&mu);
    dropped++;
    printf("dropped att=%zu payload=%zu\n", alen, plen);
    pthread_mutex_unlock(&mu);
    return;
  }
  int64_t seq = zr_get_le64(at), ts = zr_get_le64(at + 8);
  int data = pl[4] != 0;
  char gid[33];
  zr_hex(at + 17, 16, gid);
  pthread_mutex_lock(&mu);
  int dup = 0;
  for (int k = 0; k < nseen; k++) dup |= seen[k].seq == seq && !memcmp(seen[k].gid, at + 17, 16);
  if (!dup && nseen < (int)(sizeof(seen) / sizeof(seen[0]))) {
    memcpy(seen[nseen].gid, at + 17, 16);
    seen[nseen++].seq = seq;
  }
  printf("request seq=%lld ts=%lld gid=%s att=%zu data=%d dup=%d\n", (long long)seq, (long long)ts, gid, alen, data,
         dup);
  pthread_mutex_unlock(&mu);
  if (dup) return;

  /* SetBool_Response: bool success, then (aligned to 4) string message with its NUL */
  char msg[64];
  snprintf(msg, sizeof(msg), "%s %s", label, data ? "true" : "false");
  uint32_t L = (uint32_t)strlen(msg) + 1;
  uint8_t resp[128] = {0x00, 0x01, 0x00, 0x00};
  resp[4] = (uint8_t)data;
  for (int k = 0; k < 4; k++) resp[8 + k] = (uint8_t)(L >> (8 * k));
  memcpy(resp + 12, msg, L);
  uint8_t ratt[33];
  zr_attachment(ratt, seq, now_real_ns(), at + 17);
  z_owned_bytes_t payload, attachment;
  z_bytes_copy_from_buf(&payload, resp, 12 + L);
  z_bytes_copy_from_buf(&attachment, ratt, sizeof(ratt));
  z_query_reply_options_t ro;
  z_query_reply_options_default(&ro);
  ro.attachment = z_move(attachment);
  if (z_query_reply(query, own_key, z_move(payload), &ro) < 0) {
    zr_log(prog, "reply failed");
    return;
  }
  pthread_mutex_lock(&mu);
  answered++;
  pthread_mutex_unlock(&mu);
}

static void usage(void) {
  fprintf(stderr,
          "usage: zsvcserver [--service NAME] [--count N] [--timeout SEC] [--label TEXT] [--linger SEC]\n"
          "                  [common options]\n" ZR_COMMON_USAGE
          "Serves std_srvs/srv/SetBool on NAME (/set_flag); prints one line per request.\n");
}

int main(int argc, char **argv) {
  zr_opts_t o;
  const char *service = "/set_flag";
  long count = 0;
  double timeout = 60, linger = 0.3;
  zr_opts_init(&o, "zsvcserver");
  for (int i = 1; i < argc; i++) {
    if (zr_common_arg(&o, argc, argv, &i)) continue;
    if (!strcmp(argv[i], "--service")) service = opt_val(argc, argv, &i);
    else if (!strcmp(argv[i], "--count")) count = opt_long(argc, argv, &i);
    else if (!strcmp(argv[i], "--timeout")) timeout = opt_double(argc, argv, &i);
    else if (!strcmp(argv[i], "--label")) label = opt_val(argc, argv, &i);
    else if (!strcmp(argv[i], "--linger")) linger = opt_double(argc, argv, &i);
    else { usage(); return 2; }
  }
  setvbuf(stdout, NULL, _IOLBF, 0);

  z_owned_session_t s;
  if (zr_open(&s, &o, prog) < 0) return 1;
  z_id_t zid = z_info_zid(z_loan(s));
  char zids[33], fq[256], key[512], nn[1024], ss[1024];
  zr_zid_str(&zid, zids);
  zr_fq_topic(o.ns, service, fq, sizeof(fq));
  const char *hash = o.humble ? ZR_HASH_HUMBLE : ZR_HASH_SETBOOL_JAZZY;
  zr_data_key(&o, fq, ZR_TYPE_SETBOOL, hash, key, sizeof(key));
  zr_node_token(&o, zids, 0, nn, sizeof(nn));
  zr_endpoint_token(&o, zids, 0, 11, "SS", fq, ZR_TYPE_SETBOOL, hash, ZR_QOS_DEFAULT10, ss, sizeof(ss));

  z_view_keyexpr_t ke;
  if (z_view_keyexpr_from_str(&ke, key) < 0) die("bad service key");
  own_key = z_loan(ke);
  z_owned_closure_query_t cb;
  z_closure(&cb, on_query, NULL, NULL);
  z_queryable_options_t qo;
  z_queryable_options_default(&qo);
  qo.complete = true;
  z_owned_queryable_t qable;
  if (z_declare_queryable(z_loan(s), &qable, z_loan(ke), z_move(cb), &qo) < 0) {
    zr_log(prog, "unable to declare the queryable on %s", key);
    return 1;
  }
  z_owned_liveliness_token_t tnn, tss;
  if (!o.no_tokens && (zr_declare_token(z_loan(s), &tnn, nn, prog) < 0 || zr_declare_token(z_loan(s), &tss, ss, prog) < 0))
    return 1;
  zr_log(prog, "zid %s serving %s", zids, key);

  int64_t deadline = now_mono_ns() + (int64_t)(timeout * 1e9);
  int rc = 0;
  for (;;) {
    pthread_mutex_lock(&mu);
    long a = answered;
    pthread_mutex_unlock(&mu);
    if (count > 0 && a >= count) break;
    if (now_mono_ns() > deadline) {
      if (count > 0) {
        zr_log(prog, "timeout: %ld of %ld requests answered", a, count);
        rc = 3;
      }
      break;
    }
    sleep_ns(10000000LL);
  }
  sleep_ns((int64_t)(linger * 1e9));
  pthread_mutex_lock(&mu);
  printf("summary answered=%ld dropped=%ld\n", answered, dropped);
  pthread_mutex_unlock(&mu);
  z_drop(z_move(qable));
  if (!o.no_tokens) {
    z_drop(z_move(tss));
    z_drop(z_move(tnn));
  }
  z_drop(z_move(s));
  return rc;
}
