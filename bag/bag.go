package bag

import (
	"bytes"
	"container/heap"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/klauspost/compress/zstd"
)

// Storage identifiers, as metadata.yaml names the storage plugins.
const (
	StorageSQLite3 = "sqlite3"
	StorageMCAP    = "mcap"
)

// MetadataFile is the name of a bag directory's metadata file.
const MetadataFile = "metadata.yaml"

var (
	sqliteMagic = []byte("SQLite format 3\x00")
	zstdMagic   = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// Message is one recorded message.
type Message struct {
	// Topic is the topic it was recorded on (one of Bag.Topics).
	Topic *Topic
	// Time is the receive time the recorder stored, ns since the Unix epoch.
	Time int64
	// Data is the recorded serialized message, as published (for ROS 2:
	// CDR with its 4-byte encapsulation header). The reader does not reuse
	// it.
	Data []byte
}

// bagFile is one storage file of a bag.
type bagFile struct {
	path       string // absolute
	compressed bool   // a whole-file zstd stream
	startHint  int64  // from metadata.yaml's files: list, when given
	hasHint    bool
}

// Bag is an open bag. Its methods may be called from one goroutine at a
// time, except Topics, which is safe alongside a Reader.
type Bag struct {
	path     string
	dir      string
	meta     *Metadata // metadata.yaml, or embedded in the storage; nil if none
	fromYAML bool
	storage  string
	files    []bagFile
	msgZstd  bool // messages compressed one by one (compression_mode: message)

	mu     sync.Mutex
	topics []*Topic
	byKey  map[string]*Topic

	tmpOnce sync.Once
	tmpDir  string
	tmpErr  error
}

// Open opens a bag: a directory holding metadata.yaml and storage files, a
// directory of storage files without metadata.yaml, or a bare storage file
// (.db3 or .mcap, possibly zstd-compressed). Nothing is ever written to the
// bag; Close removes the temporary files a compressed SQLite bag needs.
func Open(path string) (*Bag, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	b := &Bag{path: path, byKey: map[string]*Topic{}}
	if !st.IsDir() {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		b.dir = filepath.Dir(abs)
		b.files = []bagFile{{path: abs, compressed: strings.HasSuffix(abs, ".zstd")}}
	} else {
		if b.dir, err = filepath.Abs(path); err != nil {
			return nil, err
		}
		if err := b.openDir(); err != nil {
			return nil, err
		}
	}
	if len(b.files) == 0 {
		return nil, fmt.Errorf("%s: no storage files (.db3, .mcap) in the bag", path)
	}
	if err := b.probeStorage(); err != nil {
		return nil, err
	}
	if b.meta != nil {
		for _, ti := range b.meta.Topics {
			b.topic(ti.Topic)
		}
		if b.meta.CompressionMode != "" && !strings.EqualFold(b.meta.CompressionMode, "none") &&
			!strings.EqualFold(b.meta.CompressionMode, "file") && !strings.EqualFold(b.meta.CompressionMode, "message") {
			return nil, fmt.Errorf("%s: unknown compression_mode %q", path, b.meta.CompressionMode)
		}
		if strings.EqualFold(b.meta.CompressionMode, "message") {
			if !strings.EqualFold(b.meta.CompressionFormat, "zstd") {
				return nil, fmt.Errorf("%s: message compression %q is not supported (only zstd)", path, b.meta.CompressionFormat)
			}
			b.msgZstd = true
		}
	}
	if !b.fromYAML {
		if err := b.storageTopics(); err != nil {
			b.Close()
			return nil, err
		}
	}
	return b, nil
}

// openDir finds the storage files of a bag directory.
func (b *Bag) openDir() error {
	m, err := readMetadataFile(filepath.Join(b.path, MetadataFile))
	if err == nil {
		b.meta, b.fromYAML = m, true
		hints := map[string]FileInfo{}
		for _, f := range m.Files {
			hints[f.Path] = f
		}
		paths := m.RelativeFilePaths
		if len(paths) == 0 {
			for _, f := range m.Files {
				paths = append(paths, f.Path)
			}
		}
		for _, rel := range paths {
			p, err := b.resolveFile(rel)
			if err != nil {
				return err
			}
			f := bagFile{path: p, compressed: strings.HasSuffix(p, ".zstd")}
			if h, ok := hints[rel]; ok && h.MessageCount > 0 && h.StartingTime != NoMessagesTime {
				f.startHint, f.hasHint = h.StartingTime, true
			}
			b.files = append(b.files, f)
		}
		if len(paths) > 0 {
			return nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// No metadata.yaml (or one that lists no file): take the storage files
	// found, in the order of their split index.
	ents, err := os.ReadDir(b.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := strings.TrimSuffix(e.Name(), ".zstd")
		if e.Type().IsRegular() && (strings.HasSuffix(n, ".db3") || strings.HasSuffix(n, ".mcap")) {
			p := filepath.Join(b.dir, e.Name())
			b.files = append(b.files, bagFile{path: p, compressed: strings.HasSuffix(p, ".zstd")})
		}
	}
	sort.SliceStable(b.files, func(i, j int) bool {
		return splitLess(filepath.Base(b.files[i].path), filepath.Base(b.files[j].path))
	})
	return nil
}

// splitLess orders "bag_2.db3" before "bag_10.db3".
func splitLess(a, b string) bool {
	ia, pa := splitIndex(a)
	ib, pb := splitIndex(b)
	if pa != pb || ia < 0 || ib < 0 {
		return a < b
	}
	return ia < ib
}

func splitIndex(name string) (int, string) {
	base := name
	for _, ext := range []string{".zstd", ".db3", ".mcap"} {
		base = strings.TrimSuffix(base, ext)
	}
	i := strings.LastIndexByte(base, '_')
	if i < 0 {
		return -1, base
	}
	n, err := strconv.Atoi(base[i+1:])
	if err != nil {
		return -1, base
	}
	return n, base[:i]
}

// resolveFile finds a file metadata.yaml lists. Some writers stored paths
// that include the bag directory's own name or an absolute path: the base
// name beside metadata.yaml is tried too.
func (b *Bag) resolveFile(rel string) (string, error) {
	if rel == "" {
		return "", errors.New("metadata.yaml lists an empty file name")
	}
	cands := []string{filepath.Join(b.dir, filepath.FromSlash(rel))}
	if filepath.IsAbs(rel) {
		cands = append([]string{rel}, cands...)
	}
	cands = append(cands, filepath.Join(b.dir, filepath.Base(filepath.FromSlash(rel))))
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c, nil
		}
	}
	return "", fmt.Errorf("metadata.yaml lists %q, which is not in %s", rel, b.path)
}

// probeStorage checks that every file is of one known format and finds
// the storage identifier.
func (b *Bag) probeStorage() error {
	for i := range b.files {
		kind, err := fileKind(b.files[i])
		if err != nil {
			return err
		}
		if b.storage == "" {
			b.storage = kind
		} else if b.storage != kind {
			return fmt.Errorf("%s: the bag mixes %s and %s files", b.path, b.storage, kind)
		}
	}
	if b.meta != nil && b.meta.StorageIdentifier != "" && b.meta.StorageIdentifier != b.storage {
		// The files are what they are; the metadata only names them.
		b.meta.StorageIdentifier = b.storage
	}
	return nil
}

// fileKind tells a storage file's format from its first bytes.
func fileKind(f bagFile) (string, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	var r io.Reader = fh
	head := make([]byte, 16)
	n, _ := io.ReadFull(r, head)
	head = head[:n]
	if bytes.HasPrefix(head, zstdMagic) {
		if _, err := fh.Seek(0, io.SeekStart); err != nil {
			return "", err
		}
		d, err := zstd.NewReader(fh, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return "", err
		}
		defer d.Close()
		head = make([]byte, 16)
		n, _ = io.ReadFull(d, head)
		head = head[:n]
	} else if f.compressed {
		return "", fmt.Errorf("%s: not a zstd file", filepath.Base(f.path))
	}
	switch {
	case bytes.HasPrefix(head, sqliteMagic):
		return StorageSQLite3, nil
	case bytes.HasPrefix(head, mcap.Magic):
		return StorageMCAP, nil
	case n == 0:
		return "", fmt.Errorf("%s: empty file", filepath.Base(f.path))
	}
	return "", fmt.Errorf("%s: neither SQLite nor MCAP", filepath.Base(f.path))
}

// storageTopics reads the topics (and embedded metadata) from the storage
// files of a bag that has no metadata.yaml.
func (b *Bag) storageTopics() error {
	for _, f := range b.files {
		if f.compressed {
			continue // read when the file is
		}
		switch b.storage {
		case StorageSQLite3:
			db, err := openSQLite(f.path)
			if err != nil {
				return err
			}
			ts, err := sqliteTopics(db)
			if err == nil && b.meta == nil {
				b.meta = sqliteMetadata(db)
			}
			db.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", filepath.Base(f.path), err)
			}
			for _, t := range ts {
				b.topic(t.topic)
			}
		case StorageMCAP:
			sum, err := mcapFileSummary(f.path)
			if err == nil && sum != nil {
				for _, ch := range sum.channels {
					b.topic(mcapTopic(ch, sum.schemas[ch.SchemaID]))
				}
				if b.meta == nil {
					b.meta = embeddedMetadata(sum.metadata)
				}
				continue
			}
			// No usable summary: scan the file for its channels. A file
			// that is cut short still opens with the channels before the
			// cut; reading it reports the cut.
			if err := b.scanMCAP(f, nil); err != nil && !b.hasTopics() {
				return err
			}
		}
	}
	return nil
}

