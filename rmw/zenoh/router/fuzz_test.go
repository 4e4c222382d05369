package router

import (
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/session"
	"github.com/nros-go/nros/rmw/zenoh/wire"
)

var fuzzKeys = []string{"a", "a/b", "a/*", "a/**", "**", "a/b/c", "b/$*", "a/*/c", "@ros2_lv/0/x", "@ros2_lv/**"}

// FuzzTables drives the routing tables with what faces may send (in any
// order, ids and keys colliding) and checks after each step that nothing
// panics, every message sent encodes, and what the router declared to a
// face is what it should have: a subscriber or queryable only while the
// face's interests want it and another face has it, a token only while
// another face has it, with distinct ids; at the end, with every face
// gone, nothing is left.
func FuzzTables(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 2, 1, 3, 7, 1, 4, 2, 5, 6, 1, 2, 3, 7, 1, 5, 8, 2, 2, 9, 1, 0, 10, 2})
	f.Add([]byte{0, 1, 0, 2, 0, 3, 4, 1, 8, 3, 2, 1, 0, 4, 6, 3, 3, 1, 5, 7, 2, 2, 11, 2, 1, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		tb := newTables(time.Hour, &Stats{})
		ports := map[uint64]*recPort{}
		next := func() byte {
			if len(ops) == 0 {
				return 0
			}
			b := ops[0]
			ops = ops[1:]
			return b
		}
		kinds := []session.DeclKind{session.KindSubscriber, session.KindQueryable, session.KindToken}
		for step := 0; len(ops) > 0 && step < 500; step++ {
			op, fid := next()%12, uint64(next()%4+1)
			key := fuzzKeys[int(next())%len(fuzzKeys)]
			arg := next()
			switch op {
			case 0:
				if ports[fid] == nil {
					ports[fid] = &recPort{}
					tb.faceUp(fid, zidOf(byte(fid)), []wire.WhatAmI{wire.Client, wire.Peer, wire.Router}[arg%3], ports[fid], wire.Bits8)
				}
			case 1:
				tb.faceDown(fid)
				delete(ports, fid)
			case 2, 3:
				tb.declared(fid, session.Decl{Kind: kinds[arg%3], ID: uint32(arg >> 2 % 4), Key: key, Complete: arg&0x80 != 0})
			case 4:
				tb.declared(fid, session.Decl{Kind: kinds[arg%3], ID: uint32(arg >> 2 % 4), Undeclare: true})
			case 5, 6:
				m := &wire.Interest{ID: uint32(arg % 4), Mode: wire.InterestMode(arg >> 2 % 4),
					Options: wire.InterestOptions(next()) & (wire.InterestAll | wire.InterestAggregate)}
				if arg&0x40 == 0 {
					m.WireExpr = &wire.WireExpr{Suffix: key}
				} else {
					key = ""
				}
				if m.Mode == wire.InterestFinal {
					key, m.WireExpr = "", nil
				}
				tb.interest(fid, key, m)
			case 7:
				tb.push(fid, key, &wire.Push{WireExpr: wire.WireExpr{Suffix: key}, Body: &wire.Put{Payload: []byte{arg}}}, true)
			case 8:
				tb.request(fid, key, &wire.Request{ID: uint32(arg), WireExpr: wire.WireExpr{Suffix: key},
					Target: wire.QueryTarget(arg % 3), Query: &wire.Query{}})
			case 9:
				tb.response(fid, key, &wire.Response{RequestID: uint32(arg % 8), WireExpr: wire.WireExpr{Suffix: key},
					Body: &wire.Reply{Body: &wire.Put{}}})
			case 10:
				tb.responseFinal(fid, uint32(arg%8))
			case 11:
				// a query times out
				tb.mu.Lock()
				var fp *face
				var rid uint32
				var p *pending
				if fp = tb.faces[fid]; fp != nil {
					for rid, p = range fp.pending {
						break
					}
				}
				tb.mu.Unlock()
				if p != nil {
					tb.timeout(fp, rid, p)
				}
			}
			checkTables(t, tb, ports)
		}
		for fid := range ports {
			tb.faceDown(fid)
		}
		for k := range nKinds {
			if len(tb.index[k]) != 0 {
				t.Fatalf("index %d left: %v", k, tb.index[k])
			}
		}
		tb.close()
	})
}

func checkTables(t *testing.T, tb *tables, ports map[uint64]*recPort) {
	t.Helper()
	for _, p := range ports {
		for _, m := range p.take() {
			if len(m) > 11 && m[:11] == "UNENCODABLE" {
				t.Fatal(m)
			}
		}
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, d := range tb.faces {
		ids := map[uint32]bool{}
		for k := range nKinds {
			for key, ld := range d.declared[k] {
				if ids[ld.id] || ld.id == 0 {
					t.Fatalf("face %d: id %d twice or zero (%s)", d.id, ld.id, key)
				}
				ids[ld.id] = true
				var ok bool
				if k == kTok {
					_, ok = tb.sourcesLocked(k, key, d)
				} else {
					_, ok = tb.desiredLocked(d, k, key)
				}
				if !ok {
					t.Fatalf("face %d: kind %d %q declared, not wanted", d.id, k, key)
				}
			}
		}
		n := [nKinds]int{}
		for _, i := range d.interests {
			for k := range nKinds {
				if i.wants(k) {
					n[k]++
				}
			}
		}
		if n != d.nFuture {
			t.Fatalf("face %d: future interests %v, counted %v", d.id, n, d.nFuture)
		}
	}
}
