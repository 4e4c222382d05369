package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// HeaderSize is the size of the RTPS message header.
const HeaderSize = 20

// SubmessageHeaderSize is the size of a submessage header.
const SubmessageHeaderSize = 4

// SubmessageID is a submessage kind (the first byte of a submessage header).
type SubmessageID uint8

// Submessage ids (DDSI-RTPS 2.x table 9.13).
const (
	SubmsgPad           SubmessageID = 0x01
	SubmsgAckNack       SubmessageID = 0x06
	SubmsgHeartbeat     SubmessageID = 0x07
	SubmsgGap           SubmessageID = 0x08
	SubmsgInfoTS        SubmessageID = 0x09
	SubmsgInfoSrc       SubmessageID = 0x0c
	SubmsgInfoReplyIP4  SubmessageID = 0x0d
	SubmsgInfoDst       SubmessageID = 0x0e
	SubmsgInfoReply     SubmessageID = 0x0f
	SubmsgNackFrag      SubmessageID = 0x12
	SubmsgHeartbeatFrag SubmessageID = 0x13
	SubmsgData          SubmessageID = 0x15
	SubmsgDataFrag      SubmessageID = 0x16
)

// String names the submessage kind.
func (id SubmessageID) String() string {
	switch id {
	case SubmsgPad:
		return "PAD"
	case SubmsgAckNack:
		return "ACKNACK"
	case SubmsgHeartbeat:
		return "HEARTBEAT"
	case SubmsgGap:
		return "GAP"
	case SubmsgInfoTS:
		return "INFO_TS"
	case SubmsgInfoSrc:
		return "INFO_SRC"
	case SubmsgInfoReplyIP4:
		return "INFO_REPLY_IP4"
	case SubmsgInfoDst:
		return "INFO_DST"
	case SubmsgInfoReply:
		return "INFO_REPLY"
	case SubmsgNackFrag:
		return "NACK_FRAG"
	case SubmsgHeartbeatFrag:
		return "HEARTBEAT_FRAG"
	case SubmsgData:
		return "DATA"
	case SubmsgDataFrag:
		return "DATA_FRAG"
	}
	return fmt.Sprintf("SUBMSG(0x%02x)", uint8(id))
}

// Submessage flag bits. FlagEndianness (E) is common to all submessages;
// the others depend on the kind.
const (
	FlagEndianness byte = 0x01 // E: little endian

	FlagDataInlineQos byte = 0x02 // DATA Q
	FlagDataData      byte = 0x04 // DATA D
	FlagDataKey       byte = 0x08 // DATA K
	FlagDataNonStd    byte = 0x10 // DATA N (non-standard payload)

	FlagDataFragInlineQos byte = 0x02 // DATA_FRAG Q
	FlagDataFragKey       byte = 0x04 // DATA_FRAG K
	FlagDataFragNonStd    byte = 0x08 // DATA_FRAG N

	FlagHeartbeatFinal      byte = 0x02 // HEARTBEAT F
	FlagHeartbeatLiveliness byte = 0x04 // HEARTBEAT L

	FlagAckNackFinal byte = 0x02 // ACKNACK F

	FlagInfoTSInvalidate byte = 0x02 // INFO_TS I

	FlagInfoReplyMulticast byte = 0x02 // INFO_REPLY / INFO_REPLY_IP4 M
)

// Errors returned by the decoder. Every decode error wraps ErrMalformed.
var (
	ErrMalformed          = errors.New("rtps: malformed")
	ErrNotRTPS            = fmt.Errorf("%w: not an RTPS message", ErrMalformed)
	ErrUnsupportedVersion = fmt.Errorf("%w: unsupported protocol major version", ErrMalformed)
	ErrTruncated          = fmt.Errorf("%w: truncated", ErrMalformed)
	ErrSetTooLarge        = fmt.Errorf("%w: set numBits > 256", ErrMalformed)
)

// Header is the 20-byte RTPS message header.
type Header struct {
	Version ProtocolVersion
	Vendor  VendorID
	Prefix  GuidPrefix
}