func mcapFileSummary(path string) (*mcapSummary, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	return readMCAPSummary(fh, st.Size())
}

// scanMCAP reads a whole MCAP file, registering its topics and counting
// its messages into count (when not nil). A read error after some
// messages is returned with the counts made so far.
func (b *Bag) scanMCAP(f bagFile, count func(Message)) error {
	r, size, closer, err := openStream(f)
	if err != nil {
		return err
	}
	defer closer()
	s, err := newMCAPStream(r, size, 0, func(ch *mcap.Channel, sc *mcap.Schema) *Topic {
		return b.topic(mcapTopic(ch, sc))
	})
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(f.path), err)
	}
	defer s.close()
	for {
		m, err := s.next()
		if err == io.EOF {
			if b.meta == nil {
				b.meta = embeddedMetadata(s.metadata)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(f.path), err)
		}
		if count != nil {
			count(m)
		}
	}
}

// openStream opens a file for streaming, decompressing a zstd file on the
// fly. size is -1 when not known.
func openStream(f bagFile) (io.Reader, int64, func(), error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, 0, nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, 0, nil, err
	}
	if !f.compressed {
		return fh, st.Size(), func() { fh.Close() }, nil
	}
	d, err := zstd.NewReader(fh, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<32))
	if err != nil {
		fh.Close()
		return nil, 0, nil, err
	}
	return d, -1, func() { d.Close(); fh.Close() }, nil
}

