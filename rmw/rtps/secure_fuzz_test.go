package rtps

import (
	"bytes"
	"testing"

	"github.com/nros-go/nros/rmw/rtps/security/access"
	"github.com/nros-go/nros/rmw/rtps/security/crypto"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// FuzzSecureUnprotect feeds arbitrary datagrams to the incoming security
// filter of a participant that shares keys with one authenticated peer:
// it must never panic, and what it lets through must be an RTPS message
// the normal walk can take.
func FuzzSecureUnprotect(f *testing.F) {
	peer := wire.GuidPrefix{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	km, err := crypto.NewKeyMaterial(crypto.KindAES256GCM, crypto.KeyID{0, 0, 0, 7}, nil)
	if err != nil {
		f.Fatal(err)
	}
	snd, err := crypto.NewSender(km, crypto.SenderOptions{})
	if err != nil {
		f.Fatal(err)
	}
	gmac, _ := crypto.NewKeyMaterial(crypto.KindAES256GMAC, crypto.KeyID{0, 0, 0, 8}, nil)
	part, _ := crypto.NewSender(gmac, crypto.SenderOptions{})
	newState := func() *secState {
		t := &Transport{route: map[wire.GUID][]*Subscription{}}
		s := &secState{t: t, ac: &access.Local{Rule: &access.DomainRule{}}, local: map[wire.EntityID]*secLocal{},
			remotes: map[wire.GuidPrefix]*secRemote{}, ignored: map[wire.GuidPrefix]bool{}}
		s.part = part
		r := &secRemote{prefix: peer, authenticated: true, openers: map[crypto.KeyID]*crypto.Opener{}}
		for _, k := range []crypto.KeyMaterial{km, gmac} {
			o, _ := crypto.NewOpener(k, &s.ctr)
			r.openers[k.SenderKeyID] = o
		}
		s.remotes[peer] = r
		return s
	}
	// Seeds: a plain DATA, the same protected per submessage, and the
	// whole message protected.
	var b wire.Builder
	b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: Vendor, Prefix: peer})
	b.InfoTS(wire.TimeFromNanos(1))
	_ = b.Data(&wire.Data{WriterID: wire.NewEntityID(1, wire.EntityKindWriterNoKey), WriterSN: 1, SerializedPayload: []byte{0, 1, 0, 0, 'h', 'i', 0, 0}})
	plain := b.Bytes()
	f.Add(plain)
	s0 := newState()
	sub, err := s0.protectSubmessages(nil, plain, func(wire.EntityID) (*crypto.Sender, []*crypto.ReceiverKey) { return snd, nil })
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sub)
	whole, err := part.EncodeMessage(nil, sub, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(whole)
	for _, m := range [][]byte{sub, whole} {
		if out := newState().unprotect(m); out == nil || !bytes.Contains(out, []byte{'h', 'i', 0, 0}) {
			f.Fatalf("a seed does not decode: %x", out)
		}
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		s := newState()
		out := s.unprotect(msg)
		if out == nil {
			return
		}
		var r wire.Reader
		if r.Reset(out) != nil {
			return
		}
		for {
			sm, err := r.Next()
			if err != nil || sm == nil {
				break
			}
		}
	})
}
