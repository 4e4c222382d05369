package timeline

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"
)

func TestTimelineSVG(t *testing.T) {
	var none *Timeline
	none.Add(Clock, 0, 1) // a nil timeline records nothing, and does not panic

	tl := &Timeline{}
	const epoch = int64(1_570_475_163 * time.Second)
	for i := range 200 {
		w := time.Duration(i) * 10 * time.Millisecond
		sim := epoch + int64(w)*2%int64(time.Second) // a 2x clock that loops every 0.5 s of wall time
		tl.Add(Clock, w, sim)
	}
	tl.Add(Ros, time.Second, epoch)
	var b bytes.Buffer
	if err := tl.WriteSVG(&b, "loops <&>", []Span{{Label: "play"}, {Start: time.Second, Label: "loop"}}, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&b)
	var text []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
		if c, ok := tok.(xml.CharData); ok {
			text = append(text, string(c))
		}
	}
	all := strings.Join(text, "|")
	for _, want := range []string{"loops <&>", "ROS time − 157047516", "/clock samples (200)", "ROS-timer activation (1)", "play", "loop"} {
		if !strings.Contains(all, want) {
			t.Fatalf("no %q in %q", want, all)
		}
	}
	if strings.Contains(all, "wall-timer") {
		t.Fatal("a wall-timer legend with no wall-timer activation")
	}
}
