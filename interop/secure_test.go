package interop

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/rmw/rtps/security/crypto"
)

// The secure peers (SROS2 enclaves, DDS Security builtin plugins) against
// each other: the reference for the Go side. Run:
//   NROS_INTEROP_PEERS=$PWD/interop/build interop/netns go test -race -run Secure ./interop/

// secureEnclaves names the publisher's and subscriber's enclaves of a
// pairing. Between the vendors the Cyclone side must start the PKI-DH
// handshake: the participant whose adjusted GUID (from SHA-256 of its
// certificate's subject) is lower does, and Fast DDS 2.9 always starts with
// DH+MODP-2048-256 and sends its public key as raw big-endian bytes, which
// Cyclone 0.10 takes for a DER INTEGER ("Failed to convert octet sequence to
// ASN1 integer"); Cyclone starts with ECDH prime256v1, which both read. So
// Cyclone gets /talker (hash 0f24...), Fast DDS /a/listener (hash 5ef4...).
// TestSecureQuirkFastDDSStartsHandshake shows the other way round.
func secureEnclaves(pr pairing) (pub, sub string) {
	switch {
	case pr.pub == pr.sub:
		return "/talker", "/listener"
	case pr.pub == "cyclone":
		return "/talker", "/a/listener"
	default:
		return "/a/listener", "/talker"
	}
}

var secureEnclaveNames = []string{"/talker", "/listener", "/a/listener"}

// secureRelease starts a publisher (with --gate) and a subscriber and
// releases the publisher once both matched (Release), starting both again
// once when they have not matched within 30 s: under load a secure pair of
// different vendors now and then never matched, neither side logging an
// error (3 of about 90 cross-vendor pair runs here); new participants start a new
// handshake.
func secureRelease(t *testing.T, start func() (pub, sub *Proc)) (*Proc, *Proc) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		pub, sub := start()
		err := pub.WaitStderrMatch(matchedSubs, 30*time.Second)
		if err == nil {
			err = sub.WaitStderrMatch(matchedPubs, 30*time.Second)
		}
		if err == nil {
			if err := pub.Send("go"); err != nil {
				t.Fatalf("interop: releasing %s: %v", pub.Name, err)
			}
			return pub, sub
		}
		if attempt == 1 {
			t.Fatalf("interop: secure pair did not match twice: %v", err)
		}
		t.Logf("secure pair did not match in 30 s (%v); starting it again.\n  %s: %s\n  %s: %s",
			err, pub.Name, strings.TrimSpace(pub.Stderr()), sub.Name, strings.TrimSpace(sub.Stderr()))
		pub.Kill()
		sub.Kill()
	}
}

// secureEnv is how rcl is told to run secure: the subscribers get their
// enclave this way, the publishers through --keystore/--enclave.
func secureEnv(keystore, enclave string) []string {
	return []string{"ROS_SECURITY_ENABLE=true", "ROS_SECURITY_STRATEGY=Enforce",
		"ROS_SECURITY_KEYSTORE=" + keystore, "ROS_SECURITY_ENCLAVE_OVERRIDE=" + enclave}
}

func TestSecureChatter(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, pr := range pairings() {
		t.Run(pr.String(), func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			ks := Keystore(t, dom, nil, secureEnclaveNames...)
			pe, se := secureEnclaves(pr)
			// TRANSIENT_LOCAL (depth 30), as the loss test: under load a
			// VOLATILE secure pairing once lost samples for good (17 of 20,
			// Fast DDS to Fast DDS), the reader matching before it held the
			// writer's keys.
			pub, sub := secureRelease(t, func() (*Proc, *Proc) {
				sub := StartEnv(t, secureEnv(ks, se), "chattersub_"+pr.sub, "--domain", d(dom), "--count", "20", "--timeout", "90",
					"--transient-local", "--depth", "30")
				pub := Start(t, "chatterpub_"+pr.pub, "--domain", d(dom), "--keystore", ks, "--enclave", pe,
					"--count", "20", "--hz", "50", "--wait-subs", "1", "--timeout", "60", "--gate", "--transient-local", "--depth", "30")
				return pub, sub
			})
			if code, err := sub.Wait(30 * time.Second); err != nil || code != 0 {
				t.Fatalf("chattersub: exit %d, %v (%d samples)", code, err, len(sub.Lines()))
			}
			if n := len(sub.Lines()); n != 20 {
				t.Errorf("%d samples, want 20", n)
			}
			for _, p := range []*Proc{pub, sub} {
				if !strings.Contains(p.Stderr(), "secure, enclave") {
					t.Errorf("%s did not run secure: %s", p.Name, p.Stderr())
				}
			}
		})
	}
}

