package bag

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"github.com/nros-go/nros/msg"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"go.yaml.in/yaml/v3"
)

// WriterOptions configures a bag Writer.
type WriterOptions struct {
	// Storage is StorageMCAP (the default, as rosbag2 since Iron) or
	// StorageSQLite3.
	Storage string
	// MaxBagDuration starts a new storage file when the current one spans
	// more than this (0: never).
	MaxBagDuration time.Duration
	// MaxBagSize starts a new storage file when the current one has grown
	// past this many bytes (0: never).
	MaxBagSize int64
	// ROSDistro is written as the metadata's ros_distro.
	ROSDistro string
	// MCAPChunkSize is the MCAP chunk size in bytes (default 768 KiB, as
	// rosbag2); chunks are zstd-compressed and carry a CRC.
	MCAPChunkSize int64
}

// Writer writes a rosbag2 bag: a directory with storage files and, when
// closed, a metadata.yaml of version MetadataVersion. Its methods must be
// called from one goroutine.
//
// Beside each type it stores the type's definition (an MCAP ros2msg
// schema, a sqlite3 message_definitions row) as rosbag2 does, taken from
// the generated Go type (msg.Definition): the program must link the
// type's package (nros gen output included; the nros command links every
// package nros-go ships). Other types get an empty definition, which
// readers that play raw bytes accept.
type Writer struct {
	dir    string
	base   string
	opts   WriterOptions
	topics []*writerTopic
	byName map[string]*writerTopic
	file   storageWriter
	files  []FileInfo
	// the current file
	cur      FileInfo
	curFirst int64
	curLast  int64
	closed   bool
}

type writerTopic struct {
	Topic
	id    int
	count uint64
}

// storageWriter is one storage file being written.
type storageWriter interface {
	addTopic(id int, t *Topic) error
	write(id int, t int64, data []byte) error
	size() int64
	close(meta []byte) error
}

