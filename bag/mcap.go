package bag

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sort"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// MCAP record opcodes (MCAP specification, "Records").
const (
	opHeader         = 0x01
	opFooter         = 0x02
	opSchema         = 0x03
	opChannel        = 0x04
	opMessage        = 0x05
	opChunk          = 0x06
	opChunkIndex     = 0x08
	opStatistics     = 0x0B
	opMetadata       = 0x0C
	opMetadataIndex  = 0x0D
	opDataEnd        = 0x0F
	mcapMagicLen     = 8
	mcapFooterRecLen = 1 + 8 + 20
	maxMCAPRecord    = 1 << 32 // no record of a real bag comes near
)

// maxChunkSize bounds the decompressed size of an MCAP chunk (rosbag2
// writes 768 KiB chunks by default). Fuzz tests lower it.
var maxChunkSize uint64 = 1 << 31

// mcapRecordReader reads the records of an MCAP data section one by one
// from a stream. It never trusts a length to allocate: buffers grow with
// the bytes actually read.
type mcapRecordReader struct {
	r      *bufio.Reader
	remain int64 // bytes left in the input, or -1 when not known
	buf    []byte
}

func newMCAPRecordReader(r io.Reader, size int64) (*mcapRecordReader, error) {
	bufSize := 256 << 10
	if size >= 0 && size < int64(bufSize) { // no more than the input
		bufSize = max(int(size), 16)
	}
	br := bufio.NewReaderSize(r, bufSize)
	magic := make([]byte, mcapMagicLen)
	if _, err := io.ReadFull(br, magic); err != nil {
		return nil, fmt.Errorf("not an MCAP file: %w", noEOF(err))
	}
	if !bytes.Equal(magic, mcap.Magic) {
		return nil, errors.New("not an MCAP file: bad magic")
	}
	rr := &mcapRecordReader{r: br, remain: -1}
	if size >= 0 {
		rr.remain = size - mcapMagicLen
	}
	return rr, nil
}

// noEOF turns a bare io.EOF (input ended too early) into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// next returns the next record's opcode and body. The body is freshly
// allocated when fresh is true; otherwise it is valid until the next call.
// io.EOF means the input ended exactly between records.
func (rr *mcapRecordReader) next(fresh bool) (byte, []byte, error) {
	var hdr [9]byte
	n, err := io.ReadFull(rr.r, hdr[:])
	if err != nil {
		if n == 0 && err == io.EOF {
			return 0, nil, io.EOF
		}
		return 0, nil, fmt.Errorf("truncated record header: %w", noEOF(err))
	}
	if rr.remain >= 0 {
		rr.remain -= 9
	}
	op := hdr[0]
	l := binary.LittleEndian.Uint64(hdr[1:])
	if l > maxMCAPRecord || rr.remain >= 0 && l > uint64(rr.remain) {
		return 0, nil, fmt.Errorf("record 0x%02x of %d bytes runs past the end of the file (truncated or corrupt)", op, l)
	}
	var body []byte
	if fresh {
		body, err = readN(rr.r, int64(l), nil)
	} else {
		body, err = readN(rr.r, int64(l), rr.buf[:0])
		rr.buf = body[:0]
	}
	if err != nil {
		return 0, nil, fmt.Errorf("truncated record 0x%02x: %w", op, noEOF(err))
	}
	if rr.remain >= 0 {
		rr.remain -= int64(l)
	}
	return op, body, nil
}

// readN reads exactly n bytes, growing buf as bytes arrive (so a lying
// length cannot make it allocate more than the input holds).
func readN(r io.Reader, n int64, buf []byte) ([]byte, error) {
	const step = 4 << 20
	if n <= step || int64(cap(buf)) >= n {
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		_, err := io.ReadFull(r, buf)
		return buf, err
	}
	var b bytes.Buffer
	b.Grow(step)
	got, err := io.Copy(&b, io.LimitReader(r, n))
	if err != nil {
		return nil, err
	}
	if got < n {
		return nil, io.ErrUnexpectedEOF
	}
	return b.Bytes(), nil
}

