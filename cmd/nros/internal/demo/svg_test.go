package demo

import (
	"bytes"
	"context"
	"encoding/xml"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/nros-go/nros"
)

// The picture of the default script: well-formed SVG with one red dot per
// ROS-timer activation, one blue tick per wall-timer activation, and every
// step's label.
func TestDemoSVG(t *testing.T) {
	for _, tc := range []struct {
		policy nros.TimerOverrunPolicy
		ros    int
	}{{nros.OverrunSkip, 68}, {nros.OverrunCatchUp, 168}} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var svg bytes.Buffer
				if err := Run(context.Background(), Config{Overrun: tc.policy, SVG: &svg}); err != nil {
					t.Fatal(err)
				}
				dec := xml.NewDecoder(bytes.NewReader(svg.Bytes()))
				ros, wall := 0, 0
				var labels []string
				inText := false
				for {
					tok, err := dec.Token()
					if err != nil {
						if err.Error() != "EOF" {
							t.Fatalf("not well-formed SVG: %v", err)
						}
						break
					}
					switch el := tok.(type) {
					case xml.StartElement:
						inText = el.Name.Local == "text"
						for _, a := range el.Attr {
							if a.Name.Local == "class" && a.Value == "ros" {
								ros++
							}
							if a.Name.Local == "class" && a.Value == "wall" {
								wall++
							}
						}
					case xml.CharData:
						if inText {
							labels = append(labels, string(el))
						}
					case xml.EndElement:
						inText = false
					}
				}
				if ros != tc.ros || wall != 90 {
					t.Fatalf("%d ROS dots, %d wall ticks; want %d and 90", ros, wall, tc.ros)
				}
				all := strings.Join(labels, "|")
				for _, want := range []string{"pause 1s", "play 2x 1s", "play 0.5x 2s", "jump -5s", "jump +10s", "ROS time", "wall time"} {
					if !strings.Contains(all, want) {
						t.Fatalf("no label %q in %q", want, all)
					}
				}
			})
		})
	}
}
