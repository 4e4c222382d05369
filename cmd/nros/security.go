package main

import (
	"fmt"
	"io"
	"os"

	"github.com/nros-go/nros/rmw/rtps/security/keystore"
)

const securityUsage = `usage: nros security <verb> ...

verbs (as ros2 security; the same files and layout):
  create_keystore DIR                   a keystore: one ECDSA prime256v1 CA (identity and
                                        permissions), the default governance, signed
  create_enclave DIR NAME               an enclave (NAME such as /talker_listener/talker):
                                        key, certificate, permissions allowing everything
  create_permission DIR NAME POLICY     the enclave's permissions from an sros2 policy file
  list_enclaves DIR                     the enclaves of a keystore, one per line

ROS_DOMAIN_ID sets the domain id written in governance and permissions (default 0).
`

func runSecurity(args []string, stdout, stderr io.Writer) int {
	return securityCmd(args, stdout, stderr, os.Getenv)
}

// securityCmd is `nros security`; getenv is the environment (ROS_DOMAIN_ID).
func securityCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, securityUsage)
		return 2
	}
	verb, rest := args[0], args[1:]
	prog := "nros security " + verb
	nargs := map[string]int{"create_keystore": 1, "create_enclave": 2, "create_permission": 3, "list_enclaves": 1}
	switch verb {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, securityUsage)
		return 0
	}
	n, ok := nargs[verb]
	if !ok {
		fmt.Fprintf(stderr, "nros security: unknown verb %q\n\n%s", verb, securityUsage)
		return 2
	}
	for _, a := range rest {
		if a == "-h" || a == "--help" {
			fmt.Fprint(stdout, securityUsage)
			return 0
		}
	}
	if len(rest) != n {
		return exitCode(stderr, prog, usagef("want %d argument(s), got %d (run 'nros security -h')", n, len(rest)))
	}
	opts := keystore.OptionsFromEnv(getenv)
	var err error
	switch verb {
	case "create_keystore":
		err = keystore.CreateKeystore(rest[0], opts)
	case "create_enclave":
		if verr := keystore.ValidateEnclaveName(rest[1]); verr != nil {
			return exitCode(stderr, prog, usagef("%v", verr))
		}
		err = keystore.CreateEnclave(rest[0], rest[1], opts)
	case "create_permission":
		err = keystore.CreatePermission(rest[0], rest[1], rest[2], opts)
	case "list_enclaves":
		var names []string
		if names, err = keystore.ListEnclaves(rest[0]); err == nil {
			for _, e := range names {
				fmt.Fprintln(stdout, e)
			}
		}
	}
	return exitCode(stderr, prog, err)
}
