package bag_test

import (
	"fmt"
	"io"
	"log"

	"github.com/nros-go/nros/bag"
)

// Read a bag's figures, then stream its messages in time order.
func Example() {
	b, err := bag.Open("../testdata/bags/talker_mcap")
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	st, err := b.Stats()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.StorageIdentifier(), st.MessageCount, "messages over", st.Duration(), "ns")
	r, err := b.Messages(bag.ReadOptions{Topics: func(t *bag.Topic) bool { return t.Name == "/topic" }})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for i := 0; ; i++ {
		m, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if i < 2 {
			fmt.Printf("%d %s %s %d bytes\n", m.Time, m.Topic.Name, m.Topic.Type, len(m.Data))
		}
	}
	// Output:
	// mcap 20 messages over 4531096768 ns
	// 1585866235112609068 /topic std_msgs/msg/String 24 bytes
	// 1585866235612975047 /topic std_msgs/msg/String 24 bytes
}