// DecodeHeader parses the RTPS header at the start of msg. It accepts any
// protocol major version 2 (the spec says to drop other majors).
func DecodeHeader(msg []byte) (Header, error) {
	var h Header
	if len(msg) < HeaderSize {
		return h, ErrTruncated
	}
	if msg[0] != 'R' || msg[1] != 'T' || msg[2] != 'P' || msg[3] != 'S' {
		return h, ErrNotRTPS
	}
	h.Version = ProtocolVersion{msg[4], msg[5]}
	if h.Version.Major != 2 {
		return h, ErrUnsupportedVersion
	}
	h.Vendor = VendorID{msg[6], msg[7]}
	copy(h.Prefix[:], msg[8:20])
	return h, nil
}

// Data is a DATA submessage. InlineQos and SerializedPayload alias the
// decoded buffer.
type Data struct {
	ReaderID EntityID
	WriterID EntityID
	WriterSN SequenceNumber
	// InlineQos is the inline QoS parameter list including its sentinel,
	// or empty if the Q flag is clear.
	InlineQos ParameterList
	// SerializedPayload is the payload including its 4-byte encapsulation
	// header, and any trailing padding, or nil if neither D nor K is set.
	SerializedPayload []byte
	// Key is the K flag: the payload is a serialized key, not data.
	Key bool
	// NonStandardPayload is the N flag.
	NonStandardPayload bool
}

// DataFrag is a DATA_FRAG submessage. InlineQos and Fragments alias the
// decoded buffer.
type DataFrag struct {
	ReaderID              EntityID
	WriterID              EntityID
	WriterSN              SequenceNumber
	FragmentStartingNum   uint32 // 1-based
	FragmentsInSubmessage uint16
	FragmentSize          uint16
	SampleSize            uint32
	InlineQos             ParameterList
	// Fragments holds the fragment bytes, trimmed on decode to exactly
	// what FragmentStartingNum, FragmentsInSubmessage, FragmentSize and
	// SampleSize imply (the last fragment may be short).
	Fragments          []byte
	Key                bool
	NonStandardPayload bool
}

// Heartbeat is a HEARTBEAT submessage.
type Heartbeat struct {
	ReaderID   EntityID
	WriterID   EntityID
	FirstSN    SequenceNumber
	LastSN     SequenceNumber
	Count      Count
	Final      bool // F: no response required
	Liveliness bool // L: manual liveliness assertion
}

// AckNack is an ACKNACK submessage.
type AckNack struct {
	ReaderID      EntityID
	WriterID      EntityID
	ReaderSNState SequenceNumberSet
	Count         Count
	Final         bool
}

// Gap is a GAP submessage: GapStart up to (excluding) GapList.Base, plus the
// members of GapList, are irrelevant to the reader.
type Gap struct {
	ReaderID EntityID
	WriterID EntityID
	GapStart SequenceNumber
	GapList  SequenceNumberSet
}

// NackFrag is a NACK_FRAG submessage.
type NackFrag struct {
	ReaderID            EntityID
	WriterID            EntityID
	WriterSN            SequenceNumber
	FragmentNumberState FragmentNumberSet
	Count               Count
}

// HeartbeatFrag is a HEARTBEAT_FRAG submessage.
type HeartbeatFrag struct {
	ReaderID        EntityID
	WriterID        EntityID
	WriterSN        SequenceNumber
	LastFragmentNum uint32
	Count           Count
}

// InfoTS is an INFO_TS submessage.
type InfoTS struct {
	// Invalidate is the I flag: following submessages carry no timestamp.
	Invalidate bool
	Timestamp  Time
}

// InfoDst is an INFO_DST submessage.
type InfoDst struct {
	// Prefix is the destination participant; GuidPrefixUnknown means all.
	Prefix GuidPrefix
}

// InfoSrc is an INFO_SRC submessage.
type InfoSrc struct {
	Version ProtocolVersion
	Vendor  VendorID
	Prefix  GuidPrefix
}