// The 140-sample clock script (play, pause, both jumps) arrives as sent.
func TestSecureClock(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	want := dryRun(t, "clockpub_cyclone", clockScript, "100")
	for _, pr := range pairings() {
		t.Run(pr.String(), func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			ks := Keystore(t, dom, nil, secureEnclaveNames...)
			pe, se := secureEnclaves(pr)
			// best effort: --settle 1 leaves time for the crypto tokens to
			// arrive after the match, or the first samples are undecodable
			pub, sub := secureRelease(t, func() (*Proc, *Proc) {
				sub := Start(t, "clocksub_"+pr.sub, "--domain", d(dom), "--keystore", ks, "--enclave", se,
					"--depth", "1000", "--count", "140", "--timeout", "90")
				pub := Start(t, "clockpub_"+pr.pub, "--domain", d(dom), "--keystore", ks, "--enclave", pe,
					"--wait-subs", "1", "--wait-timeout", "60", "--settle", "1", "--gate", "--script", clockScript)
				return pub, sub
			})
			if code, err := pub.Wait(30 * time.Second); err != nil || code != 0 {
				t.Fatalf("clockpub: exit %d, %v", code, err)
			}
			if code, err := sub.Wait(10 * time.Second); err != nil || code != 0 {
				t.Fatalf("clocksub: exit %d, %v (%d samples)", code, err, len(sub.Lines()))
			}
			sent, got := simStamps(t, pub.Lines()), simStamps(t, sub.Lines())
			if strings.Join(sent, "\n") != strings.Join(want, "\n") {
				t.Errorf("publisher samples differ from the dry run of the script")
			}
			if strings.Join(got, "\n") != strings.Join(sent, "\n") {
				t.Errorf("subscriber got %d samples that differ from the %d sent:\n%s", len(got), len(sent), firstDiff(sent, got))
			}
		})
	}
}

// A secure publisher's samples reach a secure subscriber and no unsecured
// one (of either vendor); an unsecured publisher's samples reach no secure
// subscriber.
func TestSecureUnsecuredPeerGetsNothing(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, v := range Vendors {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			ks := Keystore(t, dom, nil, secureEnclaveNames...)
			pe, se := secureEnclaves(pairing{v, v})
			secureSub := Start(t, "chattersub_"+v, "--domain", d(dom), "--keystore", ks, "--enclave", se,
				"--count", "0", "--timeout", "8", "--first", "0", "--allow-gaps")
			var plainSubs []*Proc
			for _, o := range Vendors {
				plainSubs = append(plainSubs, Start(t, "chattersub_"+o, "--domain", d(dom), "--count", "0", "--timeout", "8",
					"--first", "0", "--allow-gaps", "--prefix", "Intruder: "))
			}
			pub := Start(t, "chatterpub_"+v, "--domain", d(dom), "--keystore", ks, "--enclave", pe,
				"--count", "50", "--hz", "10", "--wait-subs", "1", "--timeout", "20")
			intruders := make([]*Proc, 0, len(Vendors))
			for _, o := range Vendors {
				intruders = append(intruders, Start(t, "chatterpub_"+o, "--domain", d(dom), "--prefix", "Intruder: ",
					"--count", "50", "--hz", "10", "--timeout", "6"))
			}
			// The unsecured subscribers hear the unsecured publishers (so they
			// work) and nothing of the secure one.
			for _, s := range plainSubs {
				if _, err := s.Wait(20 * time.Second); err != nil {
					t.Fatal(err)
				}
				intr, sec := 0, 0
				for _, l := range s.Lines() {
					if strings.Contains(l, "Intruder") {
						intr++
					}
					if strings.Contains(l, "Hello World") {
						sec++
					}
				}
				if sec != 0 || intr == 0 {
					t.Errorf("unsecured %s: %d samples of the secure publisher (want 0), %d of the unsecured ones (want some)", s.Name, sec, intr)
				}
			}
			if _, err := secureSub.Wait(20 * time.Second); err != nil {
				t.Fatal(err)
			}
			got := secureSub.Lines()
			if len(got) == 0 {
				t.Errorf("the secure subscriber got nothing from the secure publisher")
			}
			for _, l := range got {
				if strings.Contains(l, "Intruder") {
					t.Errorf("secure subscriber took an unsecured sample: %q", l)
					break
				}
			}
			for _, p := range append(intruders, pub) {
				p.Kill()
			}
		})
	}
}

