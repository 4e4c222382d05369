package cdr

// Primitive lists the Go types that map one-to-one onto CDR primitives
// (ROS char and byte are uint8 here).
type Primitive interface {
	bool | int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64 | float32 | float64
}

// PrimitiveSize returns the wire size (and alignment) of T.
func PrimitiveSize[T Primitive]() int {
	var z T
	switch any(z).(type) {
	case bool, int8, uint8:
		return 1
	case int16, uint16:
		return 2
	case int32, uint32, float32:
		return 4
	}
	return 8
}

// WriteArray writes the elements of a fixed-size array (no count).
func WriteArray[T Primitive](e *Encoder, v []T) {
	switch s := any(v).(type) {
	case []uint8:
		e.buf = append(e.buf, s...)
	case []int8:
		for _, x := range s {
			e.WriteInt8(x)
		}
	case []bool:
		for _, x := range s {
			e.WriteBool(x)
		}
	case []int16:
		for _, x := range s {
			e.WriteInt16(x)
		}
	case []uint16:
		for _, x := range s {
			e.WriteUint16(x)
		}
	case []int32:
		for _, x := range s {
			e.WriteInt32(x)
		}
	case []uint32:
		for _, x := range s {
			e.WriteUint32(x)
		}
	case []float32:
		for _, x := range s {
			e.WriteFloat32(x)
		}
	case []int64:
		for _, x := range s {
			e.WriteInt64(x)
		}
	case []uint64:
		for _, x := range s {
			e.WriteUint64(x)
		}
	case []float64:
		for _, x := range s {
			e.WriteFloat64(x)
		}
	}
}

// WriteSequence writes a sequence of primitives: the uint32 count, then the
// elements.
func WriteSequence[T Primitive](e *Encoder, v []T) {
	e.WriteSequenceLen(len(v))
	WriteArray(e, v)
}

// ReadArray fills dst from a fixed-size array of primitives. On error the
// remaining elements are zero.
func ReadArray[T Primitive](d *Decoder, dst []T) {
	switch s := any(dst).(type) {
	case []uint8:
		d.ReadOctetArray(s)
	case []int8:
		for i := range s {
			s[i] = d.ReadInt8()
		}
	case []bool:
		for i := range s {
			s[i] = d.ReadBool()
		}
	case []int16:
		for i := range s {
			s[i] = d.ReadInt16()
		}
	case []uint16:
		for i := range s {
			s[i] = d.ReadUint16()
		}
	case []int32:
		for i := range s {
			s[i] = d.ReadInt32()
		}
	case []uint32:
		for i := range s {
			s[i] = d.ReadUint32()
		}
	case []float32:
		for i := range s {
			s[i] = d.ReadFloat32()
		}
	case []int64:
		for i := range s {
			s[i] = d.ReadInt64()
		}
	case []uint64:
		for i := range s {
			s[i] = d.ReadUint64()
		}
	case []float64:
		for i := range s {
			s[i] = d.ReadFloat64()
		}
	}
}

// ReadSequence reads a sequence of primitives, reusing dst's storage when
// it is large enough. The count is checked against the remaining input
// before anything is allocated. On error it returns dst[:0].
func ReadSequence[T Primitive](d *Decoder, dst []T) []T {
	return ReadBoundedSequence(d, dst, -1)
}

// ReadBoundedSequence is ReadSequence for sequence<T, max> (max < 0 means
// unbounded).
func ReadBoundedSequence[T Primitive](d *Decoder, dst []T, max int) []T {
	n := d.readSeqLen(PrimitiveSize[T](), max)
	if d.err != nil {
		return dst[:0]
	}
	// ReadArray overwrites every element (and an error returns dst[:0]),
	// so reused storage needs no clearing first.
	if cap(dst) >= n {
		dst = dst[:n]
	} else {
		dst = make([]T, n)
	}
	ReadArray(d, dst)
	if d.err != nil {
		return dst[:0]
	}
	return dst
}

// WriteSequenceFunc writes a sequence of any element type: the count, then
// put for each element.
func WriteSequenceFunc[T any](e *Encoder, v []T, put func(*Encoder, *T)) {
	e.WriteSequenceLen(len(v))
	for i := range v {
		put(e, &v[i])
	}
}

// ReadSequenceFunc reads a sequence of any element type, calling get for
// each element. minElemSize is the smallest wire size of one element (for
// a string 4, for a struct the sum of its smallest members); the count is
// checked against it before allocating. On error it returns dst[:0].
func ReadSequenceFunc[T any](d *Decoder, dst []T, minElemSize int, get func(*Decoder, *T)) []T {
	return ReadBoundedSequenceFunc(d, dst, minElemSize, -1, get)
}

// ReadBoundedSequenceFunc is ReadSequenceFunc for sequence<T, max> (max < 0
// means unbounded).
func ReadBoundedSequenceFunc[T any](d *Decoder, dst []T, minElemSize, max int, get func(*Decoder, *T)) []T {
	n := d.readSeqLen(minElemSize, max)
	if d.err != nil {
		return dst[:0]
	}
	dst = grow(dst, n)
	for i := range dst {
		if d.err != nil {
			break
		}
		get(d, &dst[i])
	}
	if d.err != nil {
		return dst[:0]
	}
	return dst
}

// WriteStrings writes a sequence of strings.
func (e *Encoder) WriteStrings(v []string) {
	e.WriteSequenceLen(len(v))
	for _, s := range v {
		e.WriteString(s)
	}
}

// ReadStrings reads a sequence of strings into dst[:0].
func (d *Decoder) ReadStrings(dst []string) []string {
	return ReadSequenceFunc(d, dst, 4, func(d *Decoder, s *string) { *s = d.ReadString() })
}

// grow returns dst resized to n elements, zeroed, reusing its storage when
// possible.
func grow[T any](dst []T, n int) []T {
	if cap(dst) >= n {
		dst = dst[:n]
		clear(dst)
		return dst
	}
	return make([]T, n)
}
