package msg_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nros-go/nros/internal/fixture/testmsgs/test_msgs"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/nav_msgs"
	"github.com/nros-go/nros/msg/rcl_interfaces"
	"github.com/nros-go/nros/msg/sensor_msgs"
	"github.com/nros-go/nros/msg/tf2_msgs"
)

// fuzzGenerated checks, for arbitrary bytes, that decoding a generated
// type returns instead of panicking, and that whatever decodes re-encodes
// to bytes that decode and re-encode to themselves (bytes, not values, are
// compared, so NaN payloads are fine). Seeds: the bag samples of the type.
func fuzzGenerated(f *testing.F, fresh func() msg.Message, seedGlob string) {
	seeds, _ := filepath.Glob(filepath.Join("testdata/bags", seedGlob))
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data)
		}
	}
	f.Add(msg.Marshal(fresh(), true, nil))
	f.Add(msg.Marshal(fresh(), false, nil))
	f.Add([]byte{0, 1, 0, 0, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		first := fresh()
		if err := msg.Unmarshal(data, first); err != nil {
			return
		}
		for _, le := range []bool{true, false} {
			enc, err := msg.MarshalChecked(first, le, nil)
			if err != nil {
				t.Fatalf("a decoded value does not encode: %v", err)
			}
			second := fresh()
			if err := msg.Unmarshal(enc, second); err != nil {
				t.Fatalf("re-encoded sample does not decode: %v\n% x", err, enc)
			}
			if again := msg.Marshal(second, le, nil); !bytes.Equal(again, enc) {
				t.Fatalf("encoding not stable:\n% x\n% x", enc, again)
			}
		}
	})
}

func FuzzUnmarshalImu(f *testing.F) {
	fuzzGenerated(f, func() msg.Message { return new(sensor_msgs.Imu) }, "*Imu_*.cdr")
}

func FuzzUnmarshalOdometry(f *testing.F) {
	fuzzGenerated(f, func() msg.Message { return new(nav_msgs.Odometry) }, "*Odometry_*.cdr")
}

func FuzzUnmarshalTFMessage(f *testing.F) {
	fuzzGenerated(f, func() msg.Message { return new(tf2_msgs.TFMessage) }, "*TFMessage_*.cdr")
}

func FuzzUnmarshalParameterEvent(f *testing.F) {
	fuzzGenerated(f, func() msg.Message { return new(rcl_interfaces.ParameterEvent) }, "*ParameterEvent_*.cdr")
}

func FuzzUnmarshalMultiNested(f *testing.F) {
	fuzzGenerated(f, func() msg.Message { return new(test_msgs.MultiNested) }, "*Arrays_*.cdr")
}