func topicKey(name, typ string) string { return name + "\x00" + typ }

// topic returns the bag's topic for t, adding it when new. A topic seen in
// storage fills in what metadata.yaml left out.
func (b *Bag) topic(t Topic) *Topic {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := topicKey(t.Name, t.Type)
	if p, ok := b.byKey[k]; ok {
		if len(p.OfferedQoSProfiles) == 0 && len(t.OfferedQoSProfiles) > 0 {
			p.OfferedQoSProfiles = t.OfferedQoSProfiles
		}
		if p.TypeDescriptionHash == "" {
			p.TypeDescriptionHash = t.TypeDescriptionHash
		}
		if p.SerializationFormat == "" {
			p.SerializationFormat = t.SerializationFormat
		}
		return p
	}
	p := &Topic{}
	*p = t
	b.topics = append(b.topics, p)
	b.byKey[k] = p
	return p
}

func (b *Bag) hasTopics() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.topics) > 0
}

// Path returns the path the bag was opened with.
func (b *Bag) Path() string { return b.path }

// Metadata returns the bag's metadata.yaml, or the metadata embedded in its
// storage when it has none, or nil.
func (b *Bag) Metadata() *Metadata { return b.meta }

// HasMetadataFile reports whether the bag has a metadata.yaml.
func (b *Bag) HasMetadataFile() bool { return b.fromYAML }

// StorageIdentifier returns "sqlite3" or "mcap".
func (b *Bag) StorageIdentifier() string { return b.storage }

// Files returns the storage files' paths, in order.
func (b *Bag) Files() []string {
	out := make([]string, len(b.files))
	for i, f := range b.files {
		out[i] = f.path
	}
	return out
}

// Size returns the total size of the storage files in bytes.
func (b *Bag) Size() int64 {
	var n int64
	for _, f := range b.files {
		if st, err := os.Stat(f.path); err == nil {
			n += st.Size()
		}
	}
	return n
}

// Topics returns the bag's topics: those metadata.yaml lists, in its order
// (or the storage's order), then any found only in storage.
func (b *Bag) Topics() []*Topic {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*Topic(nil), b.topics...)
}

