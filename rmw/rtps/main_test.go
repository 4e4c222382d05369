package rtps

import (
	"fmt"
	"os"
	"testing"

	"github.com/nros-go/nros/internal/fixture/testdomain"
)

func TestMain(m *testing.M) {
	d, release, err := testdomain.Lock()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDomain = d
	code := m.Run()
	release()
	os.Exit(code)
}
