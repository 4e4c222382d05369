// Package token is the DDS Security DataHolder (Token) type and its CDR
// codec, shared by the authentication, access-control and crypto plugins:
// IdentityToken, PermissionsToken, the handshake message tokens, crypto
// tokens and the message_data of a ParticipantGenericMessage are all
// DataHolders.
//
//	DataHolder     { string class_id; Property[] properties; BinaryProperty[] binary_properties }
//	Property       { string name; string value }        (propagate is not on the wire)
//	BinaryProperty { string name; sequence<octet> value }
//
// Only properties whose Propagate flag is set are encoded, as both vendors do;
// decoded properties have it set.
package token

import (
	"bytes"
	"fmt"

	"github.com/nros-go/nros/cdr"
)

// Limits on decoded tokens (outside bytes): a count above these is an error.
const (
	MaxProperties = 64
	MaxValueSize  = 1 << 20
)

// Property is a name/value pair of a DataHolder.
type Property struct {
	Name, Value string
	Propagate   bool
}

// BinaryProperty is a name/octets pair of a DataHolder.
type BinaryProperty struct {
	Name      string
	Value     []byte
	Propagate bool
}

// DataHolder is a token: a class id and its properties.
type DataHolder struct {
	ClassID          string
	Properties       []Property
	BinaryProperties []BinaryProperty
}

// IsNil reports whether h is the nil token (no class id, no properties).
func (h *DataHolder) IsNil() bool {
	return h == nil || (h.ClassID == "" && len(h.Properties) == 0 && len(h.BinaryProperties) == 0)
}

// Prop returns the value of the named property.
func (h *DataHolder) Prop(name string) (string, bool) {
	for _, p := range h.Properties {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// BinProp returns the value of the named binary property.
func (h *DataHolder) BinProp(name string) ([]byte, bool) {
	for _, p := range h.BinaryProperties {
		if p.Name == name {
			return p.Value, true
		}
	}
	return nil, false
}

// Equal reports whether two tokens carry the same class id and properties in
// the same order.
func (h *DataHolder) Equal(o *DataHolder) bool {
	if h.ClassID != o.ClassID || len(h.Properties) != len(o.Properties) || len(h.BinaryProperties) != len(o.BinaryProperties) {
		return false
	}
	for i := range h.Properties {
		if h.Properties[i].Name != o.Properties[i].Name || h.Properties[i].Value != o.Properties[i].Value {
			return false
		}
	}
	for i := range h.BinaryProperties {
		if h.BinaryProperties[i].Name != o.BinaryProperties[i].Name || !bytes.Equal(h.BinaryProperties[i].Value, o.BinaryProperties[i].Value) {
			return false
		}
	}
	return true
}

// Encode writes h (the propagated properties only) to e.
func (h *DataHolder) Encode(e *cdr.Encoder) {
	e.WriteString(h.ClassID)
	n := 0
	for _, p := range h.Properties {
		if p.Propagate {
			n++
		}
	}
	e.WriteSequenceLen(n)
	for _, p := range h.Properties {
		if p.Propagate {
			e.WriteString(p.Name)
			e.WriteString(p.Value)
		}
	}
	EncodeBinaryProperties(e, h.BinaryProperties)
}

// EncodeBinaryProperties writes a sequence of the propagated binary
// properties. The PKI-DH hashes and signatures are computed over this
// encoding (big endian, aligned from the start of the buffer).
func EncodeBinaryProperties(e *cdr.Encoder, props []BinaryProperty) {
	n := 0
	for _, p := range props {
		if p.Propagate {
			n++
		}
	}
	e.WriteSequenceLen(n)
	for _, p := range props {
		if p.Propagate {
			e.WriteString(p.Name)
			e.WriteOctets(p.Value)
		}
	}
}

// Decode reads a DataHolder. Bad input leaves an error in d (see d.Err).
func Decode(d *cdr.Decoder) DataHolder {
	var h DataHolder
	h.ClassID = d.ReadString()
	n := d.ReadBoundedSequenceLen(8, MaxProperties)
	for i := 0; i < n && d.Err() == nil; i++ {
		name := d.ReadString()
		value := d.ReadBoundedString(MaxValueSize)
		h.Properties = append(h.Properties, Property{Name: name, Value: value, Propagate: true})
	}
	n = d.ReadBoundedSequenceLen(8, MaxProperties)
	for i := 0; i < n && d.Err() == nil; i++ {
		name := d.ReadString()
		m := d.ReadBoundedSequenceLen(1, MaxValueSize)
		v := make([]byte, m)
		d.ReadOctetArray(v)
		h.BinaryProperties = append(h.BinaryProperties, BinaryProperty{Name: name, Value: v, Propagate: true})
	}
	if d.Err() != nil {
		return DataHolder{}
	}
	return h
}

// Marshal encodes h alone, little endian, as the value of a parameter
// (PID_IDENTITY_TOKEN, PID_PERMISSIONS_TOKEN) in a PL_CDR_LE payload. The
// result is padded to a multiple of 4.
func (h *DataHolder) Marshal(littleEndian bool) []byte {
	e := cdr.NewEncoder(nil, littleEndian)
	e.ResetBody(nil, littleEndian)
	h.Encode(e)
	b := e.Bytes()
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// Unmarshal decodes one DataHolder from b (trailing padding is allowed).
func Unmarshal(b []byte, littleEndian bool) (DataHolder, error) {
	var d cdr.Decoder
	d.ResetBody(b, littleEndian)
	h := Decode(&d)
	if err := d.Err(); err != nil {
		return DataHolder{}, fmt.Errorf("token: %w", err)
	}
	return h, nil
}

// Seq encodes a sequence of DataHolders (message_data).
func EncodeSeq(e *cdr.Encoder, hs []DataHolder) {
	e.WriteSequenceLen(len(hs))
	for i := range hs {
		hs[i].Encode(e)
	}
}

// DecodeSeq reads a sequence of DataHolders.
func DecodeSeq(d *cdr.Decoder) []DataHolder {
	n := d.ReadBoundedSequenceLen(12, MaxProperties)
	var out []DataHolder
	for i := 0; i < n && d.Err() == nil; i++ {
		out = append(out, Decode(d))
	}
	if d.Err() != nil {
		return nil
	}
	return out
}

// EncodeBinaryPropertiesBE returns the big-endian CDR of a sequence of
// binary properties, aligned from its first byte: the input of the PKI-DH
// hash_c1/hash_c2 and of the handshake signatures.
func EncodeBinaryPropertiesBE(props []BinaryProperty) []byte {
	var e cdr.Encoder
	e.ResetBody(nil, false)
	EncodeBinaryProperties(&e, props)
	return e.Bytes()
}
