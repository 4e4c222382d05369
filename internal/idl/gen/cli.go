package gen

import (
	"flag"
	"fmt"
	"io"
	"sort"

	"github.com/nros-go/nros/internal/idl/interfaces"
)

const genUsage = `usage: nros gen [-o DIR] [-import PATH] [-bundled] PATH...

Generates Go packages from ROS 2 interface files (.msg, .srv, .action).
Each PATH is a ROS package folder (holding msg/, srv/ or action/), an
AMENT_PREFIX_PATH-style prefix (holding share/<pkg>/...), or a folder of
package folders. Each ROS package becomes the Go package DIR/<pkg>, whose
types are named as in ROS (sensor_msgs.Imu, std_srvs.SetBool_Request).

Types from the packages nros-go ships (std_msgs, geometry_msgs, ...) are
imported from github.com/nros-go/nros/msg and not generated again, unless
-bundled is given. With -bundled and no PATH, the shipped packages
themselves are generated (how msg/ is produced: go generate ./msg).

For go generate: //go:generate go run github.com/nros-go/nros/cmd/nros gen -o . ../interfaces
(inside nros-go itself: go run ./internal/gen/cmd/nrosgen, which does not
depend on the generated packages)

flags:
`

// Main runs the command `nros gen` with the arguments after "gen" and
// returns its exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("nros gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, genUsage)
		fs.PrintDefaults()
	}
	out := fs.String("o", "msg", "output folder; package <pkg> is written to DIR/<pkg>")
	imp := fs.String("import", "", "import path of the output folder (default: derived from the enclosing go.mod)")
	bundled := fs.Bool("bundled", false, "also (re)generate the packages nros-go ships, from PATH or from the definitions built in")
	verbose := fs.Bool("v", false, "list the packages written")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 && !*bundled {
		fs.Usage()
		return 2
	}
	prefix := *imp
	if prefix == "" {
		p, err := ModuleImportPath(*out)
		if err != nil {
			fmt.Fprintf(stderr, "nros gen: %v\n", err)
			return 1
		}
		prefix = p
	}
	set := interfaces.NewSet()
	if !*bundled {
		if err := set.LoadBundled(); err != nil {
			fmt.Fprintf(stderr, "nros gen: %v\n", err)
			return 1
		}
	}
	for _, p := range fs.Args() {
		if err := set.Load(p); err != nil {
			fmt.Fprintf(stderr, "nros gen: %v\n", err)
			return 1
		}
	}
	var pkgs []string
	for name, p := range set.Packages {
		if !p.Bundled {
			pkgs = append(pkgs, name)
		}
	}
	if *bundled && fs.NArg() == 0 {
		if err := set.LoadBundled(); err != nil {
			fmt.Fprintf(stderr, "nros gen: %v\n", err)
			return 1
		}
		pkgs = interfaces.BundledNames()
		for _, n := range pkgs {
			set.Packages[n].Bundled = false
		}
	} else if err := set.LoadBundled(); err != nil { // resolve references to shipped types
		fmt.Fprintf(stderr, "nros gen: %v\n", err)
		return 1
	}
	sort.Strings(pkgs)
	if err := Write(set, *out, pkgs, Options{ImportPrefix: prefix}); err != nil {
		fmt.Fprintf(stderr, "nros gen: %v\n", err)
		return 1
	}
	if *verbose {
		for _, p := range pkgs {
			fmt.Fprintf(stdout, "%s/%s\n", prefix, p)
			for _, v := range set.Packages[p].Variants {
				fmt.Fprintf(stdout, "%s/%s/%s\n", prefix, p, v.Variant)
			}
		}
		for _, p := range set.Skipped {
			fmt.Fprintf(stderr, "nros gen: %s: using the package nros-go ships (-bundled regenerates it)\n", p)
		}
	}
	return 0
}
