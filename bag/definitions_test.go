package bag

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"

	// The definitions come from the generated types the program links.
	_ "github.com/nros-go/nros/msg/rosgraph_msgs"
	_ "github.com/nros-go/nros/msg/std_msgs"
)

// A recorded bag stores each type's message definition as rosbag2 does
// (an MCAP ros2msg schema; a message_definitions row in sqlite3), nested
// types included: rosgraph_msgs/Clock carries builtin_interfaces/Time.
func TestWriterStoresDefinitions(t *testing.T) {
	want := "builtin_interfaces/Time clock\n" + strings.Repeat("=", 80) + "\nMSG: builtin_interfaces/Time\n"
	t.Run("mcap", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "rec")
		writeTestBag(t, dir, WriterOptions{}, 10)
		files, _ := filepath.Glob(filepath.Join(dir, "*.mcap"))
		if len(files) != 1 {
			t.Fatalf("files %v", files)
		}
		f, err := os.Open(files[0])
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := mcap.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		info, err := r.Info()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, sc := range info.Schemas {
			if sc.Encoding != "ros2msg" {
				t.Fatalf("schema encoding %q", sc.Encoding)
			}
			got[sc.Name] = string(sc.Data)
		}
		if !strings.HasPrefix(got["rosgraph_msgs/msg/Clock"], want) || got["std_msgs/msg/String"] != "string data\n" {
			t.Fatalf("schemas %q", got)
		}
	})
	t.Run("sqlite3", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "rec")
		writeTestBag(t, dir, WriterOptions{Storage: StorageSQLite3}, 10)
		files, _ := filepath.Glob(filepath.Join(dir, "*.db3"))
		if len(files) != 1 {
			t.Fatalf("files %v", files)
		}
		db, err := sql.Open("sqlite", "file:"+files[0]+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows, err := db.Query("SELECT topic_type, encoding, encoded_message_definition FROM message_definitions")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]string{}
		for rows.Next() {
			var typ, enc, def string
			if err := rows.Scan(&typ, &enc, &def); err != nil {
				t.Fatal(err)
			}
			if enc != "ros2msg" {
				t.Fatalf("encoding %q", enc)
			}
			got[typ] = def
		}
		if len(got) != 3 || !strings.HasPrefix(got["rosgraph_msgs/msg/Clock"], want) {
			t.Fatalf("message_definitions %q", got)
		}
	})
}
