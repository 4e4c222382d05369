package clock

// Listeners returns the number of registered listeners (for tests and
// diagnostics: a wait that has ended leaves none behind).
func (o *Override) Listeners() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.listeners)
}