// Enforce: a missing artifact stops the peer, naming the file.
func TestSecureEnforceMissingFile(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	dom := Domain(t)
	ks := Keystore(t, dom, nil, "/talker")
	if err := os.Remove(filepath.Join(ks, "enclaves", "talker", "permissions.p7s")); err != nil {
		t.Fatal(err)
	}
	for _, v := range Vendors {
		p := StartEnv(t, secureEnv(ks, "/talker"), "chatterpub_"+v, "--domain", d(dom), "--count", "1")
		code, err := p.Wait(10 * time.Second)
		if err != nil || code != ExitUsage || !strings.Contains(p.Stderr(), "permissions.p7s is missing") {
			t.Errorf("%s: exit %d, %v, stderr %q; want exit 2 naming permissions.p7s", p.Name, code, err, p.Stderr())
		}
	}
}

// The vendor quirk the cross-vendor pairings avoid: when the Fast DDS
// participant starts the handshake (its subject hashes lower) it sends a
// DH+MODP-2048-256 public key as raw bytes, Cyclone refuses it, and nothing
// flows. If this starts to pass, the vendors were fixed: drop the enclave
// choice in secureEnclaves.
func TestSecureQuirkFastDDSStartsHandshake(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	dom := Domain(t)
	ks := Keystore(t, dom, nil, secureEnclaveNames...)
	sub := Start(t, "chattersub_cyclone", "--domain", d(dom), "--keystore", ks, "--enclave", "/a/listener", "--count", "1", "--timeout", "8")
	pub := Start(t, "chatterpub_fastdds", "--domain", d(dom), "--keystore", ks, "--enclave", "/talker", "--count", "80", "--hz", "10", "--timeout", "8")
	code, err := sub.Wait(20 * time.Second)
	pub.Kill()
	if err != nil || code != ExitTimeout || len(sub.Lines()) != 0 {
		t.Errorf("Cyclone subscriber: exit %d, %v, %d samples; the quirk is gone?", code, err, len(sub.Lines()))
	}
	if !strings.Contains(sub.Stderr(), "Failed to convert octet sequence to ASN1 integer") {
		t.Errorf("Cyclone did not refuse Fast DDS's DH public key: %s", sub.Stderr())
	}
}

// A capture on lo of secure runs holds no clear-text payload, while one of
// an unsecured run does; and every protected message and submessage the
// vendors sent splits with the crypto package's codec.
func TestSecureCapture(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	const secret = "SecretChatter-"
	run := func(t *testing.T, pr pairing, secure bool) {
		dom := Domain(t)
		var pubArgs, subArgs []string
		if secure {
			ks := Keystore(t, dom, nil, secureEnclaveNames...)
			pe, se := secureEnclaves(pr)
			pubArgs, subArgs = []string{"--keystore", ks, "--enclave", pe}, []string{"--keystore", ks, "--enclave", se}
		}
		pub, sub := secureRelease(t, func() (*Proc, *Proc) {
			sub := Start(t, "chattersub_"+pr.sub, append(subArgs, "--domain", d(dom), "--prefix", secret, "--count", "10",
				"--timeout", "90", "--transient-local", "--depth", "30")...)
			pub := Start(t, "chatterpub_"+pr.pub, append(pubArgs, "--domain", d(dom), "--prefix", secret, "--count", "10", "--hz", "20",
				"--wait-subs", "1", "--timeout", "60", "--gate", "--transient-local", "--depth", "30")...)
			return pub, sub
		})
		if code, err := sub.Wait(30 * time.Second); err != nil || code != 0 {
			t.Fatalf("chattersub: exit %d, %v", code, err)
		}
		pub.Kill() // it may still wait for the acks of a subscriber that left
	}
	capture := func(t *testing.T, secure bool) ([]byte, []Datagram) {
		c := StartCapture(t)
		for _, pr := range []pairing{{"cyclone", "cyclone"}, {"fastdds", "fastdds"}, {"cyclone", "fastdds"}, {"fastdds", "cyclone"}} {
			run(t, pr, secure)
		}
		return c.Stop(t)
	}
	raw, dgs := capture(t, false)
	if !bytes.Contains(raw, []byte(secret)) {
		t.Fatalf("the unsecured capture (%d datagrams) lacks the chatter text: the capture does not see the traffic", len(dgs))
	}
	raw, dgs = capture(t, true)
	if i := bytes.Index(raw, []byte(secret)); i >= 0 {
		t.Errorf("clear-text payload in the secure capture at byte %d", i)
	}
	for _, s := range []string{"Hello World", "rt/chatter"} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("secure capture contains %q", s)
		}
	}
	shapes := checkShapes(t, dgs)
	for _, v := range []string{"cyclone", "fastdds"} {
		s := shapes[v]
		t.Logf("%s: %d RTPS messages, %d protected (%v), %d with INFO_SRC first, %d secure submessages (%v), %d unprotected (SPDP, handshake)",
			v, s.messages, s.protected, s.msgKinds, s.infoSrc, s.submsgs, s.subKinds, s.clear)
		if s.protected == 0 || s.submsgs == 0 {
			t.Errorf("%s: no protected message or submessage captured", v)
		}
	}
}

