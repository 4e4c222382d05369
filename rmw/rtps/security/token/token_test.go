package token

import (
	"bytes"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"testing"
)

func TestRoundTripAndPropagate(t *testing.T) {
	h := DataHolder{
		ClassID: "DDS:Auth:PKI-DH:1.0",
		Properties: []Property{
			{Name: "dds.cert.sn", Value: "/CN=/talker", Propagate: true},
			{Name: "local.only", Value: "x"},
		},
		BinaryProperties: []BinaryProperty{{Name: "b", Value: []byte{1, 2, 3}, Propagate: true}},
	}
	for _, le := range []bool{true, false} {
		b := h.Marshal(le)
		if len(b)%4 != 0 {
			t.Fatalf("not padded: %d", len(b))
		}
		got, err := Unmarshal(b, le)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Properties) != 1 || got.Properties[0].Value != "/CN=/talker" {
			t.Fatalf("properties %+v (the non-propagated one must stay local)", got.Properties)
		}
		if v, ok := got.BinProp("b"); !ok || !bytes.Equal(v, []byte{1, 2, 3}) {
			t.Fatalf("binary %v", v)
		}
	}
}

// TestBinaryPropertiesBE pins the hash/signature input layout: big endian,
// strings with their NUL, octet sequences padded before the next uint32.
func TestBinaryPropertiesBE(t *testing.T) {
	// Encode only the binary sequence to check the exact bytes.
	got := hex.EncodeToString(EncodeBinaryPropertiesBE([]BinaryProperty{
		{Name: "c.id", Value: []byte{0xaa}, Propagate: true},
		{Name: "dh1", Value: []byte{0xbb, 0xcc}, Propagate: true},
	}))
	exp := "00000002" + "00000005" + hex.EncodeToString([]byte("c.id\x00")) + "000000" + "00000001" + "aa" + "000000" +
		"00000004" + hex.EncodeToString([]byte("dh1\x00")) + "00000002" + "bbcc"
	if got != exp {
		t.Fatalf("got  %s\nwant %s", got, exp)
	}
}

func FuzzUnmarshal(f *testing.F) {
	h := DataHolder{ClassID: "DDS:Access:Permissions:1.0", Properties: []Property{{Name: "dds.perm_ca.sn", Value: "x", Propagate: true}},
		BinaryProperties: []BinaryProperty{{Name: "v", Value: []byte{1}, Propagate: true}}}
	f.Add(h.Marshal(true), true)
	f.Add(h.Marshal(false), false)
	f.Fuzz(func(t *testing.T, b []byte, le bool) {
		got, err := Unmarshal(b, le)
		if err != nil {
			return
		}
		again, err := Unmarshal(got.Marshal(le), le)
		if err != nil || !again.Equal(&got) {
			t.Fatalf("re-encoding changed the token: %v", err)
		}
	})
}

func TestOnelineName(t *testing.T) {
	// the DER of "CN=/talker", "O=ROS" as pkix.Name would write it
	name := pkix.Name{CommonName: "/talker", Organization: []string{"ROS"}}
	der, err := asn1.Marshal(name.ToRDNSequence())
	if err != nil {
		t.Fatal(err)
	}
	// as Fast DDS's dds.cert.sn shows OpenSSL writes it: '/' escaped
	if got := OnelineName(der); got != `/O=ROS/CN=\/talker` {
		t.Fatalf("%q", got)
	}
}