// mcapChannel is a channel and the topic it maps to.
type mcapChannel struct {
	ch    *mcap.Channel
	topic *Topic // nil: skipped (filtered out)
}

// mcapPending is a message waiting in the time-order heap.
type mcapPending struct {
	time    uint64
	seq     uint64
	channel uint16
	data    []byte
}

type mcapHeap []mcapPending

// Len, Less, Swap, Push and Pop make mcapHeap a heap.Interface.
func (h mcapHeap) Len() int { return len(h) }

// Less is part of heap.Interface.
func (h mcapHeap) Less(i, j int) bool {
	if h[i].time != h[j].time {
		return h[i].time < h[j].time
	}
	return h[i].seq < h[j].seq
}

// Swap is part of heap.Interface.
func (h mcapHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

// Push is part of heap.Interface.
func (h *mcapHeap) Push(x any) { *h = append(*h, x.(mcapPending)) }

// Pop is part of heap.Interface.
func (h *mcapHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = mcapPending{}
	*h = old[:len(old)-1]
	return x
}

// mcapStream yields the messages of one MCAP stream in log-time order.
//
// It reads the data section front to back. Messages of a chunk are
// decompressed (its CRC checked when the writer set one) and held in a
// heap; the next chunk is loaded before a held message is handed out when
// the chunk may start earlier (its message_start_time), so overlapping
// chunks merge correctly while memory holds only the chunks that overlap.
type mcapStream struct {
	rr        *mcapRecordReader
	schemas   map[uint16]*mcap.Schema
	channels  map[uint16]*mcapChannel
	resolve   func(*mcap.Channel, *mcap.Schema) *Topic
	heap      mcapHeap
	seq       uint64
	peekChunk *mcap.Chunk
	peekMsg   *mcapPending
	done      bool
	err       error // after the held messages: io.EOF or what went wrong
	start     uint64
	zstd      *zstd.Decoder
	lz4       *lz4.Reader
	metadata  []*mcap.Metadata // "rosbag2" metadata records met on the way
	header    bool

	// Indexed reading: the chunks in order of their start time, read
	// where the summary's chunk indexes say.
	ra     io.ReaderAt
	size   int64
	chunks []*mcap.ChunkIndex
}

// newMCAPStream reads an MCAP stream of size bytes (-1: unknown). resolve
// maps a channel to the topic its messages are reported under (nil: skip
// them); start drops messages logged before it.
func newMCAPStream(r io.Reader, size int64, start int64, resolve func(*mcap.Channel, *mcap.Schema) *Topic) (*mcapStream, error) {
	rr, err := newMCAPRecordReader(r, size)
	if err != nil {
		return nil, err
	}
	s := &mcapStream{rr: rr, schemas: map[uint16]*mcap.Schema{}, channels: map[uint16]*mcapChannel{}, resolve: resolve}
	if start > 0 {
		s.start = uint64(start)
	}
	return s, nil
}

// fill reads records until it has a chunk or a message outside chunks to
// look at next, or the data section ends.
func (s *mcapStream) fill() {
	if s.ra != nil {
		s.fillIndexed()
		return
	}
	for !s.done && s.peekChunk == nil && s.peekMsg == nil {
		op, body, err := s.rr.next(false)
		if err != nil {
			if err == io.EOF {
				err = errors.New("file ends without a footer (truncated)")
			}
			s.fail(err)
			return
		}
		if !s.header {
			if op != opHeader {
				s.fail(fmt.Errorf("first record is 0x%02x, not a header", op))
				return
			}
			s.header = true
			continue
		}
		switch op {
		case opSchema, opChannel:
			if err := s.define(op, body); err != nil {
				s.fail(err)
				return
			}
		case opMessage:
			var m mcap.Message
			if err := m.PopulateFrom(body, true); err != nil {
				s.fail(fmt.Errorf("message record: %w", err))
				return
			}
			p := mcapPending{time: m.LogTime, channel: m.ChannelID, data: m.Data}
			s.peekMsg = &p
		case opChunk:
			c, err := parseChunk(body)
			if err != nil {
				s.fail(fmt.Errorf("chunk record: %w", err))
				return
			}
			// body is reused by the record reader: keep our own copy.
			c.Records = append([]byte(nil), c.Records...)
			s.peekChunk = c
		case opMetadata:
			if md, err := mcap.ParseMetadata(body); err == nil && md.Name == "rosbag2" {
				s.metadata = append(s.metadata, md)
			}
		case opDataEnd, opFooter:
			s.done = true
			s.err = io.EOF
			return
		}
	}
}

// fillIndexed reads the next chunk the summary indexes.
func (s *mcapStream) fillIndexed() {
	if s.done || s.peekChunk != nil {
		return
	}
	if len(s.chunks) == 0 {
		s.done, s.err = true, io.EOF
		return
	}
	ci := s.chunks[0]
	s.chunks = s.chunks[1:]
	if ci.ChunkLength < 9 || ci.ChunkLength > maxMCAPRecord || ci.ChunkStartOffset > uint64(s.size) ||
		ci.ChunkLength > uint64(s.size)-ci.ChunkStartOffset {
		s.fail(fmt.Errorf("chunk index points outside the file (offset %d, length %d)", ci.ChunkStartOffset, ci.ChunkLength))
		return
	}
	rec := make([]byte, ci.ChunkLength)
	if _, err := s.ra.ReadAt(rec, int64(ci.ChunkStartOffset)); err != nil {
		s.fail(fmt.Errorf("chunk at %d: %w", ci.ChunkStartOffset, noEOF(err)))
		return
	}
	if rec[0] != opChunk || binary.LittleEndian.Uint64(rec[1:]) != ci.ChunkLength-9 {
		s.fail(fmt.Errorf("no chunk record at offset %d, where the index says", ci.ChunkStartOffset))
		return
	}
	c, err := parseChunk(rec[9:])
	if err != nil {
		s.fail(fmt.Errorf("chunk record: %w", err))
		return
	}
	s.peekChunk = c
}

// newIndexedMCAPStream reads the chunks of a file in the order of their
// start times, as its summary indexes them, so that chunks written out of
// time order still give messages in time order.
func newIndexedMCAPStream(ra io.ReaderAt, size int64, sum *mcapSummary, start int64, resolve func(*mcap.Channel, *mcap.Schema) *Topic) (*mcapStream, error) {
	s := &mcapStream{schemas: map[uint16]*mcap.Schema{}, channels: map[uint16]*mcapChannel{}, resolve: resolve,
		ra: ra, size: size, header: true}
	if start > 0 {
		s.start = uint64(start)
	}
	for id, sc := range sum.schemas {
		s.schemas[id] = sc
	}
	for _, ch := range sum.channels {
		var sc *mcap.Schema
		if ch.SchemaID != 0 {
			if sc = s.schemas[ch.SchemaID]; sc == nil {
				return nil, fmt.Errorf("channel %d (%s) refers to unknown schema %d", ch.ID, ch.Topic, ch.SchemaID)
			}
		}
		s.channels[ch.ID] = &mcapChannel{ch: ch, topic: resolve(ch, sc)}
	}
	s.chunks = append([]*mcap.ChunkIndex(nil), sum.chunks...)
	sort.SliceStable(s.chunks, func(i, j int) bool { return s.chunks[i].MessageStartTime < s.chunks[j].MessageStartTime })
	// Chunks that end before the start are skipped unread.
	for len(s.chunks) > 0 && s.chunks[0].MessageEndTime < s.start {
		s.chunks = s.chunks[1:]
	}
	s.metadata = sum.metadata
	return s, nil
}

// indexable reports whether a summary indexes every message: all of them
// are in the chunks it lists.
func (sum *mcapSummary) indexable() bool {
	return sum != nil && len(sum.chunks) > 0 && sum.stats != nil && uint64(len(sum.chunks)) == uint64(sum.stats.ChunkCount)
}

func (s *mcapStream) fail(err error) {
	s.done = true
	s.err = err
}

// define records a schema or channel.
func (s *mcapStream) define(op byte, body []byte) error {
	if op == opSchema {
		sc, err := mcap.ParseSchema(body)
		if err != nil {
			return fmt.Errorf("schema record: %w", err)
		}
		if _, ok := s.schemas[sc.ID]; !ok {
			s.schemas[sc.ID] = sc
		}
		return nil
	}
	ch, err := mcap.ParseChannel(body)
	if err != nil {
		return fmt.Errorf("channel record: %w", err)
	}
	if _, ok := s.channels[ch.ID]; ok {
		return nil
	}
	var sc *mcap.Schema
	if ch.SchemaID != 0 {
		if sc = s.schemas[ch.SchemaID]; sc == nil {
			return fmt.Errorf("channel %d (%s) refers to unknown schema %d", ch.ID, ch.Topic, ch.SchemaID)
		}
	}
	s.channels[ch.ID] = &mcapChannel{ch: ch, topic: s.resolve(ch, sc)}
	return nil
}

// push holds a message for ordering, unless it is filtered out.
func (s *mcapStream) push(p mcapPending) error {
	c, ok := s.channels[p.channel]
	if !ok {
		return fmt.Errorf("message on undeclared channel %d", p.channel)
	}
	if c.topic == nil || p.time < s.start {
		return nil
	}
	p.seq = s.seq
	s.seq++
	heap.Push(&s.heap, p)
	return nil
}

// loadChunk decompresses a chunk, checks it and holds its messages.
func (s *mcapStream) loadChunk(c *mcap.Chunk) error {
	if c.UncompressedSize > maxChunkSize {
		return fmt.Errorf("chunk claims %d bytes uncompressed", c.UncompressedSize)
	}
	var data []byte
	switch c.Compression {
	case "", "none":
		data = c.Records
	case "zstd":
		if s.zstd == nil {
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxChunkSize))
			if err != nil {
				return err
			}
			s.zstd = d
		}
		if err := s.zstd.Reset(bytes.NewReader(c.Records)); err != nil {
			return fmt.Errorf("zstd chunk: %w", err)
		}
		// Decode no more than the header announces: a lying size cannot
		// make us allocate more than the data really expands to.
		var err error
		data, err = readN(s.zstd, int64(c.UncompressedSize), nil)
		if err != nil {
			return fmt.Errorf("zstd chunk: %w", noEOF(err))
		}
		var one [1]byte
		if n, _ := s.zstd.Read(one[:]); n > 0 {
			return fmt.Errorf("zstd chunk decompresses to more than the %d bytes its header says", c.UncompressedSize)
		}
	case "lz4":
		if s.lz4 == nil {
			s.lz4 = lz4.NewReader(nil)
		}
		s.lz4.Reset(bytes.NewReader(c.Records))
		var err error
		data, err = readN(s.lz4, int64(c.UncompressedSize), nil)
		if err != nil {
			return fmt.Errorf("lz4 chunk: %w", noEOF(err))
		}
	default:
		return fmt.Errorf("chunk compression %q is not supported", c.Compression)
	}
	if uint64(len(data)) != c.UncompressedSize {
		return fmt.Errorf("chunk decompresses to %d bytes, its header says %d", len(data), c.UncompressedSize)
	}
	if c.UncompressedCRC != 0 {
		if got := crc32.ChecksumIEEE(data); got != c.UncompressedCRC {
			return fmt.Errorf("chunk CRC mismatch: computed %08x, recorded %08x (corrupt chunk)", got, c.UncompressedCRC)
		}
	}
	for off := 0; off < len(data); {
		if len(data)-off < 9 {
			return errors.New("chunk ends inside a record header")
		}
		op := data[off]
		l := binary.LittleEndian.Uint64(data[off+1:])
		off += 9
		if l > uint64(len(data)-off) {
			return fmt.Errorf("record 0x%02x in chunk runs past its end", op)
		}
		body := data[off : off+int(l)]
		off += int(l)
		switch op {
		case opSchema, opChannel:
			if err := s.define(op, body); err != nil {
				return err
			}
		case opMessage:
			var m mcap.Message
			if err := m.PopulateFrom(body, false); err != nil {
				return fmt.Errorf("message in chunk: %w", err)
			}
			if err := s.push(mcapPending{time: m.LogTime, channel: m.ChannelID, data: m.Data}); err != nil {
				return err
			}
		}
	}
	return nil
}