// Create makes a new bag in dir, which must not exist yet (as rosbag2).
func Create(dir string, opts WriterOptions) (*Writer, error) {
	switch opts.Storage {
	case "":
		opts.Storage = StorageMCAP
	case StorageMCAP, StorageSQLite3:
	default:
		return nil, fmt.Errorf("storage %q: want %s or %s", opts.Storage, StorageMCAP, StorageSQLite3)
	}
	if opts.MCAPChunkSize <= 0 {
		opts.MCAPChunkSize = 768 << 10
	}
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("%s already exists", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &Writer{dir: dir, base: filepath.Base(filepath.Clean(dir)), opts: opts, byName: map[string]*writerTopic{}}
	if err := w.openFile(); err != nil {
		return nil, err
	}
	return w, nil
}

// Dir returns the bag directory.
func (w *Writer) Dir() string { return w.dir }

func (w *Writer) openFile() error {
	ext := ".mcap"
	if w.opts.Storage == StorageSQLite3 {
		ext = ".db3"
	}
	name := fmt.Sprintf("%s_%d%s", w.base, len(w.files), ext)
	path := filepath.Join(w.dir, name)
	var err error
	if w.opts.Storage == StorageSQLite3 {
		w.file, err = newSQLiteWriter(path, w.opts.ROSDistro)
	} else {
		w.file, err = newMCAPWriter(path, w.opts.MCAPChunkSize)
	}
	if err != nil {
		return err
	}
	w.cur = FileInfo{Path: name}
	for i, t := range w.topics {
		if err := w.file.addTopic(i+1, &t.Topic); err != nil {
			return err
		}
	}
	return nil
}

// AddTopic declares a topic (rosbag2 lists declared topics even when they
// got no message). Declaring a topic twice changes nothing.
func (w *Writer) AddTopic(t Topic) error {
	if w.closed {
		return errors.New("bag: writer closed")
	}
	if _, ok := w.byName[t.Name]; ok {
		return nil
	}
	if t.SerializationFormat == "" {
		t.SerializationFormat = "cdr"
	}
	wt := &writerTopic{Topic: t, id: len(w.topics) + 1}
	w.topics = append(w.topics, wt)
	w.byName[t.Name] = wt
	return w.file.addTopic(len(w.topics), &wt.Topic)
}

// Write adds a message on a declared topic, received at time t (ns since
// the epoch, or ROS time).
func (w *Writer) Write(topic string, t int64, data []byte) error {
	if w.closed {
		return errors.New("bag: writer closed")
	}
	wt, ok := w.byName[topic]
	if !ok {
		return fmt.Errorf("bag: topic %q was not added", topic)
	}
	if w.cur.MessageCount > 0 && (w.opts.MaxBagDuration > 0 && time.Duration(t-w.curFirst) > w.opts.MaxBagDuration ||
		w.opts.MaxBagSize > 0 && w.file.size() >= w.opts.MaxBagSize) {
		if err := w.split(); err != nil {
			return err
		}
	}
	if err := w.file.write(wt.id, t, data); err != nil {
		return err
	}
	wt.count++
	if w.cur.MessageCount == 0 || t < w.curFirst {
		w.curFirst = t
	}
	if w.cur.MessageCount == 0 || t > w.curLast {
		w.curLast = t
	}
	w.cur.MessageCount++
	return nil
}

// split closes the current file and opens the next.
func (w *Writer) split() error {
	if err := w.closeFile(); err != nil {
		return err
	}
	return w.openFile()
}

func (w *Writer) closeFile() error {
	if w.cur.MessageCount > 0 {
		w.cur.StartingTime = w.curFirst
		w.cur.Duration = time.Duration(w.curLast - w.curFirst)
	} else {
		w.cur.StartingTime = NoMessagesTime
	}
	w.files = append(w.files, w.cur)
	meta, err := w.metadataYAML(false)
	if err != nil {
		return err
	}
	return w.file.close(meta)
}

// Close finishes the storage file and writes metadata.yaml.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.closeFile()
	meta, merr := w.metadataYAML(true)
	if merr != nil {
		return merr
	}
	if werr := os.WriteFile(filepath.Join(w.dir, MetadataFile), meta, 0o644); err == nil {
		err = werr
	}
	return err
}

// Metadata returns what metadata.yaml says (or will say) of the bag.
func (w *Writer) Metadata() *Metadata {
	m := &Metadata{Version: MetadataVersion, StorageIdentifier: w.opts.Storage, ROSDistro: w.opts.ROSDistro,
		StartingTime: NoMessagesTime}
	var first, last int64 = math.MaxInt64, math.MinInt64
	files := w.files
	if !w.closed {
		files = append(files[:len(files):len(files)], w.cur)
	}
	for _, f := range files {
		m.RelativeFilePaths = append(m.RelativeFilePaths, f.Path)
		m.Files = append(m.Files, f)
		if f.MessageCount > 0 {
			m.MessageCount += f.MessageCount
			first = min(first, f.StartingTime)
			last = max(last, f.StartingTime+int64(f.Duration))
		}
	}
	if m.MessageCount > 0 {
		m.StartingTime, m.Duration = first, time.Duration(last-first)
	}
	for _, t := range w.topics {
		m.Topics = append(m.Topics, TopicInfo{Topic: t.Topic, MessageCount: t.count})
	}
	return m
}

// metadataYAML renders the metadata as rosbag2 writes it: with the
// rosbag2_bagfile_information root for metadata.yaml, without it for the
// copy embedded in a storage file.
func (w *Writer) metadataYAML(root bool) ([]byte, error) {
	return MarshalMetadata(w.Metadata(), root)
}

