package ros

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Transient-local topics, as rmw_zenoh (Humble 0.1.2, Jazzy 0.2.2,
// Rolling 0.4.0 and every later release) does them with zenoh-ext's
// AdvancedPublisher and AdvancedSubscriber. <key> is the topic's data key.
//
// Publisher (durability TRANSIENT_LOCAL):
//   - a cache of the last <depth> samples (KEEP_LAST depth; 42 for a depth
//     of 0) answering queries on <key>/<suffix>, with
//     suffix = "@adv/pub/<zid>/<eid>/_" where <eid> is the zenoh publisher's
//     entity id in decimal when the publisher is sequenced, or the literal
//     "uhlc" when it is not (samples then ordered by their HLC timestamps;
//     the session must have timestamping on, which rmw_zenoh's config does).
//     The last chunk is the metadata, "_" when there is none.
//   - publisher detection: a liveliness token on <key>/<suffix>.
//   - RELIABLE + TRANSIENT_LOCAL only: sample-miss detection, which makes
//     the publisher sequenced (each put carries the source-info extension:
//     the publisher's (zid, eid) and a u32 sequence number from 0) and
//     sends a sporadic heartbeat: every 500 ms, if it published since the
//     last one, a put on <key>/<suffix> (congestion control BLOCK) whose
//     payload is the last sequence number as zenoh-ext serializes a u32 (4
//     bytes LE).
//   - The cache answers a query with parameters "_max=<n>" (the newest n
//     samples), "_sn=<a>..<b>" (sequence numbers in the range, either end
//     may be missing) and zenoh's "_time=" range, replying each sample
//     with its own key, timestamp, source info and attachment.
//
// Subscriber (durability TRANSIENT_LOCAL):
//   - on creation, one query of <key>/@adv/** with "_max=<depth>",
//     consolidation NONE, any reply key, no timeout (rmw_zenoh sets the
//     query timeout to the largest value);
//   - a liveliness subscriber (with history) on <key>/@adv/pub/**: for
//     every publisher token that appears, a query of that token's key with
//     "_max=<depth>" (late-joining publishers);
//   - subscriber detection: a liveliness token on
//     <key>/@adv/sub/<zid>/<eid>/_;
//   - RELIABLE only: a subscriber on <key>/@adv/pub/** for heartbeats; a
//     heartbeat with a sequence number past the last one delivered makes it
//     query "<heartbeat key>?_sn=<last+1>..<hb>".
//
// Samples are delivered in order per source, duplicates (same source and
// sequence number, or same timestamp) dropped.
//
// The first releases (Humble 0.1.0-0.1.1, Jazzy 0.2.0-0.2.1, Rolling
// 0.3.0-0.3.1) used zenoh-ext's PublicationCache and QueryingSubscriber instead:
// the publisher's cache (history = depth) is a complete queryable on
// "<zid>/<key>" (LegacyCacheKey); a transient-local subscriber queries
// "*/<key>" (LegacyHistoryQueryKey: target ALL, consolidation NONE, any
// reply key) at start, and "<zid>/<key>" of each publisher its graph
// cache discovers later (no timeout).

// AdvPrefix is the chunk that starts every advanced pub/sub suffix.
const AdvPrefix = "@adv"

// HeartbeatPeriod is rmw_zenoh's sporadic heartbeat period for reliable
// transient-local publishers.
const HeartbeatPeriod = 500 * time.Millisecond

// AdvancedPublisher is how rmw_zenoh configures zenoh-ext's advanced
// publisher for an endpoint's QoS.
type AdvancedPublisher struct {
	Cache             bool   // keep a cache and answer history queries
	CacheDepth        uint64 // samples kept (the QoS depth)
	Detection         bool   // declare the publisher-detection token
	Heartbeat         bool   // sporadic heartbeat, sequenced samples
	Sequenced         bool   // source info on every put, eid in the suffix
	CongestionBlock   bool   // congestion control BLOCK (else DROP)
	ReliableTransport bool   // zenoh reliability RELIABLE (else BEST_EFFORT)
}

// AdvancedPublisherFor returns the advanced-publisher settings rmw_zenoh
// derives from an (adapted) profile.
func AdvancedPublisherFor(p Profile) AdvancedPublisher {
	a := AdvancedPublisher{CongestionBlock: p.CongestionBlock(), ReliableTransport: p.ReliableTransport()}
	if p.Durability == DurabilityTransientLocal {
		a.Cache, a.CacheDepth, a.Detection = true, p.Depth, true
		if p.Reliability == ReliabilityReliable {
			a.Heartbeat, a.Sequenced = true, true
		}
	}
	return a
}

// AdvancedSubscriber is how rmw_zenoh configures zenoh-ext's advanced
// subscriber for an endpoint's QoS.
type AdvancedSubscriber struct {
	History    bool   // query history at start and from late publishers
	MaxSamples uint64 // "_max" of the history queries
	Detection  bool   // declare the subscriber-detection token
	Recovery   bool   // follow heartbeats and query missed samples
}

// AdvancedSubscriberFor returns the advanced-subscriber settings rmw_zenoh
// derives from an (adapted) profile.
func AdvancedSubscriberFor(p Profile) AdvancedSubscriber {
	var a AdvancedSubscriber
	if p.Durability == DurabilityTransientLocal {
		a.History, a.MaxSamples, a.Detection = true, p.Depth, true
		a.Recovery = p.Reliability == ReliabilityReliable
	}
	return a
}

// AdvPublisherSuffix returns "@adv/pub/<zid>/<eid>/_" for a sequenced
// publisher with zenoh entity id eid, or "@adv/pub/<zid>/uhlc/_" for one
// that is not.
func AdvPublisherSuffix(zid string, eid uint32, sequenced bool) string {
	id := "uhlc"
	if sequenced {
		id = strconv.FormatUint(uint64(eid), 10)
	}
	return AdvPrefix + "/pub/" + zid + "/" + id + "/_"
}

// AdvPublisherKey returns the key of a publisher's cache queryable,
// detection token and heartbeats: <key>/<AdvPublisherSuffix>.
func AdvPublisherKey(key, zid string, eid uint32, sequenced bool) string {
	return key + "/" + AdvPublisherSuffix(zid, eid, sequenced)
}

// AdvSubscriberToken returns a subscriber's detection token:
// <key>/@adv/sub/<zid>/<eid>/_.
func AdvSubscriberToken(key, zid string, eid uint32) string {
	return key + "/" + AdvPrefix + "/sub/" + zid + "/" + strconv.FormatUint(uint64(eid), 10) + "/_"
}

// AdvHistoryQueryKey returns what a subscriber queries at start: <key>/@adv/**.
func AdvHistoryQueryKey(key string) string { return key + "/" + AdvPrefix + "/**" }

// AdvPublishersKey returns what a subscriber watches for late publishers
// (liveliness) and heartbeats (data): <key>/@adv/pub/**.
func AdvPublishersKey(key string) string { return key + "/" + AdvPrefix + "/pub/**" }

// AdvMaxParam returns the query parameters asking a cache for its newest
// n samples: "_max=<n>".
func AdvMaxParam(n uint64) string { return "_max=" + strconv.FormatUint(n, 10) }

// AdvSNRangeParam returns "_sn=<from>..<to>"; a nil end is left open.
func AdvSNRangeParam(from, to *uint32) string {
	s := "_sn="
	if from != nil {
		s += strconv.FormatUint(uint64(*from), 10)
	}
	s += ".."
	if to != nil {
		s += strconv.FormatUint(uint64(*to), 10)
	}
	return s
}

// AdvToken is the parse of an advanced pub/sub key
// "<key>/@adv/<pub|sub>/<zid>/<eid|uhlc>/<meta…>".
type AdvToken struct {
	Key       string // the topic's data key
	Publisher bool   // "pub" (else "sub")
	ZID       string
	EID       uint32 // when Sequenced
	Sequenced bool   // false for "uhlc"
	Meta      string // "_" when none
}

// ParseAdvKey parses a publisher or subscriber detection token, or a
// heartbeat key, as zenoh-ext's
// "${remaining:**}/@adv/${entity:*}/${zid:*}/${eid:*}/${meta:**}" does.
func ParseAdvKey(k string) (AdvToken, error) {
	i := strings.LastIndex(k, "/"+AdvPrefix+"/")
	if i <= 0 {
		return AdvToken{}, fmt.Errorf("ros: %q is not an advanced pub/sub key", k)
	}
	t := AdvToken{Key: k[:i]}
	rest := strings.SplitN(k[i+len(AdvPrefix)+2:], "/", 4)
	if len(rest) < 4 || rest[0] == "" || rest[1] == "" || rest[2] == "" || rest[3] == "" {
		return AdvToken{}, fmt.Errorf("ros: advanced pub/sub key %q: want <key>/@adv/<pub|sub>/<zid>/<eid>/<meta>", k)
	}
	switch rest[0] {
	case "pub":
		t.Publisher = true
	case "sub":
	default:
		return AdvToken{}, fmt.Errorf("ros: advanced pub/sub key %q: entity %q", k, rest[0])
	}
	t.ZID, t.Meta = rest[1], rest[3]
	if rest[2] != "uhlc" {
		n, err := parseUnsigned(rest[2])
		if err != nil || n > 0xffffffff {
			return AdvToken{}, fmt.Errorf("ros: advanced pub/sub key %q: entity id %q", k, rest[2])
		}
		t.EID, t.Sequenced = uint32(n), true
	}
	return t, nil
}

// HeartbeatPayload encodes a heartbeat: the last sequence number sent, as
// zenoh-ext serializes a u32 (4 bytes little endian).
func HeartbeatPayload(sn uint32) []byte { return binary.LittleEndian.AppendUint32(nil, sn) }

// ParseHeartbeat decodes a heartbeat payload (exactly 4 bytes, as
// z_deserialize requires).
func ParseHeartbeat(b []byte) (uint32, error) {
	if len(b) != 4 {
		return 0, errors.New("ros: heartbeat payload is not 4 bytes")
	}
	return binary.LittleEndian.Uint32(b), nil
}

// LegacyCacheKey returns the queryable key of a transient-local
// publisher's PublicationCache in the first rmw_zenoh releases:
// "<zid>/<key>".
func LegacyCacheKey(zid, key string) string { return zid + "/" + key }

// LegacyHistoryQueryKey returns what a transient-local subscriber of the
// first releases queries at start: "*/<key>".
func LegacyHistoryQueryKey(key string) string { return "*/" + key }