// Close removes the temporary files made while reading.
func (b *Bag) Close() error {
	if b.tmpDir != "" {
		return os.RemoveAll(b.tmpDir)
	}
	return nil
}

// sqlitePath returns a path SQLite can open for f: f itself, or its
// decompressed copy in a temporary directory (removed by the caller through
// the returned function, and by Close in any case).
func (b *Bag) sqlitePath(f bagFile) (string, func(), error) {
	if !f.compressed {
		return f.path, func() {}, nil
	}
	b.tmpOnce.Do(func() { b.tmpDir, b.tmpErr = os.MkdirTemp("", "nros-bag-") })
	if b.tmpErr != nil {
		return "", nil, b.tmpErr
	}
	out, err := os.CreateTemp(b.tmpDir, "*.db3")
	if err != nil {
		return "", nil, err
	}
	rm := func() { os.Remove(out.Name()) }
	r, _, closer, err := openStream(f)
	if err != nil {
		out.Close()
		rm()
		return "", nil, err
	}
	defer closer()
	_, err = io.Copy(out, r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		rm()
		return "", nil, fmt.Errorf("%s: decompress: %w", filepath.Base(f.path), err)
	}
	return out.Name(), rm, nil
}

// Stats is what a bag holds, counted from its storage files (not copied
// from metadata.yaml, which may be wrong).
type Stats struct {
	// MessageCount is the number of messages.
	MessageCount uint64
	// Start and End are the first and last receive times (ns since the
	// epoch); both are 0 when there are no messages.
	Start, End int64
	// Topics has one entry per topic of Bag.Topics, in that order.
	Topics []TopicStats
}

// Duration is End - Start.
func (s *Stats) Duration() int64 { return s.End - s.Start }

// TopicStats is a topic's message count.
type TopicStats struct {
	Topic        *Topic
	MessageCount uint64
}

// Stats counts the messages of each topic and finds the time span, from
// the SQLite tables, from the statistics of an MCAP summary, or by reading
// an MCAP file that has none. On a read error it returns the error with the
// counts of what it could read.
func (b *Bag) Stats() (*Stats, error) {
	counts := map[*Topic]uint64{}
	st := &Stats{Start: math.MaxInt64, End: math.MinInt64}
	add := func(t *Topic, n uint64, first, last int64) {
		counts[t] += n
		if n > 0 {
			st.MessageCount += n
			st.Start = min(st.Start, first)
			st.End = max(st.End, last)
		}
	}
	var firstErr error
	for _, f := range b.files {
		var err error
		switch b.storage {
		case StorageSQLite3:
			err = b.sqliteStats(f, add)
		case StorageMCAP:
			err = b.mcapStats(f, add)
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if st.MessageCount == 0 {
		st.Start, st.End = 0, 0
	}
	for _, t := range b.Topics() {
		st.Topics = append(st.Topics, TopicStats{Topic: t, MessageCount: counts[t]})
	}
	return st, firstErr
}

func (b *Bag) sqliteStats(f bagFile, add func(*Topic, uint64, int64, int64)) error {
	p, rm, err := b.sqlitePath(f)
	if err != nil {
		return err
	}
	defer rm()
	db, err := openSQLite(p)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(f.path), err)
	}
	defer db.Close()
	topics, err := b.sqliteTopicMap(db)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(f.path), err)
	}
	rows, err := db.Query("SELECT topic_id, count(*), min(timestamp), max(timestamp) FROM messages GROUP BY topic_id")
	if err != nil {
		return fmt.Errorf("%s: messages table: %w", filepath.Base(f.path), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var n uint64
		var first, last int64
		if err := rows.Scan(&id, &n, &first, &last); err != nil {
			return fmt.Errorf("%s: messages table: %w", filepath.Base(f.path), err)
		}
		if t, ok := topics[id]; ok {
			add(t, n, first, last)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: messages table: %w", filepath.Base(f.path), err)
	}
	return nil
}

// sqliteTopicMap maps a file's topic ids to the bag's topics.
func (b *Bag) sqliteTopicMap(db *sql.DB) (map[int64]*Topic, error) {
	ts, err := sqliteTopics(db)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*Topic, len(ts))
	for _, t := range ts {
		out[t.id] = b.topic(t.topic)
	}
	return out, nil
}