// next returns the next message in log-time order.
func (s *mcapStream) next() (Message, error) {
	for {
		s.fill()
		if len(s.heap) > 0 {
			top := s.heap[0].time
			if s.peekChunk != nil && s.peekChunk.MessageStartTime < top {
				s.takeChunk()
				continue
			}
			if s.peekMsg != nil && s.peekMsg.time < top {
				s.takeMsg()
				continue
			}
			p := heap.Pop(&s.heap).(mcapPending)
			t := p.time
			if t > math.MaxInt64 {
				t = math.MaxInt64
			}
			return Message{Topic: s.channels[p.channel].topic, Time: int64(t), Data: p.data}, nil
		}
		switch {
		case s.peekChunk != nil:
			s.takeChunk()
		case s.peekMsg != nil:
			s.takeMsg()
		default:
			return Message{}, s.err
		}
	}
}

// takeChunk loads the peeked chunk. A chunk that fails ends the stream:
// the messages held from before it are still handed out, then the error.
func (s *mcapStream) takeChunk() {
	c := s.peekChunk
	s.peekChunk = nil
	if err := s.loadChunk(c); err != nil {
		s.fail(err)
	}
}

// takeMsg holds the peeked message that was outside chunks.
func (s *mcapStream) takeMsg() {
	p := *s.peekMsg
	s.peekMsg = nil
	if err := s.push(p); err != nil {
		s.fail(err)
	}
}

