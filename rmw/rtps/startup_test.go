package rtps

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros/rmw/rtps/udp"
)

// Twenty (and a hundred) participants started at once (a launch file) on loopback with
// multicast all know each other within a few seconds. Every one hears the
// others' SPDP through the group and, until a peer has answered, sends it
// only probes, which share one small budget against reflection floods; the
// budget once let a participant probe only about a dozen peers, so a pair
// that had both run out waited for the 30 s probe round (a third of the
// pairs of a 20-process launch matched only after 37 s, in one burst).
func TestLaunchDiscoversAll(t *testing.T) {
	for _, n := range []int{20, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testLaunch(t, n) })
	}
}

func testLaunch(t *testing.T, n int) {
	synctest.Test(t, func(t *testing.T) {
		nw := udp.NewMemNetwork()
		var trs []*Transport
		for i := range n {
			tr := newMem(t, nw, func(c *Config) { c.ProbeParticipants, c.MaxParticipantID = 32, 32 })
			defer tr.Close()
			mustPub(t, tr, fmt.Sprintf("/t%d", i), reliable, nil)
			trs = append(trs, tr)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		for i, tr := range trs {
			st := tr.Stats().Discovery
			if st.Participants != n-1 {
				t.Errorf("participant %d: %d confirmed, %d unconfirmed after 5 s, want %d confirmed (probes sent %d, limited %d)",
					i, st.Participants, st.Unconfirmed, n-1, st.ProbesSent, st.ProbesLimited)
			}
		}
	})
}
