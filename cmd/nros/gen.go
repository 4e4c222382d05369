package main

import (
	"io"

	"github.com/nros-go/nros/internal/idl/gen"
)

// runGen runs `nros gen` (see internal/idl/gen.Main).
func runGen(args []string, stdout, stderr io.Writer) int { return gen.Main(args, stdout, stderr) }
