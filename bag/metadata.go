package bag

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// MetadataVersion is the metadata.yaml version this package writes (the
// version of Jazzy and later). Versions 4 to 9 are read.
const MetadataVersion = 9

// maxMetadataSize bounds the metadata documents read (metadata.yaml and the
// serialized copies embedded in storage files). The largest real ones are a
// few hundred KiB (thousands of topics).
const maxMetadataSize = 16 << 20

// NoMessagesTime is the starting time rosbag2 writes for a bag with no
// messages (INT64_MAX nanoseconds).
const NoMessagesTime = math.MaxInt64

// Metadata is the content of a bag's metadata.yaml
// (`rosbag2_bagfile_information`), or of the copy of it that rosbag2 embeds
// in a storage file.
//
// It is what the writer said when it closed the bag, which is not always
// what the files hold (see Bag.Stats for figures taken from the messages).
type Metadata struct {
	// Version is the metadata version (4: Foxy and Galactic, 5: Humble, 6-8:
	// rolling before Jazzy, 7: Iron, 9: Jazzy and later).
	Version int
	// StorageIdentifier is the storage plugin: "sqlite3" or "mcap".
	StorageIdentifier string
	// RelativeFilePaths lists the storage files relative to the bag
	// directory, in the order they were written.
	RelativeFilePaths []string
	// Files is the per-file information of version 5 and later.
	Files []FileInfo
	// StartingTime is the receive time of the first message, ns since the
	// Unix epoch (NoMessagesTime for a bag with no messages).
	StartingTime int64
	// Duration is the time from the first to the last message.
	Duration time.Duration
	// MessageCount is the number of messages.
	MessageCount uint64
	// Topics lists the topics with their message counts.
	Topics []TopicInfo
	// CompressionFormat is "" or "zstd".
	CompressionFormat string
	// CompressionMode is "" (or "none"), "file" or "message".
	CompressionMode string
	// CustomData holds the user's key/value pairs (version 6 and later).
	CustomData map[string]string
	// ROSDistro is the distribution that wrote the bag (version 8 and later).
	ROSDistro string
}

// FileInfo describes one storage file of a bag (metadata version 5 and
// later).
type FileInfo struct {
	// Path is relative to the bag directory.
	Path string
	// StartingTime is the receive time of the file's first message.
	StartingTime int64
	// Duration is the time from the file's first to its last message.
	Duration time.Duration
	// MessageCount is the number of messages in the file.
	MessageCount uint64
}

// TopicInfo is a topic and its message count as metadata.yaml lists them.
type TopicInfo struct {
	Topic        Topic
	MessageCount uint64
}

// Topic describes a recorded topic.
type Topic struct {
	// Name is the topic name as recorded ("/clock", or relative as "AAA").
	Name string
	// Type is the ROS type name ("rosgraph_msgs/msg/Clock").
	Type string
	// SerializationFormat is the encoding of the recorded bytes ("cdr").
	SerializationFormat string
	// OfferedQoSProfiles are the QoS profiles of the publishers the
	// recorder saw (possibly none).
	OfferedQoSProfiles []QoSProfile
	// TypeDescriptionHash is the RIHS type hash (metadata version 7 and
	// later; "" when unknown).
	TypeDescriptionHash string
}

// QoSProfile is a recorded QoS profile, with the policy names of
// metadata.yaml version 9 whatever the version it was read from.
type QoSProfile struct {
	// History is "system_default", "keep_last", "keep_all" or "unknown".
	History string
	// Depth is the keep-last depth (0 when not known).
	Depth int
	// Reliability is "system_default", "reliable", "best_effort",
	// "unknown" or "best_available".
	Reliability string
	// Durability is "system_default", "transient_local", "volatile",
	// "unknown" or "best_available".
	Durability string
	// Deadline is the deadline period; 0 means none (infinite).
	Deadline time.Duration
	// Lifespan is the sample lifespan; 0 means infinite.
	Lifespan time.Duration
	// Liveliness is "system_default", "automatic", "manual_by_node",
	// "manual_by_topic", "unknown" or "best_available".
	Liveliness string
	// LivelinessLeaseDuration is the liveliness lease; 0 means infinite.
	LivelinessLeaseDuration time.Duration
	// AvoidROSNamespaceConventions is the rmw flag of that name.
	AvoidROSNamespaceConventions bool
}