// Submessage is one decoded submessage. ID says which of the typed fields
// is valid; the others hold stale values from earlier submessages. Flags
// are the raw flag bits (E included). A Submessage returned by Reader.Next
// is owned by the Reader and is overwritten by the next call.
//
// INFO_REPLY and INFO_REPLY_IP4 have no typed field: their effect is in
// Reader.State.
type Submessage struct {
	ID    SubmessageID
	Flags byte

	Data          Data
	DataFrag      DataFrag
	Heartbeat     Heartbeat
	AckNack       AckNack
	Gap           Gap
	NackFrag      NackFrag
	HeartbeatFrag HeartbeatFrag
	InfoTS        InfoTS
	InfoDst       InfoDst
	InfoSrc       InfoSrc
}

// LittleEndian reports whether the submessage had the E flag set.
func (s *Submessage) LittleEndian() bool { return s.Flags&FlagEndianness != 0 }

// WriterToReader returns the writer and reader ids of a submessage that a
// writer sends to its readers (DATA, DATA_FRAG, HEARTBEAT, HEARTBEAT_FRAG,
// GAP); ok is false for every other kind.
func (s *Submessage) WriterToReader() (writer, reader EntityID, ok bool) {
	switch s.ID {
	case SubmsgData:
		return s.Data.WriterID, s.Data.ReaderID, true
	case SubmsgDataFrag:
		return s.DataFrag.WriterID, s.DataFrag.ReaderID, true
	case SubmsgHeartbeat:
		return s.Heartbeat.WriterID, s.Heartbeat.ReaderID, true
	case SubmsgHeartbeatFrag:
		return s.HeartbeatFrag.WriterID, s.HeartbeatFrag.ReaderID, true
	case SubmsgGap:
		return s.Gap.WriterID, s.Gap.ReaderID, true
	}
	return EntityID{}, EntityID{}, false
}

// MaxReplyLocators is how many INFO_REPLY locators of each list the
// receiver state keeps; further ones are ignored.
const MaxReplyLocators = 4

// ReceiverState is the interpretation context of the spec's receiver
// (DDSI-RTPS 8.3.4): it starts from the message header and is changed by
// INFO_SRC, INFO_DST, INFO_TS and INFO_REPLY as the message is walked.
type ReceiverState struct {
	SourceVersion ProtocolVersion
	SourceVendor  VendorID
	SourcePrefix  GuidPrefix
	// DestPrefix is the participant the following submessages are for;
	// GuidPrefixUnknown (the initial value) means the receiving participant
	// or everyone.
	DestPrefix GuidPrefix
	// HaveTimestamp and Timestamp are the source timestamp from INFO_TS.
	HaveTimestamp bool
	Timestamp     Time
	// UnicastReply and MulticastReply hold the first NumUnicastReply /
	// NumMulticastReply locators of the latest INFO_REPLY. Empty means
	// "reply to the source address" (the spec's initial value).
	UnicastReply      [MaxReplyLocators]Locator
	NumUnicastReply   int
	MulticastReply    [MaxReplyLocators]Locator
	NumMulticastReply int
}

// SourceGUID returns the GUID of entity e of the current source participant.
func (s *ReceiverState) SourceGUID(e EntityID) GUID { return GUID{Prefix: s.SourcePrefix, Entity: e} }

// Reader walks the submessages of one RTPS message without allocating.
// All slices it yields alias the buffer passed to Reset; copy them if they
// must outlive the buffer. A Reader may be reused for many messages.
//
//	var r wire.Reader
//	if err := r.Reset(buf); err != nil { ... }
//	for {
//		sm, err := r.Next()
//		if err != nil { /* the rest of the message is ignored */ break }
//		if sm == nil { break }
//		switch sm.ID { case wire.SubmsgData: ... r.State.SourcePrefix ... }
//	}
type Reader struct {
	Header Header
	State  ReceiverState

	msg []byte
	off int
	sub Submessage
	err error
}

