package crypto

import (
	"errors"
	"sync/atomic"
)

// Reasons a decoder refuses its input. Every error a decoder returns wraps
// exactly one of them.
var (
	// ErrMalformed: the bytes are not a well-formed secure payload,
	// submessage or message (lengths, ids, truncation).
	ErrMalformed = errors.New("crypto: malformed secure message")
	// ErrUnknownKey: the CryptoHeader names a key id this receiver does not
	// hold (another sender, or a key revision it has not received).
	ErrUnknownKey = errors.New("crypto: unknown transformation key")
	// ErrProtection: the transformation kind differs from the key
	// material's (e.g. signed where encryption was agreed).
	ErrProtection = errors.New("crypto: unexpected protection")
	// ErrAuth: the common MAC does not verify: tampered, or the wrong key.
	ErrAuth = errors.New("crypto: authentication failed")
	// ErrReceiverMAC: origin authentication was agreed and no valid
	// receiver-specific MAC for this receiver is present.
	ErrReceiverMAC = errors.New("crypto: no valid receiver-specific MAC")
	// ErrReplay: the message was already accepted once (same session and
	// IV), or belongs to a session the sender has left behind.
	ErrReplay = errors.New("crypto: replayed message")
)

// Counters counts refusals by reason. One Counters may be shared by many
// Openers (the fields are atomic); the zero value is ready.
type Counters struct {
	Malformed   atomic.Uint64
	UnknownKey  atomic.Uint64
	Protection  atomic.Uint64
	Auth        atomic.Uint64
	ReceiverMAC atomic.Uint64
	Replay      atomic.Uint64
}

// Total is the sum of all refusals.
func (c *Counters) Total() uint64 {
	return c.Malformed.Load() + c.UnknownKey.Load() + c.Protection.Load() + c.Auth.Load() + c.ReceiverMAC.Load() + c.Replay.Load()
}

// count adds err to its reason's counter (nothing for nil or a foreign error).
func (c *Counters) count(err error) {
	if c == nil || err == nil {
		return
	}
	switch {
	case errors.Is(err, ErrMalformed):
		c.Malformed.Add(1)
	case errors.Is(err, ErrUnknownKey):
		c.UnknownKey.Add(1)
	case errors.Is(err, ErrProtection):
		c.Protection.Add(1)
	case errors.Is(err, ErrAuth):
		c.Auth.Add(1)
	case errors.Is(err, ErrReceiverMAC):
		c.ReceiverMAC.Add(1)
	case errors.Is(err, ErrReplay):
		c.Replay.Add(1)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