func (s *mcapStream) close() error {
	if s.zstd != nil {
		s.zstd.Close()
	}
	return nil
}

// mcapSummary is what the summary section of an MCAP file tells.
type mcapSummary struct {
	schemas  map[uint16]*mcap.Schema
	channels []*mcap.Channel // in ID order of appearance
	stats    *mcap.Statistics
	metadata []*mcap.Metadata // the "rosbag2" records
	chunks   []*mcap.ChunkIndex
}

// readMCAPSummary reads the summary section of an MCAP file through its
// footer. It returns nil (and no error) when the file has no summary.
func readMCAPSummary(r io.ReaderAt, size int64) (*mcapSummary, error) {
	if size < mcapMagicLen*2+mcapFooterRecLen {
		return nil, errors.New("file too short for an MCAP footer (truncated)")
	}
	tail := make([]byte, mcapFooterRecLen+mcapMagicLen)
	if _, err := r.ReadAt(tail, size-int64(len(tail))); err != nil {
		return nil, err
	}
	if !bytes.Equal(tail[mcapFooterRecLen:], mcap.Magic) || tail[0] != opFooter {
		return nil, errors.New("no footer at the end of the file (truncated)")
	}
	f, err := mcap.ParseFooter(tail[9:mcapFooterRecLen])
	if err != nil {
		return nil, err
	}
	footerStart := size - int64(len(tail))
	if f.SummaryStart == 0 {
		return nil, nil
	}
	if f.SummaryStart < mcapMagicLen || f.SummaryStart > uint64(footerStart) {
		return nil, fmt.Errorf("summary offset %d is outside the file", f.SummaryStart)
	}
	n := footerStart - int64(f.SummaryStart)
	if n > 1<<30 {
		return nil, fmt.Errorf("summary section of %d bytes is too large", n)
	}
	sec := make([]byte, n)
	if _, err := r.ReadAt(sec, int64(f.SummaryStart)); err != nil {
		return nil, err
	}
	if f.SummaryCRC != 0 {
		crc := crc32.NewIEEE()
		crc.Write(sec)
		crc.Write(tail[:9+8+8])
		if crc.Sum32() != f.SummaryCRC {
			return nil, errors.New("summary section CRC mismatch (corrupt)")
		}
	}
	s := &mcapSummary{schemas: map[uint16]*mcap.Schema{}}
	seen := map[uint16]bool{}
	var metaIdx []*mcap.MetadataIndex
	for off := 0; off < len(sec); {
		if len(sec)-off < 9 {
			return nil, errors.New("summary ends inside a record")
		}
		op := sec[off]
		l := binary.LittleEndian.Uint64(sec[off+1:])
		off += 9
		if l > uint64(len(sec)-off) {
			return nil, errors.New("summary record runs past the summary")
		}
		body := sec[off : off+int(l)]
		off += int(l)
		switch op {
		case opSchema:
			sc, err := mcap.ParseSchema(body)
			if err != nil {
				return nil, err
			}
			s.schemas[sc.ID] = sc
		case opChannel:
			ch, err := mcap.ParseChannel(body)
			if err != nil {
				return nil, err
			}
			if !seen[ch.ID] {
				seen[ch.ID] = true
				s.channels = append(s.channels, ch)
			}
		case opStatistics:
			st, err := mcap.ParseStatistics(body)
			if err != nil {
				return nil, err
			}
			s.stats = st
		case opChunkIndex:
			ci, err := mcap.ParseChunkIndex(body)
			if err != nil {
				return nil, err
			}
			s.chunks = append(s.chunks, ci)
		case opMetadataIndex:
			mi, err := mcap.ParseMetadataIndex(body)
			if err != nil {
				return nil, err
			}
			if mi.Name == "rosbag2" {
				metaIdx = append(metaIdx, mi)
			}
		}
	}
	for _, mi := range metaIdx {
		if mi.Offset > uint64(size) || mi.Length > uint64(size)-mi.Offset || mi.Length < 9 || mi.Length > maxMetadataSize {
			continue
		}
		rec := make([]byte, mi.Length)
		if _, err := r.ReadAt(rec, int64(mi.Offset)); err != nil || rec[0] != opMetadata {
			continue
		}
		if md, err := mcap.ParseMetadata(rec[9:]); err == nil {
			s.metadata = append(s.metadata, md)
		}
	}
	return s, nil
}