// The YAML documents as written. Scalars that writers have spelled in
// more than one way are taken as nodes and converted by hand.

type yamlDuration struct {
	Nanoseconds int64 `yaml:"nanoseconds"`
}

type yamlTime struct {
	NanosecondsSinceEpoch int64 `yaml:"nanoseconds_since_epoch"`
}

type yamlTopic struct {
	Name                string    `yaml:"name"`
	Type                string    `yaml:"type"`
	SerializationFormat string    `yaml:"serialization_format"`
	OfferedQoSProfiles  yaml.Node `yaml:"offered_qos_profiles"`
	TypeDescriptionHash string    `yaml:"type_description_hash"`
}

type yamlTopicCount struct {
	TopicMetadata yamlTopic `yaml:"topic_metadata"`
	MessageCount  uint64    `yaml:"message_count"`
}

type yamlFile struct {
	Path         string       `yaml:"path"`
	StartingTime yamlTime     `yaml:"starting_time"`
	Duration     yamlDuration `yaml:"duration"`
	MessageCount uint64       `yaml:"message_count"`
}

type yamlInfo struct {
	Version           int               `yaml:"version"`
	StorageIdentifier string            `yaml:"storage_identifier"`
	RelativeFilePaths []string          `yaml:"relative_file_paths"`
	Duration          yamlDuration      `yaml:"duration"`
	StartingTime      yamlTime          `yaml:"starting_time"`
	MessageCount      uint64            `yaml:"message_count"`
	Topics            []yamlTopicCount  `yaml:"topics_with_message_count"`
	CompressionFormat string            `yaml:"compression_format"`
	CompressionMode   string            `yaml:"compression_mode"`
	Files             []yamlFile        `yaml:"files"`
	CustomData        map[string]string `yaml:"custom_data"`
	ROSDistro         string            `yaml:"ros_distro"`
}

// ParseMetadata parses a metadata.yaml document, with or without its
// `rosbag2_bagfile_information` root (rosbag2 embeds it without), of
// versions 4 to 9.
//
// Documents over maxMetadataSize (16 MiB) are refused. Large documents in
// the block layout that writers use are read a piece at a time (the topic,
// file and path lists a few entries at a time), so that the memory used is
// a small multiple of the document's size; the YAML library builds a tree
// of the whole document otherwise, some 40 times its size.
func ParseMetadata(data []byte) (*Metadata, error) {
	if len(data) > maxMetadataSize {
		return nil, fmt.Errorf("metadata: %d bytes is over the %d MiB limit", len(data), maxMetadataSize>>20)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("metadata: empty document")
	}
	var m *Metadata
	var err error
	if len(data) >= piecewiseMin {
		m, err = parseMetadataPiecewise(data)
	}
	if m == nil && err == nil { // small, or not in a layout read piecewise
		if len(data) > maxWholeMetadata && len(data) >= piecewiseMin {
			return nil, fmt.Errorf("metadata: %d bytes in a layout too large to read (only the block layout is read above %d KiB)",
				len(data), maxWholeMetadata>>10)
		}
		m, err = parseMetadataWhole(data)
	}
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	if m.Version == 0 && m.StorageIdentifier == "" && len(m.Topics) == 0 && len(m.RelativeFilePaths) == 0 {
		return nil, errors.New("metadata: not a rosbag2 metadata document")
	}
	return m, nil
}