type shapeCount struct {
	messages, protected, infoSrc, submsgs, clear int
	msgKinds, subKinds                           map[crypto.TransformKind]int
}

// checkShapes splits every captured RTPS message with the crypto codec:
// SRTPS messages with SplitMessage, SEC_PREFIX submessages (in clear
// messages and inside signed SRTPS bodies) with SplitSubmessage.
func checkShapes(t *testing.T, dgs []Datagram) map[string]*shapeCount {
	out := map[string]*shapeCount{}
	for _, dg := range dgs {
		b := dg.Payload
		if len(b) < 20 || string(b[:4]) != "RTPS" {
			continue
		}
		vendor := fmt.Sprintf("%02x%02x", b[6], b[7])
		switch vendor {
		case "0110":
			vendor = "cyclone"
		case "010f":
			vendor = "fastdds"
		}
		s := out[vendor]
		if s == nil {
			s = &shapeCount{msgKinds: map[crypto.TransformKind]int{}, subKinds: map[crypto.TransformKind]int{}}
			out[vendor] = s
		}
		s.messages++
		body := b[20:]
		if crypto.IsProtectedMessage(b) {
			m, err := crypto.SplitMessage(b)
			if err != nil {
				t.Errorf("%s: protected message does not split: %v\n%x", vendor, err, b)
				continue
			}
			s.protected++
			s.msgKinds[m.Header.Kind]++
			if m.Encrypted {
				continue
			}
			body = m.Body
			if len(body) > 0 && body[0] == 0x0c {
				s.infoSrc++
			}
		} else {
			s.clear++
		}
		nested := 0
		defer func(vendor string, b []byte) {
			// NROS_SECURE_DUMP=DIR keeps one protected message with protected
			// submessages per vendor (crypto's testdata/captured-*.hex).
			if dir := os.Getenv("NROS_SECURE_DUMP"); dir != "" && nested > 0 && crypto.IsProtectedMessage(b) {
				f := filepath.Join(dir, "captured-"+vendor+".hex")
				if _, err := os.Stat(f); err != nil {
					_ = os.WriteFile(f, []byte(fmt.Sprintf("%x\n", b)), 0o644)
				}
			}
		}(vendor, b)
		for off := 0; off+4 <= len(body); {
			if body[off] == crypto.SubmsgSecPrefix {
				nested++
				sm, n, err := crypto.SplitSubmessage(body[off:])
				if err != nil {
					t.Errorf("%s: secure submessage does not split: %v\n%x", vendor, err, body[off:])
					break
				}
				s.submsgs++
				s.subKinds[sm.Header.Kind]++
				off += n
				continue
			}
			n := int(binary.LittleEndian.Uint16(body[off+2:]))
			if body[off+1]&1 == 0 {
				n = int(binary.BigEndian.Uint16(body[off+2:]))
			}
			if n == 0 {
				break
			}
			off += 4 + n
		}
	}
	return out
}
