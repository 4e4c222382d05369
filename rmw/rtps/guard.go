package rtps

// GuardStats counts what the user endpoints of a Transport refused to
// believe or stopped doing because a peer never answered (issue #19); the
// discovery side is in Stats.Discovery (evicted, refused and unconfirmed
// participants, probes and SEDP sends held back). Counts are those of the
// endpoints open now.
type GuardStats struct {
	// JumpsReverted counts HEARTBEAT or GAP claims that SNs were gone
	// which the writer's own DATA then proved false (a forged HEARTBEAT
	// with a real writer's GUID): the subscription went back and lost
	// nothing.
	JumpsReverted uint64
	// WritersSilenced counts matched remote writers that never answered
	// a subscription's preemptive ACKNACKs, which then stopped.
	WritersSilenced uint64
	// ReadersSilenced counts matched remote readers that never answered a
	// publisher's HEARTBEATs, which then stopped.
	ReadersSilenced uint64
}

// guardStatsLocked sums GuardStats over the open endpoints (t.mu held).
func (t *Transport) guardStatsLocked() GuardStats {
	var g GuardStats
	for _, s := range t.subs {
		rs := s.r.Stats()
		g.JumpsReverted += rs.JumpsReverted
		g.WritersSilenced += rs.WritersSilenced
	}
	for _, p := range t.pubs {
		g.ReadersSilenced += p.w.Stats().ReadersSilenced
	}
	return g
}