// Output documents of MarshalMetadata, in rosbag2's key order.
type (
	outDuration struct {
		Nanoseconds int64 `yaml:"nanoseconds"`
	}
	outTime struct {
		NanosecondsSinceEpoch int64 `yaml:"nanoseconds_since_epoch"`
	}
	outQoS struct {
		History                      string  `yaml:"history"`
		Depth                        int     `yaml:"depth"`
		Reliability                  string  `yaml:"reliability"`
		Durability                   string  `yaml:"durability"`
		Deadline                     outSecs `yaml:"deadline"`
		Lifespan                     outSecs `yaml:"lifespan"`
		Liveliness                   string  `yaml:"liveliness"`
		LivelinessLeaseDuration      outSecs `yaml:"liveliness_lease_duration"`
		AvoidROSNamespaceConventions bool    `yaml:"avoid_ros_namespace_conventions"`
	}
	outSecs struct {
		Sec  int64 `yaml:"sec"`
		Nsec int64 `yaml:"nsec"`
	}
	outTopic struct {
		Name                string   `yaml:"name"`
		Type                string   `yaml:"type"`
		SerializationFormat string   `yaml:"serialization_format"`
		OfferedQoSProfiles  []outQoS `yaml:"offered_qos_profiles"`
		TypeDescriptionHash string   `yaml:"type_description_hash"`
	}
	outTopicInfo struct {
		TopicMetadata outTopic `yaml:"topic_metadata"`
		MessageCount  uint64   `yaml:"message_count"`
	}
	outFile struct {
		Path         string      `yaml:"path"`
		StartingTime outTime     `yaml:"starting_time"`
		Duration     outDuration `yaml:"duration"`
		MessageCount uint64      `yaml:"message_count"`
	}
	outInfo struct {
		Version           int               `yaml:"version"`
		StorageIdentifier string            `yaml:"storage_identifier"`
		Duration          outDuration       `yaml:"duration"`
		StartingTime      outTime           `yaml:"starting_time"`
		MessageCount      uint64            `yaml:"message_count"`
		Topics            []outTopicInfo    `yaml:"topics_with_message_count"`
		CompressionFormat string            `yaml:"compression_format"`
		CompressionMode   string            `yaml:"compression_mode"`
		RelativeFilePaths []string          `yaml:"relative_file_paths"`
		Files             []outFile         `yaml:"files"`
		CustomData        map[string]string `yaml:"custom_data"`
		ROSDistro         string            `yaml:"ros_distro"`
	}
)

// qosDurationOut writes a duration as rosbag2 does; 0 (infinite) is
// INT64_MAX nanoseconds.
func qosDurationOut(d time.Duration) outSecs {
	if d <= 0 {
		return outSecs{9223372036, 854775807}
	}
	return outSecs{int64(d / time.Second), int64(d % time.Second)}
}

func qosOut(ps []QoSProfile) []outQoS {
	out := []outQoS{}
	for _, p := range ps {
		out = append(out, outQoS{History: p.History, Depth: p.Depth, Reliability: p.Reliability, Durability: p.Durability,
			Deadline: qosDurationOut(p.Deadline), Lifespan: qosDurationOut(p.Lifespan), Liveliness: p.Liveliness,
			LivelinessLeaseDuration: qosDurationOut(p.LivelinessLeaseDuration), AvoidROSNamespaceConventions: p.AvoidROSNamespaceConventions})
	}
	return out
}