// parseMetadataWhole parses a document at once, into one YAML tree.
func parseMetadataWhole(data []byte) (*Metadata, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	n := &doc
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		root := doc.Content[0].Content
		found := false
		for i := 0; i+1 < len(root); i += 2 {
			if k := root[i]; k.Kind == yaml.ScalarNode && k.Value == "rosbag2_bagfile_information" {
				if found {
					return nil, fmt.Errorf("line %d: rosbag2_bagfile_information defined twice", k.Line)
				}
				n, found = root[i+1], true
			}
		}
	}
	var info yamlInfo
	if err := n.Decode(&info); err != nil {
		return nil, err
	}
	return info.metadata()
}

// metadata converts the document as decoded.
func (info *yamlInfo) metadata() (*Metadata, error) {
	if info.Duration.Nanoseconds < 0 {
		return nil, fmt.Errorf("negative duration %d ns", info.Duration.Nanoseconds)
	}
	m := &Metadata{
		Version:           info.Version,
		StorageIdentifier: info.StorageIdentifier,
		RelativeFilePaths: info.RelativeFilePaths,
		StartingTime:      info.StartingTime.NanosecondsSinceEpoch,
		Duration:          time.Duration(info.Duration.Nanoseconds),
		MessageCount:      info.MessageCount,
		CompressionFormat: info.CompressionFormat,
		CompressionMode:   info.CompressionMode,
		CustomData:        info.CustomData,
		ROSDistro:         info.ROSDistro,
	}
	var err error
	if m.Files, err = appendFiles(nil, info.Files); err != nil {
		return nil, err
	}
	if m.Topics, err = appendTopics(nil, info.Topics); err != nil {
		return nil, err
	}
	return m, nil
}

func appendFiles(dst []FileInfo, files []yamlFile) ([]FileInfo, error) {
	for _, f := range files {
		if f.Duration.Nanoseconds < 0 {
			return nil, fmt.Errorf("file %q: negative duration", f.Path)
		}
		dst = append(dst, FileInfo{Path: f.Path, StartingTime: f.StartingTime.NanosecondsSinceEpoch,
			Duration: time.Duration(f.Duration.Nanoseconds), MessageCount: f.MessageCount})
	}
	return dst, nil
}

func appendTopics(dst []TopicInfo, topics []yamlTopicCount) ([]TopicInfo, error) {
	for _, t := range topics {
		qos, err := parseQoSNode(&t.TopicMetadata.OfferedQoSProfiles)
		if err != nil {
			return nil, fmt.Errorf("topic %q: offered_qos_profiles: %w", t.TopicMetadata.Name, err)
		}
		dst = append(dst, TopicInfo{
			Topic: Topic{
				Name:                t.TopicMetadata.Name,
				Type:                t.TopicMetadata.Type,
				SerializationFormat: t.TopicMetadata.SerializationFormat,
				OfferedQoSProfiles:  qos,
				TypeDescriptionHash: t.TopicMetadata.TypeDescriptionHash,
			},
			MessageCount: t.MessageCount,
		})
	}
	return dst, nil
}

// ParseQoSProfiles parses recorded QoS profiles as rosbag2 stores them: a
// YAML list of maps, with integer policy values (metadata version 8 and
// earlier, and the storage files' own copies) or names (version 9). An
// empty string is no profiles.
func ParseQoSProfiles(s string) ([]QoSProfile, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if len(s) > maxMetadataSize {
		return nil, errors.New("QoS profiles too large")
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil {
		return nil, err
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		if c := n.Content[0]; c.Kind == yaml.SequenceNode {
			return parseQoSNode(c)
		}
		if c := n.Content[0]; c.Kind == yaml.ScalarNode && c.Tag == "!!null" {
			return nil, nil
		}
	}
	return nil, errors.New("want a list of profiles")
}

// parseQoSNode reads offered_qos_profiles: a string holding YAML (<= 8) or
// the list itself (9).
func parseQoSNode(n *yaml.Node) ([]QoSProfile, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nil
		}
		return parseQoSNode(n.Alias)
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, nil
		}
		return ParseQoSProfiles(n.Value)
	case yaml.SequenceNode:
	default:
		return nil, errors.New("want a list of profiles")
	}
	var raw []map[string]yaml.Node
	if err := n.Decode(&raw); err != nil {
		return nil, err
	}
	out := make([]QoSProfile, 0, len(raw))
	for i, p := range raw {
		q, err := qosFromMap(p)
		if err != nil {
			return nil, fmt.Errorf("profile %d: %w", i, err)
		}
		out = append(out, q)
	}
	return out, nil
}

