package bag

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver "sqlite"
)

// openSQLite opens a .db3 file read-only and immutable: SQLite then takes
// no locks, reads no -wal or -shm file and creates none, so neither the
// file nor its directory is ever written (WAL-mode bags included).
func openSQLite(path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=ro&immutable=1"}
	// "file:///abs/path?..." is a URI SQLite accepts (empty authority).
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	// One connection: the file is opened once, and rows are read in order.
	db.SetMaxOpenConns(1)
	// Make the open happen now, so that a file that is not SQLite fails here.
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: not a readable SQLite database: %w", filepath.Base(path), err)
	}
	return db, nil
}

// sqliteTopic is a row of the topics table.
type sqliteTopic struct {
	id    int64
	topic Topic
}

// sqliteTopics reads the topics table, whichever of its layouts (4 columns
// in Foxy, offered_qos_profiles from Foxy patch releases on,
// type_description_hash from Iron on).
func sqliteTopics(db *sql.DB) ([]sqliteTopic, error) {
	rows, err := db.Query("SELECT * FROM topics ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("topics table: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []sqliteTopic
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("topics table: %w", err)
		}
		var t sqliteTopic
		var qos string
		haveID := false
		for i, c := range cols {
			v := vals[i].String
			switch strings.ToLower(c) {
			case "id":
				if _, err := fmt.Sscan(v, &t.id); err != nil {
					return nil, fmt.Errorf("topics table: bad id %q", v)
				}
				haveID = true
			case "name":
				t.topic.Name = v
			case "type":
				t.topic.Type = v
			case "serialization_format":
				t.topic.SerializationFormat = v
			case "offered_qos_profiles":
				qos = v
			case "type_description_hash":
				t.topic.TypeDescriptionHash = v
			}
		}
		if !haveID {
			return nil, errors.New("topics table has no id column")
		}
		if t.topic.OfferedQoSProfiles, err = ParseQoSProfiles(qos); err != nil {
			// A profile rosbag2 could not have written: keep the topic
			// (it still plays, with default QoS) rather than the bag.
			t.topic.OfferedQoSProfiles = nil
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// sqliteMetadata returns the newest metadata embedded in the file (the
// metadata table of schema version 4 and later), or nil.
func sqliteMetadata(db *sql.DB) *Metadata {
	var s string
	if err := db.QueryRow("SELECT metadata FROM metadata ORDER BY id DESC LIMIT 1").Scan(&s); err != nil {
		return nil
	}
	m, err := ParseMetadata([]byte(s))
	if err != nil {
		return nil
	}
	return m
}

// sqliteSource streams one .db3 file's messages in timestamp order.
type sqliteSource struct {
	db     *sql.DB
	rows   *sql.Rows
	topics map[int64]*Topic
	err    error
}

func newSQLiteSource(db *sql.DB, topics map[int64]*Topic, ids []int64, start int64) (*sqliteSource, error) {
	q := "SELECT timestamp, topic_id, data FROM messages WHERE timestamp >= ?"
	args := []any{start}
	if ids != nil {
		if len(ids) == 0 {
			return &sqliteSource{db: db, err: io.EOF}, nil
		}
		q += " AND topic_id IN (" + strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") + ")"
		for _, id := range ids {
			args = append(args, id)
		}
	}
	// timestamp_idx holds (timestamp, rowid): this is an index walk.
	q += " ORDER BY timestamp, id"
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("messages table: %w", err)
	}
	return &sqliteSource{db: db, rows: rows, topics: topics}, nil
}

func (s *sqliteSource) next() (Message, error) {
	if s.err != nil {
		return Message{}, s.err
	}
	for s.rows.Next() {
		var m Message
		var id int64
		if err := s.rows.Scan(&m.Time, &id, &m.Data); err != nil {
			s.err = fmt.Errorf("messages table: %w", err)
			return Message{}, s.err
		}
		t, ok := s.topics[id]
		if !ok {
			continue // a message of a topic that is filtered out or not declared
		}
		m.Topic = t
		return m, nil
	}
	if err := s.rows.Err(); err != nil {
		s.err = fmt.Errorf("messages table: %w", err)
	} else {
		s.err = io.EOF
	}
	return Message{}, s.err
}

func (s *sqliteSource) close() error {
	if s.rows != nil {
		s.rows.Close()
	}
	return s.db.Close()
}
