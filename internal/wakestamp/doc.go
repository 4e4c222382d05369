// Package wakestamp marks, in a build made with the nrosstamp tag, when a
// goroutine that leads a /clock socket (the DDS feed, the Zenoh link's
// leader) was woken by the runtime's poller and when its read returned
// the bytes, so that a benchmark can tell the wake from the work after it
// (bench/clocklat --stamps, scripts/bench-wake.sh). Without the tag every
// function is empty and Enabled is false: the marks cost nothing.
//
// The marks are process-wide and meant for one leading goroutine at a
// time, which is what the benchmark runs.
package wakestamp
