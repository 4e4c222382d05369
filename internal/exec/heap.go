package exec

// timerHeap is a binary min-heap of timers by their key (the next deadline
// the loop last saw), ties broken by creation order. Each timer knows its
// index, so fix and remove are O(log n). It is guarded by the loop's lock.
type timerHeap []*Timer

func (h timerHeap) less(i, j int) bool {
	a, b := h[i], h[j]
	if a.key != b.key {
		return a.key < b.key
	}
	return a.id < b.id
}

func (h timerHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx = i
	h[j].hidx = j
}

func (h *timerHeap) push(t *Timer) {
	t.hidx = len(*h)
	*h = append(*h, t)
	h.up(t.hidx)
}

func (h *timerHeap) remove(t *Timer) {
	i := t.hidx
	old := *h
	n := len(old) - 1
	if i != n {
		old.swap(i, n)
	}
	old[n] = nil
	*h = old[:n]
	if i != n {
		h.fix(i)
	}
	t.hidx = -1
}

func (h timerHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h timerHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h timerHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h timerHeap) down(i0 int) bool {
	i, n := i0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && h.less(r, l) {
			j = r
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}

// appendDue walks the heap from i and appends the timers whose key is at or
// before now; it visits only due timers and their children.
func (h timerHeap) appendDue(out []*Timer, i int, now int64) []*Timer {
	if i >= len(h) || h[i].key > now {
		return out
	}
	out = append(out, h[i])
	out = h.appendDue(out, 2*i+1, now)
	return h.appendDue(out, 2*i+2, now)
}