// Reset parses the header of msg and prepares to walk its submessages.
func (r *Reader) Reset(msg []byte) error {
	h, err := DecodeHeader(msg)
	r.msg = msg
	r.off = HeaderSize
	r.err = err
	r.Header = h
	// Field by field: the reply locator arrays need no clearing.
	st := &r.State
	st.SourceVersion = h.Version
	st.SourceVendor = h.Vendor
	st.SourcePrefix = h.Prefix
	st.DestPrefix = GuidPrefix{}
	st.HaveTimestamp = false
	st.Timestamp = Time{}
	st.NumUnicastReply = 0
	st.NumMulticastReply = 0
	return err
}

// Next returns the next known submessage, or (nil, nil) at the end of the
// message. PAD, vendor-specific (id >= 0x80) and unknown submessages are
// skipped. After an error every further call returns the same error: the
// spec says to ignore the rest of a message once a submessage is invalid.
func (r *Reader) Next() (*Submessage, error) {
	for {
		if r.err != nil {
			return nil, r.err
		}
		if r.off >= len(r.msg) {
			return nil, nil
		}
		rest := r.msg[r.off:]
		if len(rest) < SubmessageHeaderSize {
			r.err = fmt.Errorf("%w: submessage header at offset %d", ErrTruncated, r.off)
			return nil, r.err
		}
		id := SubmessageID(rest[0])
		flags := rest[1]
		var bo binary.ByteOrder = binary.BigEndian
		if flags&FlagEndianness != 0 {
			bo = binary.LittleEndian
		}
		length := int(bo.Uint16(rest[2:4]))
		body := rest[SubmessageHeaderSize:]
		if length == 0 && id != SubmsgPad && id != SubmsgInfoTS {
			// Extends to the end of the message.
			length = len(body)
		}
		if length > len(body) {
			r.err = fmt.Errorf("%w: %v length %d exceeds %d remaining bytes", ErrTruncated, id, length, len(body))
			return nil, r.err
		}
		body = body[:length]
		r.off += SubmessageHeaderSize + length
		known, err := r.decodeSub(id, flags, bo, body)
		if err != nil {
			r.err = err
			return nil, err
		}
		if known {
			return &r.sub, nil
		}
	}
}

func readSN(bo binary.ByteOrder, b []byte) SequenceNumber {
	return SequenceNumberFromHighLow(int32(bo.Uint32(b)), bo.Uint32(b[4:]))
}

func readEntity(b []byte) EntityID { return EntityID{b[0], b[1], b[2], b[3]} }

// decodeSNSet reads a SequenceNumberSet and returns the number of bytes used.
func decodeSNSet(bo binary.ByteOrder, b []byte, s *SequenceNumberSet) (int, error) {
	if len(b) < 12 {
		return 0, ErrTruncated
	}
	s.Base = readSN(bo, b)
	s.NumBits = bo.Uint32(b[8:])
	if s.NumBits > MaxSetBits {
		return 0, ErrSetTooLarge
	}
	words := int(s.NumBits+31) / 32
	n := 12 + 4*words
	if len(b) < n {
		return 0, ErrTruncated
	}
	s.Bitmap = [8]uint32{}
	for i := range words {
		s.Bitmap[i] = bo.Uint32(b[12+4*i:])
	}
	maskBitmap(&s.Bitmap, s.NumBits)
	return n, nil
}

func decodeFNSet(bo binary.ByteOrder, b []byte, s *FragmentNumberSet) (int, error) {
	if len(b) < 8 {
		return 0, ErrTruncated
	}
	s.Base = bo.Uint32(b)
	s.NumBits = bo.Uint32(b[4:])
	if s.NumBits > MaxSetBits {
		return 0, ErrSetTooLarge
	}
	words := int(s.NumBits+31) / 32
	n := 8 + 4*words
	if len(b) < n {
		return 0, ErrTruncated
	}
	s.Bitmap = [8]uint32{}
	for i := range words {
		s.Bitmap[i] = bo.Uint32(b[8+4*i:])
	}
	maskBitmap(&s.Bitmap, s.NumBits)
	return n, nil
}