var (
	historyNames     = []string{"system_default", "keep_last", "keep_all", "unknown"}
	reliabilityNames = []string{"system_default", "reliable", "best_effort", "unknown", "best_available"}
	durabilityNames  = []string{"system_default", "transient_local", "volatile", "unknown", "best_available"}
	livelinessNames  = []string{"system_default", "automatic", "manual_by_node", "manual_by_topic", "unknown", "best_available"}
)

func qosFromMap(p map[string]yaml.Node) (QoSProfile, error) {
	q := QoSProfile{History: "system_default", Reliability: "system_default",
		Durability: "system_default", Liveliness: "system_default"}
	var err error
	enum := func(key string, names []string, dst *string) {
		n, ok := p[key]
		if !ok || err != nil {
			return
		}
		*dst, err = policyName(&n, names)
		if err != nil {
			err = fmt.Errorf("%s: %w", key, err)
		}
	}
	enum("history", historyNames, &q.History)
	enum("reliability", reliabilityNames, &q.Reliability)
	enum("durability", durabilityNames, &q.Durability)
	enum("liveliness", livelinessNames, &q.Liveliness)
	dur := func(key string, dst *time.Duration) {
		n, ok := p[key]
		if !ok || err != nil {
			return
		}
		*dst, err = qosDuration(&n)
		if err != nil {
			err = fmt.Errorf("%s: %w", key, err)
		}
	}
	dur("deadline", &q.Deadline)
	dur("lifespan", &q.Lifespan)
	dur("liveliness_lease_duration", &q.LivelinessLeaseDuration)
	if n, ok := p["depth"]; ok && err == nil {
		var d uint64
		if e := n.Decode(&d); e != nil {
			return q, fmt.Errorf("depth: %w", e)
		}
		q.Depth = int(min(d, math.MaxInt32))
	}
	if n, ok := p["avoid_ros_namespace_conventions"]; ok && err == nil {
		if e := n.Decode(&q.AvoidROSNamespaceConventions); e != nil {
			return q, fmt.Errorf("avoid_ros_namespace_conventions: %w", e)
		}
	}
	return q, err
}

// policyName maps an integer (<= 8) or a name (9) to the policy's name.
func policyName(n *yaml.Node, names []string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", errors.New("want a scalar")
	}
	v := strings.ToLower(strings.TrimSpace(n.Value))
	if i, err := strconv.Atoi(v); err == nil {
		if i < 0 || i >= len(names) {
			return "unknown", nil
		}
		return names[i], nil
	}
	for _, s := range names {
		if v == s {
			return s, nil
		}
	}
	return "", fmt.Errorf("unknown policy %q", n.Value)
}

// qosDuration reads {sec, nsec}. Both spellings of "infinite" that rosbag2
// has written (INT64_MAX ns, and Foxy's {2147483647, 4294967295}) and the
// zero "default" become 0.
func qosDuration(n *yaml.Node) (time.Duration, error) {
	var d struct {
		Sec  int64  `yaml:"sec"`
		Nsec uint64 `yaml:"nsec"`
	}
	if err := n.Decode(&d); err != nil {
		return 0, err
	}
	if d.Sec < 0 {
		return 0, fmt.Errorf("negative duration %d s", d.Sec)
	}
	if d.Sec >= math.MaxInt32 {
		return 0, nil
	}
	// d.Sec < 2^31, so this cannot overflow.
	ns := d.Sec*1e9 + int64(min(d.Nsec, 1<<62))
	return time.Duration(ns), nil
}
