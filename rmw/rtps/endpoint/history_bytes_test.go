package endpoint

import (
	"testing"

	"github.com/nros-go/nros/rmw/rtps/wire"
)

// MaxHistoryBytes bounds a KEEP_LAST history by payload bytes as well as
// by depth; the newest sample always stays.
func TestWriterMaxHistoryBytes(t *testing.T) {
	w, err := NewWriter(WriterConfig{Reliable: true, Depth: 100, MaxHistoryBytes: 1000}, OutputFunc(func([]wire.Locator, []byte) {}))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := w.Write(0, make([]byte, 100), 0); err != nil {
			t.Fatal(err)
		}
	}
	if st := w.Stats(); st.HistorySize != 10 || st.HistoryBytes != 1000 {
		t.Fatalf("history %d samples, %d bytes; want 10, 1000", st.HistorySize, st.HistoryBytes)
	}
	if _, err := w.Write(0, make([]byte, 5000), 0); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.HistorySize != 1 || st.HistoryBytes != 5000 {
		t.Fatalf("history %d samples, %d bytes; want the big one alone", st.HistorySize, st.HistoryBytes)
	}
}
