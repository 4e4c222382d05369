package crypto

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// Known answers from testdata/vectors.py (OpenSSL through python3-cryptography,
// from the spec's formulas): session keys, one unit of each transform, and
// the key-exchange material.
const (
	vecSessionKey256  = "27d3dd8f82e0a643796c0b964b78c787afc035806becd70b46aad91a7359dd79"
	vecReceiverKey256 = "06f6436c1e129744f25bb2896eb1025aa2c6a221e71e15b3846f82399858053d"
	vecSessionKey128  = "c949cc2c5e8b7c9baa764481b882d009"
	vecPayload256GCM  = "000000040000000100000005000000000000000b000000102d8443d87da0f1dc0e41e106651e0c9b982768aa68916155cb2259b569a0a2c600000000"
	vecSubmsg128GMAC  = "31011400000000010000000100000005000000000000000b07011c00000102030405060708090a0b0c0d0e0f101112131415161718191a1b320128001f1d059929aa79957393840ee3a239280000000100000002dd5b1d1a4821c30d5db91ad55d16cdae"
	vecMessage256GCM  = "5254505302010110a0a1a2a3a4a5a6a7a8a9aaab33011400000000040000000100000005000000000000000b300128000000002473ca04ea5dd394bf2c30816fa9d0cf5cbc5d242df5ff31f7e3491f007efacc45267785003401280018bb01cca6e413713ff633284e7091680000000100000002949a68140b7580af7447cbb952b0c33d"
	vecKxSalt         = "fb1389dab6ed4af3f8df372c2d6d226ec7504013ef338e5724c15edd11e838fa"
	vecKxKey          = "f290a589928decec78e8e9aa5e4854bb6c65884e5e3ac1bdf3ba9fe157fd159d"
)

func seq(from, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(from + i)
	}
	return b
}

// vecMaterial is the material of the vectors: salt 00.., key 20.., key id 1,
// receiver-specific key 40.. with id 2, truncated to kind's key size.
func vecMaterial(kind TransformKind) KeyMaterial {
	n := kind.KeySize()
	return KeyMaterial{Kind: kind, MasterSalt: seq(0, 32)[:n], SenderKeyID: KeyID{0, 0, 0, 1}, MasterSenderKey: seq(0x20, 32)[:n],
		ReceiverSpecificKeyID: KeyID{0, 0, 0, 2}, MasterReceiverSpecificKey: seq(0x40, 32)[:n]}
}

// vecSender starts at session 5 with the first IV suffix 11.
func vecSender(t *testing.T, kind TransformKind) (*Sender, *ReceiverKey) {
	t.Helper()
	km := vecMaterial(kind)
	s, err := NewSender(km, SenderOptions{Rand: bytes.NewReader([]byte{0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 10})})
	if err != nil {
		t.Fatal(err)
	}
	rk, err := NewReceiverKey(km)
	if err != nil {
		t.Fatal(err)
	}
	return s, rk
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVectorSessionKeys(t *testing.T) {
	sid := [4]byte{0, 0, 0, 5}
	km := vecMaterial(KindAES256GCM)
	if got := hex.EncodeToString(SessionKey(&km, sid)); got != vecSessionKey256 {
		t.Errorf("256-bit session key %s, want %s", got, vecSessionKey256)
	}
	if got := hex.EncodeToString(ReceiverSpecificSessionKey(&km, sid)); got != vecReceiverKey256 {
		t.Errorf("256-bit receiver-specific key %s, want %s", got, vecReceiverKey256)
	}
	km = vecMaterial(KindAES128GMAC)
	if got := hex.EncodeToString(SessionKey(&km, sid)); got != vecSessionKey128 {
		t.Errorf("128-bit session key %s, want %s", got, vecSessionKey128)
	}
}

func TestVectorKx(t *testing.T) {
	km := KxKeyMaterial(bytes.Repeat([]byte{0x11}, 32), bytes.Repeat([]byte{0x22}, 32), seq(0, 32))
	if km.Kind != KindAES256GCM || !km.SenderKeyID.IsZero() || !km.ReceiverSpecificKeyID.IsZero() {
		t.Errorf("kx material %v ids %x %x", km.Kind, km.SenderKeyID, km.ReceiverSpecificKeyID)
	}
	if got := hex.EncodeToString(km.MasterSalt); got != vecKxSalt {
		t.Errorf("kx salt %s, want %s", got, vecKxSalt)
	}
	if got := hex.EncodeToString(km.MasterSenderKey); got != vecKxKey {
		t.Errorf("kx key %s, want %s", got, vecKxKey)
	}
}

func TestVectorTransforms(t *testing.T) {
	t.Run("payload AES256_GCM", func(t *testing.T) {
		s, _ := vecSender(t, KindAES256GCM)
		got, err := s.EncodePayload(nil, []byte("ROS2 sec payload"))
		if err != nil || hex.EncodeToString(got) != vecPayload256GCM {
			t.Fatalf("got %x (%v)\nwant %s", got, err, vecPayload256GCM)
		}
		o := mustOpener(t, vecMaterial(KindAES256GCM))
		plain, err := o.DecodePayload(nil, unhex(t, vecPayload256GCM))
		if err != nil || string(plain) != "ROS2 sec payload" {
			t.Fatalf("decode: %q, %v", plain, err)
		}
	})
	t.Run("submessage AES128_GMAC", func(t *testing.T) {
		s, rk := vecSender(t, KindAES128GMAC)
		sub := append([]byte{0x07, 0x01, 28, 0}, seq(0, 28)...)
		got, err := s.EncodeSubmessage(nil, sub, []*ReceiverKey{rk})
		if err != nil || hex.EncodeToString(got) != vecSubmsg128GMAC {
			t.Fatalf("got %x (%v)\nwant %s", got, err, vecSubmsg128GMAC)
		}
		o := mustOpener(t, vecMaterial(KindAES128GMAC))
		plain, n, err := o.DecodeSubmessage(nil, unhex(t, vecSubmsg128GMAC))
		if err != nil || n != len(got) || !bytes.Equal(plain, sub) {
			t.Fatalf("decode: %x %d, %v", plain, n, err)
		}
	})
	t.Run("message AES256_GCM", func(t *testing.T) {
		s, rk := vecSender(t, KindAES256GCM)
		msg := append([]byte("RTPS\x02\x01\x01\x10"), seq(0xa0, 12)...)
		msg = append(msg, 0x09, 0x01, 8, 0)
		msg = append(msg, seq(0, 8)...)
		got, err := s.EncodeMessage(nil, msg, []*ReceiverKey{rk})
		if err != nil || hex.EncodeToString(got) != vecMessage256GCM {
			t.Fatalf("got %x (%v)\nwant %s", got, err, vecMessage256GCM)
		}
		o := mustOpener(t, vecMaterial(KindAES256GCM))
		plain, err := o.DecodeMessage(nil, unhex(t, vecMessage256GCM))
		if err != nil || !bytes.Equal(plain, msg) {
			t.Fatalf("decode: %x, %v", plain, err)
		}
	})
}

func mustOpener(t testing.TB, km KeyMaterial) *Opener {
	t.Helper()
	o, err := NewOpener(km, &Counters{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}
