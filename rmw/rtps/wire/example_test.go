package wire_test

import (
	"fmt"
	"time"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

// Building an SPDP announcement (INFO_TS + DATA) and reading it back.
func Example_spdp() {
	prefix := wire.GuidPrefix{0x01, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	vendor := wire.VendorID{0x01, 0xff}
	pd := wire.ParticipantData{
		ProtocolVersion:            wire.ProtocolVersion21,
		VendorID:                   vendor,
		GuidPrefix:                 prefix,
		BuiltinEndpoints:           wire.BuiltinEndpointsMinimal,
		LeaseDuration:              wire.DurationFromTime(20 * time.Second),
		MetatrafficUnicastLocators: []wire.Locator{wire.LoopbackUDPv4(7410)},
		DefaultUnicastLocators:     []wire.Locator{wire.LoopbackUDPv4(7411)},
		UserData:                   []byte("enclave=/;"),
	}
	payload, err := pd.Encode(nil)
	if err != nil {
		panic(err)
	}
	var b wire.Builder
	b.Reset(make([]byte, 0, 1500), wire.Header{Version: wire.ProtocolVersion21, Vendor: vendor, Prefix: prefix})
	b.InfoTS(wire.TimeFromNanos(1_700_000_000_000_000_000))
	if err := b.Data(&wire.Data{
		ReaderID:          wire.EntityIDSPDPReader,
		WriterID:          wire.EntityIDSPDPWriter,
		WriterSN:          1,
		SerializedPayload: payload,
	}); err != nil {
		panic(err)
	}

	var r wire.Reader
	if err := r.Reset(b.Message()); err != nil {
		panic(err)
	}
	for {
		sm, err := r.Next()
		if err != nil {
			panic(err)
		}
		if sm == nil {
			break
		}
		if sm.ID != wire.SubmsgData || sm.Data.WriterID != wire.EntityIDSPDPWriter {
			continue
		}
		var got wire.ParticipantData
		if err := got.Decode(sm.Data.SerializedPayload); err != nil {
			panic(err)
		}
		enclave, _ := got.Enclave()
		fmt.Println(r.State.SourceGUID(sm.Data.WriterID), got.GUID(), enclave, got.MetatrafficUnicastLocators[0], got.LeaseDuration.Std())
	}
	// Output: 01ff0102.03040506.0708090a|000100c2 01ff0102.03040506.0708090a|000001c1 / udpv4:127.0.0.1:7410 20s
}

// Answering a HEARTBEAT with an ACKNACK that asks for SNs 3 and 5.
func Example_ackNack() {
	var set wire.SequenceNumberSet
	set.Base = 3
	set.Add(3)
	set.Add(5)
	var b wire.Builder
	b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: wire.VendorID{0x01, 0xff}})
	b.InfoDst(wire.GuidPrefix{0x01, 0x10})
	if err := b.AckNack(&wire.AckNack{
		ReaderID:      wire.NewEntityID(1, wire.EntityKindReaderNoKey),
		WriterID:      wire.NewEntityID(1, wire.EntityKindWriterNoKey),
		ReaderSNState: set,
		Count:         1,
	}); err != nil {
		panic(err)
	}
	var r wire.Reader
	_ = r.Reset(b.Message())
	for sm, _ := r.Next(); sm != nil; sm, _ = r.Next() {
		if sm.ID == wire.SubmsgAckNack {
			fmt.Println(sm.AckNack.ReaderSNState.AppendMembers(nil), sm.AckNack.ReaderSNState.NumBits, r.State.IsFor(wire.GuidPrefix{0x01, 0x10}))
		}
	}
	// Output: [3 5] 3 true
}