// mcapTopic makes the topic of an MCAP channel as rosbag2 writes them: the
// schema name is the type, the channel metadata holds the offered QoS
// profiles and the type hash.
func mcapTopic(ch *mcap.Channel, sc *mcap.Schema) Topic {
	t := Topic{Name: ch.Topic, SerializationFormat: ch.MessageEncoding}
	if sc != nil {
		t.Type = sc.Name
	}
	if q, err := ParseQoSProfiles(ch.Metadata["offered_qos_profiles"]); err == nil {
		t.OfferedQoSProfiles = q
	}
	t.TypeDescriptionHash = ch.Metadata["topic_type_hash"]
	return t
}

// embeddedMetadata parses the last rosbag2 metadata record (written when
// the bag was closed), or returns nil.
func embeddedMetadata(mds []*mcap.Metadata) *Metadata {
	for i := len(mds) - 1; i >= 0; i-- {
		if s, ok := mds[i].Metadata["serialized_metadata"]; ok {
			if m, err := ParseMetadata([]byte(s)); err == nil {
				return m
			}
		}
	}
	return nil
}

// parseChunk parses a chunk record's body (MCAP specification: message
// start and end time, uncompressed size, uncompressed CRC, compression
// string, records). It checks every length against the body, which the
// MCAP library's ParseChunk (v1.9.0) does not.
func parseChunk(b []byte) (*mcap.Chunk, error) {
	const fixed = 8 + 8 + 8 + 4 + 4
	if len(b) < fixed {
		return nil, errors.New("chunk record too short")
	}
	c := &mcap.Chunk{
		MessageStartTime: binary.LittleEndian.Uint64(b[0:]),
		MessageEndTime:   binary.LittleEndian.Uint64(b[8:]),
		UncompressedSize: binary.LittleEndian.Uint64(b[16:]),
		UncompressedCRC:  binary.LittleEndian.Uint32(b[24:]),
	}
	n := uint64(binary.LittleEndian.Uint32(b[28:]))
	rest := b[fixed:]
	if n > uint64(len(rest)) {
		return nil, errors.New("chunk compression name runs past the record")
	}
	c.Compression = string(rest[:n])
	rest = rest[n:]
	if len(rest) < 8 {
		return nil, errors.New("chunk record too short for its records length")
	}
	l := binary.LittleEndian.Uint64(rest)
	rest = rest[8:]
	if l > uint64(len(rest)) {
		return nil, errors.New("chunk records run past the record")
	}
	c.Records = rest[:l]
	return c, nil
}
