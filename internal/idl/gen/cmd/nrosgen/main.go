// Command nrosgen is `nros gen` on its own, without the rest of the nros
// command and so without the generated packages it imports: nros-go's
// msg/ folder is generated with it (go generate ./msg).
package main

import (
	"os"

	"github.com/nros-go/nros/internal/idl/gen"
)

func main() { os.Exit(gen.Main(os.Args[1:], os.Stdout, os.Stderr)) }