func short(id SubmessageID, have, need int) error {
	return fmt.Errorf("%w: %v body %d bytes, need %d", ErrTruncated, id, have, need)
}

// decodeSub decodes one submessage body into r.sub and applies receiver
// state changes. It reports whether the submessage is one that Next yields.
func (r *Reader) decodeSub(id SubmessageID, flags byte, bo binary.ByteOrder, b []byte) (bool, error) {
	s := &r.sub
	s.ID = id
	s.Flags = flags
	le := flags&FlagEndianness != 0
	switch id {
	case SubmsgData:
		if len(b) < 20 {
			return false, short(id, len(b), 20)
		}
		d := &s.Data
		otiq := int(bo.Uint16(b[2:4]))
		d.ReaderID = readEntity(b[4:])
		d.WriterID = readEntity(b[8:])
		d.WriterSN = readSN(bo, b[12:])
		d.Key = flags&FlagDataKey != 0
		d.NonStandardPayload = flags&FlagDataNonStd != 0
		if flags&FlagDataData != 0 && d.Key {
			return false, fmt.Errorf("%w: DATA with both D and K flags", ErrMalformed)
		}
		p := 4 + otiq
		if otiq < 16 || p > len(b) {
			return false, fmt.Errorf("%w: DATA octetsToInlineQos %d", ErrMalformed, otiq)
		}
		d.InlineQos = ParameterList{}
		if flags&FlagDataInlineQos != 0 {
			n, err := scanParameterList(b[p:], !le)
			if err != nil {
				return false, fmt.Errorf("DATA inline QoS: %w", err)
			}
			d.InlineQos = ParameterList{Data: b[p : p+n : p+n], BigEndian: !le}
			p += n
		}
		d.SerializedPayload = nil
		if flags&(FlagDataData|FlagDataKey) != 0 {
			d.SerializedPayload = b[p:len(b):len(b)]
		}
		return true, nil

	case SubmsgDataFrag:
		if len(b) < 32 {
			return false, short(id, len(b), 32)
		}
		d := &s.DataFrag
		otiq := int(bo.Uint16(b[2:4]))
		d.ReaderID = readEntity(b[4:])
		d.WriterID = readEntity(b[8:])
		d.WriterSN = readSN(bo, b[12:])
		d.FragmentStartingNum = bo.Uint32(b[20:])
		d.FragmentsInSubmessage = bo.Uint16(b[24:])
		d.FragmentSize = bo.Uint16(b[26:])
		d.SampleSize = bo.Uint32(b[28:])
		d.Key = flags&FlagDataFragKey != 0
		d.NonStandardPayload = flags&FlagDataFragNonStd != 0
		p := 4 + otiq
		if otiq < 28 || p > len(b) {
			return false, fmt.Errorf("%w: DATA_FRAG octetsToInlineQos %d", ErrMalformed, otiq)
		}
		if d.FragmentStartingNum == 0 || d.FragmentSize == 0 || d.FragmentsInSubmessage == 0 {
			return false, fmt.Errorf("%w: DATA_FRAG fragment numbering", ErrMalformed)
		}
		start := uint64(d.FragmentStartingNum-1) * uint64(d.FragmentSize)
		if start >= uint64(d.SampleSize) {
			return false, fmt.Errorf("%w: DATA_FRAG fragment %d beyond sample size %d", ErrMalformed, d.FragmentStartingNum, d.SampleSize)
		}
		d.InlineQos = ParameterList{}
		if flags&FlagDataFragInlineQos != 0 {
			n, err := scanParameterList(b[p:], !le)
			if err != nil {
				return false, fmt.Errorf("DATA_FRAG inline QoS: %w", err)
			}
			d.InlineQos = ParameterList{Data: b[p : p+n : p+n], BigEndian: !le}
			p += n
		}
		want := min(uint64(d.FragmentsInSubmessage)*uint64(d.FragmentSize), uint64(d.SampleSize)-start)
		if uint64(len(b)-p) < want {
			return false, fmt.Errorf("%w: DATA_FRAG has %d fragment bytes, needs %d", ErrTruncated, len(b)-p, want)
		}
		d.Fragments = b[p : p+int(want) : p+int(want)]
		return true, nil

	case SubmsgHeartbeat:
		if len(b) < 28 {
			return false, short(id, len(b), 28)
		}
		h := &s.Heartbeat
		h.ReaderID = readEntity(b)
		h.WriterID = readEntity(b[4:])
		h.FirstSN = readSN(bo, b[8:])
		h.LastSN = readSN(bo, b[16:])
		h.Count = Count(bo.Uint32(b[24:]))
		h.Final = flags&FlagHeartbeatFinal != 0
		h.Liveliness = flags&FlagHeartbeatLiveliness != 0
		return true, nil

	case SubmsgAckNack:
		if len(b) < 24 {
			return false, short(id, len(b), 24)
		}
		a := &s.AckNack
		a.ReaderID = readEntity(b)
		a.WriterID = readEntity(b[4:])
		n, err := decodeSNSet(bo, b[8:], &a.ReaderSNState)
		if err != nil {
			return false, fmt.Errorf("ACKNACK readerSNState: %w", err)
		}
		if len(b) < 8+n+4 {
			return false, short(id, len(b), 8+n+4)
		}
		a.Count = Count(bo.Uint32(b[8+n:]))
		a.Final = flags&FlagAckNackFinal != 0
		return true, nil

	case SubmsgGap:
		if len(b) < 28 {
			return false, short(id, len(b), 28)
		}
		g := &s.Gap
		g.ReaderID = readEntity(b)
		g.WriterID = readEntity(b[4:])
		g.GapStart = readSN(bo, b[8:])
		if _, err := decodeSNSet(bo, b[16:], &g.GapList); err != nil {
			return false, fmt.Errorf("GAP gapList: %w", err)
		}
		return true, nil

	case SubmsgNackFrag:
		if len(b) < 28 {
			return false, short(id, len(b), 28)
		}
		nf := &s.NackFrag
		nf.ReaderID = readEntity(b)
		nf.WriterID = readEntity(b[4:])
		nf.WriterSN = readSN(bo, b[8:])
		n, err := decodeFNSet(bo, b[16:], &nf.FragmentNumberState)
		if err != nil {
			return false, fmt.Errorf("NACK_FRAG fragmentNumberState: %w", err)
		}
		if len(b) < 16+n+4 {
			return false, short(id, len(b), 16+n+4)
		}
		nf.Count = Count(bo.Uint32(b[16+n:]))
		return true, nil

	case SubmsgHeartbeatFrag:
		if len(b) < 24 {
			return false, short(id, len(b), 24)
		}
		h := &s.HeartbeatFrag
		h.ReaderID = readEntity(b)
		h.WriterID = readEntity(b[4:])
		h.WriterSN = readSN(bo, b[8:])
		h.LastFragmentNum = bo.Uint32(b[16:])
		h.Count = Count(bo.Uint32(b[20:]))
		return true, nil

	case SubmsgInfoTS:
		t := &s.InfoTS
		t.Invalidate = flags&FlagInfoTSInvalidate != 0
		if t.Invalidate {
			t.Timestamp = Time{}
			r.State.HaveTimestamp = false
			r.State.Timestamp = Time{}
			return true, nil
		}
		if len(b) < 8 {
			return false, short(id, len(b), 8)
		}
		t.Timestamp = Time{Seconds: int32(bo.Uint32(b)), Fraction: bo.Uint32(b[4:])}
		r.State.HaveTimestamp = true
		r.State.Timestamp = t.Timestamp
		return true, nil

	case SubmsgInfoDst:
		if len(b) < 12 {
			return false, short(id, len(b), 12)
		}
		copy(s.InfoDst.Prefix[:], b[:12])
		r.State.DestPrefix = s.InfoDst.Prefix
		return true, nil

	case SubmsgInfoSrc:
		if len(b) < 20 {
			return false, short(id, len(b), 20)
		}
		is := &s.InfoSrc
		is.Version = ProtocolVersion{b[4], b[5]}
		is.Vendor = VendorID{b[6], b[7]}
		copy(is.Prefix[:], b[8:20])
		st := &r.State
		st.SourceVersion = is.Version
		st.SourceVendor = is.Vendor
		st.SourcePrefix = is.Prefix
		st.NumUnicastReply = 0
		st.NumMulticastReply = 0
		st.HaveTimestamp = false
		st.Timestamp = Time{}
		return true, nil

	case SubmsgInfoReply:
		st := &r.State
		n, err := decodeLocatorList(bo, b, &st.UnicastReply, &st.NumUnicastReply)
		if err != nil {
			return false, fmt.Errorf("INFO_REPLY: %w", err)
		}
		st.NumMulticastReply = 0
		if flags&FlagInfoReplyMulticast != 0 {
			if _, err := decodeLocatorList(bo, b[n:], &st.MulticastReply, &st.NumMulticastReply); err != nil {
				return false, fmt.Errorf("INFO_REPLY: %w", err)
			}
		}
		return true, nil

	case SubmsgInfoReplyIP4:
		need := 8
		if flags&FlagInfoReplyMulticast != 0 {
			need = 16
		}
		if len(b) < need {
			return false, short(id, len(b), need)
		}
		st := &r.State
		st.UnicastReply[0] = ip4Locator(bo, b)
		st.NumUnicastReply = 1
		st.NumMulticastReply = 0
		if need == 16 {
			st.MulticastReply[0] = ip4Locator(bo, b[8:])
			st.NumMulticastReply = 1
		}
		return true, nil
	}
	// PAD, vendor-specific and unknown submessages are skipped.
	return false, nil
}

