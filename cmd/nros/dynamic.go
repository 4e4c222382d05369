package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/dynamic"
)

// interfacePathVars name the colon-separated lists of folders where
// echoMessage looks for the definition of a type the binary was not built
// with: ROS package folders, AMENT_PREFIX_PATH-style prefixes (share/<pkg>)
// or folders of package folders.
var interfacePathVars = []string{"NROS_INTERFACE_PATH", "AMENT_PREFIX_PATH"}

// echoMessage returns a zero message of typ to decode and print samples
// into: the compiled-in Go type when the binary has one, otherwise a
// msg/dynamic message built from the interface files found under
// $NROS_INTERFACE_PATH and $AMENT_PREFIX_PATH. Printing it gives the same
// YAML as the generated type would.
func echoMessage(typ string) (msg.Message, error) {
	if m, ok := msg.New(typ); ok {
		return m, nil
	}
	reg := dynamic.NewRegistry()
	var dirs []string
	var loadErrs []error
	for _, v := range interfacePathVars {
		for _, d := range filepath.SplitList(os.Getenv(v)) {
			if d == "" {
				continue
			}
			dirs = append(dirs, d)
			if err := reg.Load(d); err != nil {
				loadErrs = append(loadErrs, err)
			}
		}
	}
	t, err := reg.Type(typ)
	if err != nil {
		hint := "set $" + strings.Join(interfacePathVars, " or $") + " to folders holding its interface files"
		if len(dirs) > 0 {
			hint = "its definition is not under " + strings.Join(dirs, ", ")
		}
		if len(loadErrs) > 0 {
			hint += " (" + errors.Join(loadErrs...).Error() + ")"
		}
		return nil, usagef("unknown message type %q: the binary was not built with it, and %s (%v)", typ, hint, err)
	}
	return t.New(), nil
}