// MarshalQoSProfiles renders QoS profiles as rosbag2 (Jazzy) stores them
// in storage files: a YAML list of maps with the policies' names.
func MarshalQoSProfiles(ps []QoSProfile) string {
	if len(ps) == 0 {
		return ""
	}
	b, err := yaml.Marshal(qosOut(ps))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

// MarshalMetadata renders m as a version-9 metadata.yaml document (with
// its rosbag2_bagfile_information root when root is true, as rosbag2
// embeds it in storage files otherwise).
func MarshalMetadata(m *Metadata, root bool) ([]byte, error) {
	info := outInfo{
		Version:           MetadataVersion,
		StorageIdentifier: m.StorageIdentifier,
		Duration:          outDuration{int64(m.Duration)},
		StartingTime:      outTime{m.StartingTime},
		MessageCount:      m.MessageCount,
		Topics:            []outTopicInfo{},
		CompressionFormat: m.CompressionFormat,
		CompressionMode:   m.CompressionMode,
		RelativeFilePaths: m.RelativeFilePaths,
		CustomData:        m.CustomData,
		ROSDistro:         m.ROSDistro,
	}
	for _, t := range m.Topics {
		info.Topics = append(info.Topics, outTopicInfo{TopicMetadata: outTopic{Name: t.Topic.Name, Type: t.Topic.Type,
			SerializationFormat: t.Topic.SerializationFormat, OfferedQoSProfiles: qosOut(t.Topic.OfferedQoSProfiles),
			TypeDescriptionHash: t.Topic.TypeDescriptionHash}, MessageCount: t.MessageCount})
	}
	for _, f := range m.Files {
		info.Files = append(info.Files, outFile{Path: f.Path, StartingTime: outTime{f.StartingTime},
			Duration: outDuration{int64(f.Duration)}, MessageCount: f.MessageCount})
	}
	var doc any = info
	if root {
		doc = map[string]outInfo{"rosbag2_bagfile_information": info}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// mcapWriter writes one MCAP file as rosbag2's MCAP plugin does: profile
// "ros2", a ros2msg schema per type, a cdr channel per topic with the
// offered QoS profiles in its metadata, zstd chunks with CRCs, a summary,
// and the bag's metadata as a "rosbag2" metadata record.
type mcapWriter struct {
	f       *os.File
	w       *mcap.Writer
	schemas map[string]uint16
	seq     uint32
}

func newMCAPWriter(path string, chunk int64) (*mcapWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	w, err := mcap.NewWriter(f, &mcap.WriterOptions{Chunked: true, ChunkSize: chunk, Compression: mcap.CompressionZSTD, IncludeCRC: true})
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := w.WriteHeader(&mcap.Header{Profile: "ros2", Library: "nros-go"}); err != nil {
		f.Close()
		return nil, err
	}
	return &mcapWriter{f: f, w: w, schemas: map[string]uint16{}}, nil
}

func (m *mcapWriter) addTopic(id int, t *Topic) error {
	if id > math.MaxUint16 {
		return errors.New("bag: too many topics for MCAP")
	}
	sid, ok := m.schemas[t.Type]
	if !ok {
		sid = uint16(len(m.schemas) + 1)
		m.schemas[t.Type] = sid
		// The definition as rosbag2 stores it, for a generated type the
		// program links (msg.Definition); an empty ros2msg schema
		// otherwise, which readers that play raw bytes accept.
		def, _ := msg.Definition(t.Type)
		if err := m.w.WriteSchema(&mcap.Schema{ID: sid, Name: t.Type, Encoding: "ros2msg", Data: []byte(def)}); err != nil {
			return err
		}
	}
	return m.w.WriteChannel(&mcap.Channel{ID: uint16(id), SchemaID: sid, Topic: t.Name, MessageEncoding: t.SerializationFormat,
		Metadata: map[string]string{"offered_qos_profiles": MarshalQoSProfiles(t.OfferedQoSProfiles), "topic_type_hash": t.TypeDescriptionHash}})
}

func (m *mcapWriter) write(id int, t int64, data []byte) error {
	m.seq++
	ts := uint64(max(t, 0))
	return m.w.WriteMessage(&mcap.Message{ChannelID: uint16(id), Sequence: m.seq, LogTime: ts, PublishTime: ts, Data: data})
}

func (m *mcapWriter) size() int64 { return int64(m.w.Offset()) }

func (m *mcapWriter) close(meta []byte) error {
	err := m.w.WriteMetadata(&mcap.Metadata{Name: "rosbag2", Metadata: map[string]string{"serialized_metadata": string(meta)}})
	if cerr := m.w.Close(); err == nil {
		err = cerr
	}
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// sqliteWriter writes one .db3 file with rosbag2's current schema
// (version 4: schema, metadata, topics, message_definitions, messages).
type sqliteWriter struct {
	db      *sql.DB
	tx      *sql.Tx
	ins     *sql.Stmt
	pending int
	path    string
	defined map[string]bool // types with a message_definitions row
}

const sqliteSchema = `
PRAGMA journal_mode=MEMORY;
PRAGMA synchronous=OFF;
CREATE TABLE schema(schema_version INTEGER PRIMARY KEY,ros_distro TEXT NOT NULL);
CREATE TABLE metadata(id INTEGER PRIMARY KEY,metadata_version INTEGER NOT NULL,metadata TEXT NOT NULL);
CREATE TABLE topics(id INTEGER PRIMARY KEY,name TEXT NOT NULL,type TEXT NOT NULL,serialization_format TEXT NOT NULL,offered_qos_profiles TEXT NOT NULL,type_description_hash TEXT NOT NULL);
CREATE TABLE message_definitions(id INTEGER PRIMARY KEY,topic_type TEXT NOT NULL,encoding TEXT NOT NULL,encoded_message_definition TEXT NOT NULL,type_description_hash TEXT NOT NULL);
CREATE TABLE messages(id INTEGER PRIMARY KEY,topic_id INTEGER NOT NULL,timestamp INTEGER NOT NULL, data BLOB NOT NULL);
CREATE INDEX timestamp_idx ON messages (timestamp ASC);
`

func newSQLiteWriter(path, distro string) (*sqliteWriter, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("%s already exists", path)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(sqliteSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := db.Exec("INSERT INTO schema VALUES (4, ?)", distro); err != nil {
		db.Close()
		return nil, err
	}
	s := &sqliteWriter{db: db, path: path, defined: map[string]bool{}}
	if err := s.begin(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *sqliteWriter) begin() error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	ins, err := tx.Prepare("INSERT INTO messages (topic_id, timestamp, data) VALUES (?, ?, ?)")
	if err != nil {
		tx.Rollback()
		return err
	}
	s.tx, s.ins = tx, ins
	return nil
}

func (s *sqliteWriter) commit() error {
	s.ins.Close()
	err := s.tx.Commit()
	s.tx, s.ins, s.pending = nil, nil, 0
	return err
}

func (s *sqliteWriter) addTopic(id int, t *Topic) error {
	_, err := s.tx.Exec("INSERT INTO topics VALUES (?, ?, ?, ?, ?, ?)", id, t.Name, t.Type, t.SerializationFormat,
		MarshalQoSProfiles(t.OfferedQoSProfiles), t.TypeDescriptionHash)
	if err != nil || s.defined[t.Type] {
		return err
	}
	// One message_definitions row per type, as rosbag2 writes it (an
	// empty definition for a type the program does not link).
	s.defined[t.Type] = true
	def, _ := msg.Definition(t.Type)
	_, err = s.tx.Exec("INSERT INTO message_definitions (topic_type, encoding, encoded_message_definition, type_description_hash) VALUES (?, ?, ?, ?)",
		t.Type, "ros2msg", def, t.TypeDescriptionHash)
	return err
}

func (s *sqliteWriter) write(id int, t int64, data []byte) error {
	if _, err := s.ins.Exec(id, t, data); err != nil {
		return err
	}
	// Commit in batches: one transaction per message would be slow.
	if s.pending++; s.pending >= 1000 {
		if err := s.commit(); err != nil {
			return err
		}
		return s.begin()
	}
	return nil
}

func (s *sqliteWriter) size() int64 {
	var n int64
	if st, err := os.Stat(s.path); err == nil {
		n = st.Size()
	}
	return n
}

func (s *sqliteWriter) close(meta []byte) error {
	_, err := s.tx.Exec("INSERT INTO metadata (metadata_version, metadata) VALUES (?, ?)", MetadataVersion, string(meta))
	if cerr := s.commit(); err == nil {
		err = cerr
	}
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	return err
}