func ip4Locator(bo binary.ByteOrder, b []byte) Locator {
	a := bo.Uint32(b)
	return LocatorUDPv4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)}, uint16(bo.Uint32(b[4:])))
}

func readLocator(bo binary.ByteOrder, b []byte) Locator {
	var l Locator
	l.Kind = int32(bo.Uint32(b))
	l.Port = bo.Uint32(b[4:])
	copy(l.Address[:], b[8:24])
	return l
}

// decodeLocatorList reads {u32 n, Locator[n]}, keeping at most MaxReplyLocators.
func decodeLocatorList(bo binary.ByteOrder, b []byte, dst *[MaxReplyLocators]Locator, num *int) (int, error) {
	if len(b) < 4 {
		return 0, ErrTruncated
	}
	n := bo.Uint32(b)
	if uint64(n)*24 > uint64(len(b)-4) {
		return 0, ErrTruncated
	}
	*num = 0
	for i := range int(n) {
		if i < MaxReplyLocators {
			dst[i] = readLocator(bo, b[4+24*i:])
			*num = i + 1
		}
	}
	return 4 + 24*int(n), nil
}

// IsFor reports whether the following submessages are addressed to the
// participant with prefix p (DestPrefix unknown means everyone).
func (s *ReceiverState) IsFor(p GuidPrefix) bool { return s.DestPrefix.IsZero() || s.DestPrefix == p }

// Valid reports whether the HEARTBEAT follows the spec's validity rules:
// firstSN >= 1, lastSN >= 0 and lastSN >= firstSN-1 (lastSN = firstSN-1
// means an empty history). Cyclone drops invalid heartbeats.
func (h *Heartbeat) Valid() bool {
	return h.FirstSN >= 1 && h.LastSN >= 0 && h.LastSN >= h.FirstSN-1
}

// Valid reports whether the GAP follows the spec's validity rules:
// gapStart >= 1 and gapList.base >= 1 (numBits <= 256 is checked by the decoder).
func (g *Gap) Valid() bool { return g.GapStart >= 1 && g.GapList.Base >= 1 }

// Valid reports whether the ACKNACK's bitmap base is >= 1, as the spec
// (and Cyclone) require. Fast DDS may send a preemptive ACKNACK with base
// 0; treat that like base 1 instead of rejecting it.
func (a *AckNack) Valid() bool { return a.ReaderSNState.Base >= 1 }