func (b *Bag) mcapStats(f bagFile, add func(*Topic, uint64, int64, int64)) error {
	if !f.compressed {
		sum, err := mcapFileSummary(f.path)
		if err == nil && sum != nil && sum.stats != nil && len(sum.channels) > 0 {
			var total uint64
			for _, ch := range sum.channels {
				total += sum.stats.ChannelMessageCounts[ch.ID]
			}
			// Statistics that do not add up are not used: the file is read.
			if total == sum.stats.MessageCount {
				first := int64(min(sum.stats.MessageStartTime, math.MaxInt64))
				last := int64(min(sum.stats.MessageEndTime, math.MaxInt64))
				for _, ch := range sum.channels {
					add(b.topic(mcapTopic(ch, sum.schemas[ch.SchemaID])), sum.stats.ChannelMessageCounts[ch.ID], first, last)
				}
				return nil
			}
		}
	}
	return b.scanMCAP(f, func(m Message) { add(m.Topic, 1, m.Time, m.Time) })
}

// ReadOptions selects the messages a Reader returns.
type ReadOptions struct {
	// Topics, when not nil, keeps only the topics for which it returns true.
	Topics func(*Topic) bool
	// Start drops the messages received before it (ns since the epoch).
	Start int64
}

// source is one storage file's messages in time order.
type source interface {
	next() (Message, error)
	close() error
}

// Reader streams a bag's messages in receive-time order across its files
// (ties in file order). Files are opened as the time reaches them, so
// memory does not grow with the bag.
type Reader struct {
	b       *Bag
	opts    ReadOptions
	pending []bagFile // not opened yet, in file order
	starts  []int64
	known   []bool
	heads   srcHeap
	zstd    *zstd.Decoder
	err     error
	nextIdx int
}

type srcHead struct {
	src   source
	m     Message
	order int
	rm    func()
}

type srcHeap []*srcHead

// Len, Less, Swap, Push and Pop make srcHeap a heap.Interface.
func (h srcHeap) Len() int { return len(h) }

// Less is part of heap.Interface.
func (h srcHeap) Less(i, j int) bool {
	if h[i].m.Time != h[j].m.Time {
		return h[i].m.Time < h[j].m.Time
	}
	return h[i].order < h[j].order
}

// Swap is part of heap.Interface.
func (h srcHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

// Push is part of heap.Interface.
func (h *srcHeap) Push(x any) { *h = append(*h, x.(*srcHead)) }

// Pop is part of heap.Interface.
func (h *srcHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Messages returns a Reader of the bag's messages. Close it when done.
func (b *Bag) Messages(opts ReadOptions) (*Reader, error) {
	r := &Reader{b: b, opts: opts, pending: append([]bagFile(nil), b.files...)}
	// Where each file starts: probed from the file when that is cheap,
	// else metadata.yaml's files: list, else unknown (opened at once).
	for _, f := range r.pending {
		t, ok := b.fileStart(f)
		r.starts = append(r.starts, t)
		r.known = append(r.known, ok)
	}
	if b.msgZstd {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<32))
		if err != nil {
			return nil, err
		}
		r.zstd = d
	}
	return r, nil
}

// fileStart is the time of a file's first message, when it can be known
// without reading the file.
func (b *Bag) fileStart(f bagFile) (int64, bool) {
	if !f.compressed {
		switch b.storage {
		case StorageSQLite3:
			if db, err := openSQLite(f.path); err == nil {
				defer db.Close()
				var t sql.NullInt64
				if db.QueryRow("SELECT min(timestamp) FROM messages").Scan(&t) == nil && t.Valid {
					return t.Int64, true
				}
			}
		case StorageMCAP:
			if sum, err := mcapFileSummary(f.path); err == nil && sum != nil && sum.stats != nil && sum.stats.MessageCount > 0 {
				return int64(min(sum.stats.MessageStartTime, math.MaxInt64)), true
			}
		}
	}
	return f.startHint, f.hasHint
}

