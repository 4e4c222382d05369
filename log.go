package nros

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// ROS log severities as slog levels. Debug, Info, Warn and Error are slog's
// own; Fatal is above Error.
const (
	LevelDebug = slog.LevelDebug
	LevelInfo  = slog.LevelInfo
	LevelWarn  = slog.LevelWarn
	LevelError = slog.LevelError
	LevelFatal = slog.Level(12)
)

// ParseLogLevel reads a ROS log level name (debug, info, warn, error,
// fatal; any case).
func ParseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return LevelDebug, nil
	case "info":
		return LevelInfo, nil
	case "warn", "warning":
		return LevelWarn, nil
	case "error":
		return LevelError, nil
	case "fatal":
		return LevelFatal, nil
	}
	return 0, fmt.Errorf("nros: unknown log level %q (want debug, info, warn, error or fatal)", s)
}

// rosHandler writes records the way ROS 2 console output looks:
//
//	[INFO] [1700000000.123456789] [talker]: message key=value
type rosHandler struct {
	mu     *sync.Mutex
	w      io.Writer
	level  *slog.LevelVar
	logger string
	attrs  string
}

// NewLogHandler returns a slog.Handler that writes ROS-style lines to w for
// records at or above level.
func NewLogHandler(w io.Writer, level *slog.LevelVar) slog.Handler {
	return &rosHandler{mu: &sync.Mutex{}, w: w, level: level}
}

func (h *rosHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *rosHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	sev := "INFO"
	switch {
	case r.Level >= LevelFatal:
		sev = "FATAL"
	case r.Level >= LevelError:
		sev = "ERROR"
	case r.Level >= LevelWarn:
		sev = "WARN"
	case r.Level < LevelInfo:
		sev = "DEBUG"
	}
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	fmt.Fprintf(&b, "[%s] [%d.%09d]", sev, t.Unix(), t.Nanosecond())
	if h.logger != "" {
		fmt.Fprintf(&b, " [%s]", h.logger)
	}
	b.WriteString(": ")
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *rosHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	for _, a := range as {
		if a.Key == "logger" {
			c.logger = a.Value.String()
			continue
		}
		c.attrs += fmt.Sprintf(" %s=%v", a.Key, a.Value)
	}
	return &c
}

func (h *rosHandler) WithGroup(string) slog.Handler { return h }
