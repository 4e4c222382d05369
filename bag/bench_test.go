package bag

import (
	"io"
	"path/filepath"
	"testing"
)

// BenchmarkRead is the raw read rate of the largest shared bag (the
// ceiling for bag play): go test -run '^$' -bench Read ./bag/
func BenchmarkRead(b *testing.B) {
	bg, err := Open(filepath.Join(testBags, "walker_galactic_clock_sqlite3"))
	if err != nil {
		b.Fatal(err)
	}
	defer bg.Close()
	var msgs, bytes int64
	for b.Loop() {
		r, err := bg.Messages(ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			m, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			msgs++
			bytes += int64(len(m.Data))
		}
		r.Close()
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(msgs)/s, "msgs/s")
	b.ReportMetric(float64(bytes)/1e6/s, "MB/s")
}