// openNext opens the next pending file and puts its first message in the
// heap.
func (r *Reader) openNext() error {
	f := r.pending[0]
	r.pending, r.starts, r.known = r.pending[1:], r.starts[1:], r.known[1:]
	order := r.nextIdx
	r.nextIdx++
	var src source
	rm := func() {}
	switch r.b.storage {
	case StorageSQLite3:
		p, remove, err := r.b.sqlitePath(f)
		if err != nil {
			return err
		}
		rm = remove
		db, err := openSQLite(p)
		if err != nil {
			rm()
			return fmt.Errorf("%s: %w", filepath.Base(f.path), err)
		}
		topics, err := r.b.sqliteTopicMap(db)
		if err != nil {
			db.Close()
			rm()
			return fmt.Errorf("%s: %w", filepath.Base(f.path), err)
		}
		var ids []int64
		if r.opts.Topics != nil {
			ids = []int64{}
			for id, t := range topics {
				if r.opts.Topics(t) {
					ids = append(ids, id)
				} else {
					delete(topics, id)
				}
			}
			sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		}
		s, err := newSQLiteSource(db, topics, ids, r.opts.Start)
		if err != nil {
			db.Close()
			rm()
			return fmt.Errorf("%s: %w", filepath.Base(f.path), err)
		}
		src = s
	case StorageMCAP:
		resolve := func(ch *mcap.Channel, sc *mcap.Schema) *Topic {
			t := r.b.topic(mcapTopic(ch, sc))
			if r.opts.Topics != nil && !r.opts.Topics(t) {
				return nil
			}
			return t
		}
		in, size, closer, err := openStream(f)
		if err != nil {
			return err
		}
		var s *mcapStream
		if ra, ok := in.(io.ReaderAt); ok && size >= 0 {
			// A file with a full summary is read by its chunk index.
			if sum, err := readMCAPSummary(ra, size); err == nil && sum.indexable() {
				s, err = newIndexedMCAPStream(ra, size, sum, r.opts.Start, resolve)
				if err != nil {
					closer()
					return fmt.Errorf("%s: %w", filepath.Base(f.path), err)
				}
			}
		}
		if s == nil {
			if s, err = newMCAPStream(in, size, r.opts.Start, resolve); err != nil {
				closer()
				return fmt.Errorf("%s: %w", filepath.Base(f.path), err)
			}
		}
		src = &closingSource{s, closer}
	}
	h := &srcHead{src: src, order: order, rm: rm}
	return r.advance(h, f.path)
}

type closingSource struct {
	*mcapStream
	closer func()
}

func (c *closingSource) close() error {
	c.mcapStream.close()
	c.closer()
	return nil
}

// advance reads h's next message and (re)inserts it into the heap.
func (r *Reader) advance(h *srcHead, path string) error {
	m, err := h.src.next()
	if err == io.EOF {
		h.src.close()
		h.rm()
		return nil
	}
	if err != nil {
		h.src.close()
		h.rm()
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	h.m = m
	heap.Push(&r.heads, h)
	return nil
}

// Next returns the next message, or io.EOF after the last. After any other
// error the Reader is done; the messages before it were good.
func (r *Reader) Next() (Message, error) {
	if r.err != nil {
		return Message{}, r.err
	}
	// Open the files that start before (or at) the earliest held message,
	// and any whose start is not known.
	for len(r.pending) > 0 && (len(r.heads) == 0 || !r.known[0] || r.starts[0] <= r.heads[0].m.Time) {
		if err := r.openNext(); err != nil {
			r.fail(err)
			return Message{}, r.err
		}
	}
	if len(r.heads) == 0 {
		r.err = io.EOF
		return Message{}, io.EOF
	}
	h := heap.Pop(&r.heads).(*srcHead)
	m := h.m
	if err := r.advance(h, r.b.files[h.order].path); err != nil {
		// The message in hand is good; the error comes with the next call.
		r.fail(err)
	}
	return r.finish(m)
}

func (r *Reader) finish(m Message) (Message, error) {
	if r.zstd != nil {
		d, err := r.zstd.DecodeAll(m.Data, nil)
		if err != nil {
			err = fmt.Errorf("message at %d on %s: zstd: %w", m.Time, m.Topic.Name, err)
			r.fail(err)
			return Message{}, err
		}
		m.Data = d
	}
	return m, nil
}

func (r *Reader) fail(err error) {
	r.err = err
	for _, h := range r.heads {
		h.src.close()
		h.rm()
	}
	r.heads = nil
}

// Close releases the files the Reader holds open.
func (r *Reader) Close() error {
	if r.err == nil {
		r.err = errors.New("bag: reader closed")
	}
	for _, h := range r.heads {
		h.src.close()
		h.rm()
	}
	r.heads = nil
	if r.zstd != nil {
		r.zstd.Close()
		r.zstd = nil
	}
	return nil
}
