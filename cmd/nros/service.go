package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/rmw"
)

const serviceUsage = `usage: nros service <verb> ...

verbs (as ros2 service):
  list [-t]                       the services of the graph (-t: with types)
  type SERVICE                    the service's type
  call SERVICE TYPE [VALUES]      call it once with a YAML request, print the response
`

func runService(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return newEnv(stdout, stderr).serviceCmd(ctx, args)
}

// serviceCmd is `nros service`.
func (e *cliEnv) serviceCmd(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, serviceUsage)
		return 2
	}
	switch args[0] {
	case "list":
		return exitCode(e.stderr, "nros service list", e.serviceList(ctx, args[1:]))
	case "type":
		return exitCode(e.stderr, "nros service type", e.serviceType(ctx, args[1:]))
	case "call":
		return exitCode(e.stderr, "nros service call", e.serviceCall(ctx, args[1:]))
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, serviceUsage)
		return 0
	}
	fmt.Fprintf(e.stderr, "nros service: unknown verb %q\n\n%s", args[0], serviceUsage)
	return 2
}

func (e *cliEnv) serviceGraphCommand(ctx context.Context, prog, synopsis string, args []string, extra func(*flag.FlagSet)) (*nros.Context, []string, error) {
	c, rest, err := e.newCommandContext(prog, args)
	if err != nil {
		return nil, nil, err
	}
	fs := newFlagSet(prog, synopsis)
	spin := fs.Float64("spin-time", 1, "seconds to wait for DDS discovery")
	if extra != nil {
		extra(fs)
	}
	pos, err := parseInterspersed(fs, rest)
	if err == nil && (*spin < 0 || math.IsNaN(*spin) || *spin > 3600) {
		err = usagef("--spin-time %v: want 0 to 3600 seconds", *spin)
	} else if err != nil {
		err = flagError(fs, err, e.stdout)
	}
	if err != nil {
		c.Shutdown()
		return nil, nil, err
	}
	e.spinTime(ctx, c.Transport(), time.Duration(*spin*1e9))
	return c, pos, nil
}

func (e *cliEnv) serviceList(ctx context.Context, args []string) error {
	var showTypes bool
	c, pos, err := e.serviceGraphCommand(ctx, "nros service list", "nros service list [-t] [--spin-time S]", args,
		func(fs *flag.FlagSet) {
			fs.BoolVar(&showTypes, "t", false, "show the types")
			fs.BoolVar(&showTypes, "show-types", false, "show the types")
		})
	if err != nil {
		return err
	}
	defer c.Shutdown()
	if len(pos) != 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	svcs := c.Transport().Services()
	// One line per name; -t adds its types (more than one when servers
	// and clients disagree), as ros2 service list -t.
	for i := 0; i < len(svcs); {
		j, types := i, []string(nil)
		for ; j < len(svcs) && svcs[j].Name == svcs[i].Name; j++ {
			types = append(types, svcs[j].Type)
		}
		if showTypes {
			fmt.Fprintf(e.stdout, "%s [%s]\n", svcs[i].Name, strings.Join(types, ", "))
		} else {
			fmt.Fprintln(e.stdout, svcs[i].Name)
		}
		i = j
	}
	return nil
}

func (e *cliEnv) serviceType(ctx context.Context, args []string) error {
	c, pos, err := e.serviceGraphCommand(ctx, "nros service type", "nros service type SERVICE [--spin-time S]", args, nil)
	if err != nil {
		return err
	}
	defer c.Shutdown()
	if len(pos) != 1 {
		return usagef("want SERVICE")
	}
	svcs := c.Transport().Services()
	found := false
	for _, s := range svcs {
		if s.Name == pos[0] {
			fmt.Fprintln(e.stdout, s.Type)
			found = true
		}
	}
	if !found {
		return fmt.Errorf("service %s not found", pos[0])
	}
	return nil
}

// serviceTypes returns the request and response messages of a service
// type ("std_srvs/srv/SetBool" or "std_srvs/SetBool").
func serviceTypes(typ string) (req, resp msg.Message, err error) {
	parts := strings.Split(typ, "/")
	switch {
	case len(parts) == 2:
		typ = parts[0] + "/srv/" + parts[1]
	case len(parts) == 3 && parts[1] == "srv":
	default:
		return nil, nil, usagef("service type %q: want <package>/srv/<Name>", typ)
	}
	req, ok1 := msg.New(typ + "_Request")
	resp, ok2 := msg.New(typ + "_Response")
	if !ok1 || !ok2 {
		return nil, nil, usagef("unknown service type %q", typ)
	}
	return req, resp, nil
}

func (e *cliEnv) serviceCall(ctx context.Context, args []string) error {
	const prog = "nros service call"
	c, rest, err := e.newCommandContext(prog, args)
	if err != nil {
		return err
	}
	defer c.Shutdown()
	fs := newFlagSet(prog, "nros service call SERVICE TYPE [VALUES] [--timeout D] [--ros-args ...]")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for the server and its response")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return flagError(fs, err, e.stdout)
	}
	if len(pos) < 2 || len(pos) > 3 {
		return usagef("want SERVICE TYPE [VALUES], got %d arguments", len(pos))
	}
	req, resp, err := serviceTypes(pos[1])
	if err != nil {
		return err
	}
	if len(pos) == 3 {
		if err := fillMessage(req, pos[2]); err != nil {
			return usagef("VALUES: %v", err)
		}
	}
	node, err := nros.NewNode("nros_service_call", nros.WithContext(c), nros.WithoutParameterServices())
	if err != nil {
		return nodeError(err)
	}
	defer node.Close()
	name, err := node.ResolveServiceName(pos[0])
	if err != nil {
		return usagef("service %q: %v", pos[0], err)
	}
	st := c.Transport()
	got := make(chan []byte, 1)
	cl, err := st.NewServiceClient(rmw.NodeInfo{Name: node.Name(), Namespace: node.Namespace(), Enclave: "/"}, name,
		req.TypeName(), resp.TypeName(), nros.ServicesQoS(), func(r rmw.Response) {
			select {
			case got <- bytes.Clone(r.Data):
			default:
			}
		}, rmw.EndpointOptions{})
	if err != nil {
		return err
	}
	defer cl.Close()
	cctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if !waitMatched(cctx, e.clock, 1, 0, func() int {
		if cl.ServiceAvailable() {
			return 1
		}
		return 0
	}) {
		if ctx.Err() != nil {
			return nil
		}
		return fatalError{fmt.Sprintf("service %s not available after %v", name, *timeout)}
	}
	fmt.Fprintf(e.stdout, "requester: making request: %s\n\n", pyRepr(reflect.ValueOf(req)))
	if _, err := cl.SendRequest(msg.Marshal(req, true, nil)); err != nil {
		return err
	}
	select {
	case data := <-got:
		if err := msg.Unmarshal(data, resp); err != nil {
			return fmt.Errorf("bad response: %w", err)
		}
		fmt.Fprintf(e.stdout, "response:\n%s\n\n", pyRepr(reflect.ValueOf(resp)))
		return nil
	case <-cctx.Done():
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("no response from %s within %v", name, *timeout)
	}
}
