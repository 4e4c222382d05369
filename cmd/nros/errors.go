package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/nros-go/nros/internal/param"
	"github.com/nros-go/nros/internal/rosargs"
)

// The CLI's one rule for mistakes: a bad command line (flags, arguments,
// ROS arguments, parameter values, params files) exits 2, a failure while
// running exits 1, and either prints one line "<command>: <what>" on
// stderr that names the flag or argument, the value given and what would
// be accepted.

// usageError is a bad command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// fatalError is a failure that ends a command, such as no peer matching in
// time: exit status 1, like any other runtime failure.
type fatalError struct{ msg string }

func (e fatalError) Error() string { return e.msg }

// exitCode prints err (prefixed with the command, once) and maps it to an
// exit status: 0 for nil and -h, 2 for usage errors, 1 otherwise.
func exitCode(stderr io.Writer, prog string, err error) int {
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %s\n", prog, cleanMessage(err))
		return 2
	}
	fmt.Fprintf(stderr, "%s: %s\n", prog, cleanMessage(err))
	return 1
}

// cleanMessage is err's text without the library's own "nros: " prefixes:
// the command's name is the one prefix a message gets.
func cleanMessage(err error) string {
	m := strings.TrimPrefix(err.Error(), "nros: ")
	return strings.ReplaceAll(m, ": nros: ", ": ")
}

// nodeError classifies a NewNode failure: what comes from the command line
// (a parameter override of the wrong type, a params file that cannot be
// read or parsed) is a usage error, the rest a runtime failure.
func nodeError(err error) error {
	var pf *rosargs.ParamsFileError
	if errors.As(err, &pf) || errors.Is(err, param.ErrInvalidType) || errors.Is(err, param.ErrInvalidValue) ||
		errors.Is(err, param.ErrReadOnly) || errors.Is(err, param.ErrInvalidName) {
		return usageError{cleanMessage(err)}
	}
	return err
}

// newFlagSet makes a command's flag set; it prints nothing itself (see
// flagError).
func newFlagSet(prog, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n\nflags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// flagError turns a FlagSet.Parse error into the command's error: -h
// prints the usage on stdout (exit 0); a bad flag names the flag, the
// value and what the flag takes.
func flagError(fs *flag.FlagSet, err error, stdout io.Writer) error {
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		fs.SetOutput(io.Discard)
		return err
	}
	msg := err.Error()
	// "invalid value "x" for flag -hz: parse error"
	if i := strings.Index(msg, " for flag -"); strings.HasPrefix(msg, "invalid value ") && i > 0 {
		name, _, _ := strings.Cut(msg[i+len(" for flag -"):], ":")
		if f := fs.Lookup(name); f != nil {
			kind, usage := flag.UnquoteUsage(f)
			want := map[string]string{"float": "a number", "int": "an integer", "uint": "a non-negative integer",
				"duration": "a Go duration such as 100ms or 1.5s", "value": "a value", "string": "a string"}[kind]
			if want == "" {
				want = kind
			}
			if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); isBool {
				want = "true or false"
			}
			return usagef("--%s %s: want %s (%s)", name, msg[len("invalid value "):i], want, usage)
		}
	}
	return usagef("%s (run '%s -h' for the flags)", msg, fs.Name())
}
