// Package bag reads rosbag2 bags: the directories `ros2 bag record` writes
// (metadata.yaml beside one or more storage files) and bare storage files.
//
// Both storage formats rosbag2 uses are read: SQLite 3 (`.db3`, through the
// pure-Go modernc.org/sqlite, opened read-only and immutable so that the
// input, WAL-mode files included, is never written to) and MCAP (`.mcap`,
// chunks uncompressed, zstd or lz4, with or without a summary section).
// metadata.yaml versions 4 to 9 are understood, as are split bags and zstd
// compression of whole files or of single messages.
//
// Messages stream in time order across the files of a bag: memory does not
// grow with the size of the bag. The recorded bytes are handed over as they
// are (CDR with its encapsulation header for ROS 2 bags), so messages of any
// type can be read and replayed.
//
// Bad input (a truncated file, a corrupt chunk, a metadata.yaml that does
// not match its files) gives a clear error, after the messages that could be
// read; it never panics and never writes.
package bag
