package play

import (
	"context"
	"io"

	"github.com/nros-go/nros/bag"
)

// source is one pass over a bag's messages, in time order (io.EOF after
// the last). *bag.Reader is one.
type source interface {
	Next() (bag.Message, error)
	Close() error
}

// opener starts a pass over the messages from bag time start (ns).
type opener func(start int64) (source, error)

// item is what the read-ahead goroutine hands the player.
type item struct {
	m   bag.Message
	err error // io.EOF at the end of a pass
}

// readAheadBatch is how many messages the read-ahead goroutine hands over
// at a time: one channel operation per message would cost more than
// reading the message.
const readAheadBatch = 64

// cursor is the player's position in one pass: a goroutine reads the
// source ahead of playback (about queue messages, in batches) so that
// storage reads overlap the waits, and the player takes messages from the
// head. A cursor belongs to the goroutine that plays.
type cursor struct {
	ch        <-chan []item
	cancel    context.CancelFunc
	batch     []item
	cur       item
	loaded    bool // cur holds the head (a message, io.EOF or an error)
	published int  // messages published in this pass
}

// openCursor starts a pass over src.
func openCursor(src source, queue int) *cursor {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan []item, max(queue/readAheadBatch, 1))
	go readAhead(ctx, src, ch)
	return &cursor{ch: ch, cancel: cancel}
}

// readAhead fills ch from src until the pass ends or ctx is done, then
// closes src and ch.
func readAhead(ctx context.Context, src source, ch chan<- []item) {
	defer close(ch)
	defer src.Close()
	batch := make([]item, 0, readAheadBatch)
	for {
		m, err := src.Next()
		batch = append(batch, item{m, err})
		if err == nil && len(batch) < readAheadBatch {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		select {
		case ch <- batch:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
		batch = make([]item, 0, readAheadBatch)
	}
}

// head loads the next message if none is loaded and returns it: its time,
// or eof at the end of the pass. A read error ends the pass with it.
func (c *cursor) head() (head, error) {
	if !c.loaded {
		if len(c.batch) == 0 {
			b, ok := <-c.ch
			if !ok { // closed early: cannot happen before close
				b = []item{{err: io.ErrUnexpectedEOF}}
			}
			c.batch = b
		}
		c.cur, c.batch, c.loaded = c.batch[0], c.batch[1:], true
	}
	switch {
	case c.cur.err == io.EOF:
		return head{eof: true}, nil
	case c.cur.err != nil:
		return head{}, c.cur.err
	}
	return head{time: c.cur.m.Time}, nil
}

// take hands over the loaded message.
func (c *cursor) take() bag.Message {
	c.loaded = false
	c.published++
	return c.cur.m
}

// close stops the read-ahead goroutine and waits until it has closed the
// source.
func (c *cursor) close() {
	c.cancel()
	for range c.ch {
	}
}
