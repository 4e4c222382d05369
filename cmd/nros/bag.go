package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/nros-go/nros/bag"
)

const bagUsage = `usage: nros bag <info|play|record> ...

  nros bag info PATH
  nros bag play PATH [--clock [HZ]] [--rate R] [--loop] [--start-paused]
                [--start-offset S] [--topics T...] [--exclude-topics T...]
                [--remap FROM:=TO ...] [--delay S] [--read-ahead-queue-size N]
  nros bag record [-o DIR] [-s mcap|sqlite3] (TOPIC... | -a)
                [--use-sim-time] [--max-bag-duration S] [--max-bag-size B]

PATH is a bag directory (metadata.yaml and its storage files) or a bare
.db3 or .mcap file.
`

func runBag(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return newEnv(stdout, stderr).bagCmd(ctx, args)
}

// bagCmd is `nros bag`: info, play and record of rosbag2 bags.
func (e *cliEnv) bagCmd(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, bagUsage)
		return 2
	}
	switch args[0] {
	case "info":
		return exitCode(e.stderr, "nros bag info", e.bagInfo(args[1:]))
	case "play":
		return exitCode(e.stderr, "nros bag play", e.bagPlay(ctx, args[1:]))
	case "record":
		return exitCode(e.stderr, "nros bag record", e.bagRecord(ctx, args[1:]))
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, bagUsage)
		return 0
	}
	fmt.Fprintf(e.stderr, "nros bag: unknown verb %q\n\n%s", args[0], bagUsage)
	return 2
}

// bagInfoLocation is the time zone `bag info` prints times in (local, as
// ros2 bag info does; tests pin it).
var bagInfoLocation = time.Local

// bagInfo is `nros bag info PATH`: what `ros2 bag info` prints, with the
// figures counted from the storage files.
func (e *cliEnv) bagInfo(args []string) error {
	fs := newFlagSet("nros bag info", "nros bag info PATH")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(fs, err, e.stdout)
	}
	if len(pos) != 1 {
		return usagef("want one PATH, got %d arguments", len(pos))
	}
	b, err := bag.Open(pos[0])
	if err != nil {
		return err
	}
	defer b.Close()
	st, statErr := b.Stats()
	fmt.Fprint(e.stdout, formatBagInfo(b, st, bagInfoLocation))
	if statErr != nil {
		return fmt.Errorf("the figures above stop at a read error: %w", statErr)
	}
	if note := metadataDisagrees(b, st); note != "" {
		fmt.Fprintf(e.stderr, "nros bag info: note: %s; the figures above are counted from the storage files\n", note)
	}
	return nil
}

const infoIndent = "                   " // 19 spaces, as ros2 bag info

// formatBagInfo renders a bag as ros2 bag info does.
func formatBagInfo(b *bag.Bag, st *bag.Stats, loc *time.Location) string {
	var w strings.Builder
	w.WriteString("\nFiles:             ")
	for i, f := range b.Files() {
		if i > 0 {
			w.WriteString(infoIndent)
		}
		w.WriteString(filepath.Base(f) + "\n")
	}
	fmt.Fprintf(&w, "Bag size:          %s\n", formatFileSize(b.Size()))
	fmt.Fprintf(&w, "Storage id:        %s\n", b.StorageIdentifier())
	if m := b.Metadata(); m != nil && m.ROSDistro != "" {
		fmt.Fprintf(&w, "ROS Distro:        %s\n", m.ROSDistro)
	}
	fmt.Fprintf(&w, "Duration:          %ss\n", formatSeconds(st.Duration()))
	if st.MessageCount > 0 {
		fmt.Fprintf(&w, "Start:             %s\n", formatTimePoint(st.Start, loc))
		fmt.Fprintf(&w, "End:               %s\n", formatTimePoint(st.End, loc))
	} else {
		w.WriteString("Start:             -\nEnd:               -\n")
	}
	fmt.Fprintf(&w, "Messages:          %d\n", st.MessageCount)
	w.WriteString("Topic information: ")
	if len(st.Topics) == 0 {
		w.WriteString("\n")
	}
	for i, ts := range st.Topics {
		if i > 0 {
			w.WriteString(infoIndent)
		}
		fmt.Fprintf(&w, "Topic: %s | Type: %s | Count: %d | Serialization Format: %s\n",
			ts.Topic.Name, ts.Topic.Type, ts.MessageCount, ts.Topic.SerializationFormat)
	}
	return w.String()
}

// formatSeconds renders ns as seconds with nine decimals ("4.531096768").
func formatSeconds(ns int64) string {
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%09d", sign, ns/1e9, ns%1e9)
}

// formatTimePoint renders a time as ros2 bag info:
// "Apr  2 2020 22:23:55.112411371 (1585866235.112411371)".
func formatTimePoint(ns int64, loc *time.Location) string {
	t := time.Unix(0, ns).In(loc)
	return fmt.Sprintf("%s.%09d (%s)", t.Format("Jan _2 2006 15:04:05"), t.Nanosecond(), formatSeconds(ns))
}

// formatFileSize renders a size as ros2 bag info: "28.0 KiB", "512 B".
func formatFileSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	size := float64(n)
	i := 0
	for size >= 1024 && i < len(units)-1 {
		size /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", size, units[i])
	}
	return fmt.Sprintf("%.1f %s", size, units[i])
}

// metadataDisagrees describes where metadata.yaml differs from what the
// storage files hold ("" when it does not).
func metadataDisagrees(b *bag.Bag, st *bag.Stats) string {
	m := b.Metadata()
	if m == nil || !b.HasMetadataFile() {
		return ""
	}
	var diffs []string
	if m.MessageCount != st.MessageCount {
		diffs = append(diffs, fmt.Sprintf("message_count %d (counted %d)", m.MessageCount, st.MessageCount))
	}
	if st.MessageCount > 0 {
		if m.StartingTime != st.Start {
			diffs = append(diffs, fmt.Sprintf("starting_time %d (first message at %d)", m.StartingTime, st.Start))
		}
		if int64(m.Duration) != st.Duration() {
			diffs = append(diffs, fmt.Sprintf("duration %d ns (messages span %d ns)", int64(m.Duration), st.Duration()))
		}
	}
	counts := map[string]uint64{}
	for _, ts := range st.Topics {
		counts[ts.Topic.Name+"\x00"+ts.Topic.Type] = ts.MessageCount
	}
	for _, ti := range m.Topics {
		if n := counts[ti.Topic.Name+"\x00"+ti.Topic.Type]; n != ti.MessageCount {
			diffs = append(diffs, fmt.Sprintf("%s has %d messages (counted %d)", ti.Topic.Name, ti.MessageCount, n))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	return "metadata.yaml says " + strings.Join(diffs, ", ")
}
