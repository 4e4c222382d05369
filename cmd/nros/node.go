package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nros-go/nros/rmw"
)

const nodeUsage = `usage: nros node <verb> ...

verbs (as ros2 node):
  list                 fully qualified names of the nodes of the graph
  info NODE            the node's publishers, subscribers, service servers and clients
`

func runNode(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return newEnv(stdout, stderr).nodeCmd(ctx, args)
}

// nodeCmd is `nros node`.
func (e *cliEnv) nodeCmd(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, nodeUsage)
		return 2
	}
	switch args[0] {
	case "list":
		return exitCode(e.stderr, "nros node list", e.nodeList(ctx, args[1:]))
	case "info":
		return exitCode(e.stderr, "nros node info", e.nodeInfo(ctx, args[1:]))
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, nodeUsage)
		return 0
	}
	fmt.Fprintf(e.stderr, "nros node: unknown verb %q\n\n%s", args[0], nodeUsage)
	return 2
}

func fqn(n rmw.NodeInfo) string {
	ns := n.Namespace
	if ns == "" || ns == "/" {
		return "/" + n.Name
	}
	return ns + "/" + n.Name
}

// graphNodeNames lists the fully qualified names of the graph's nodes,
// sorted.
func graphNodeNames(tr rmw.Graph) []string {
	var names []string
	for _, n := range tr.Nodes() {
		if !slices.Contains(names, fqn(n)) {
			names = append(names, fqn(n))
		}
	}
	slices.Sort(names)
	return names
}

func (e *cliEnv) nodeGraphCommand(ctx context.Context, prog, synopsis string, args []string) (rmw.Transport, func(), []string, error) {
	c, pos, err := e.serviceGraphCommand(ctx, prog, synopsis, args, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	return c.Transport(), func() { c.Shutdown() }, pos, nil
}

func (e *cliEnv) nodeList(ctx context.Context, args []string) error {
	tr, done, pos, err := e.nodeGraphCommand(ctx, "nros node list", "nros node list [--spin-time S]", args)
	if err != nil {
		return err
	}
	defer done()
	if len(pos) != 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	for _, n := range graphNodeNames(tr) {
		fmt.Fprintln(e.stdout, n)
	}
	return nil
}

func (e *cliEnv) nodeInfo(ctx context.Context, args []string) error {
	tr, done, pos, err := e.nodeGraphCommand(ctx, "nros node info", "nros node info NODE [--spin-time S]", args)
	if err != nil {
		return err
	}
	defer done()
	if len(pos) != 1 {
		return usagef("want NODE")
	}
	target := pos[0]
	if !strings.HasPrefix(target, "/") {
		target = "/" + target
	}
	if !slices.Contains(graphNodeNames(tr), target) {
		return fmt.Errorf("unable to find node '%s'", target)
	}
	eps := tr.Endpoints("")
	var subs, pubs, servers, clients []string
	seen := map[string]bool{}
	addTo := func(list *[]string, line string) {
		if !seen[line] {
			seen[line] = true
			*list = append(*list, line)
		}
	}
	for _, ep := range eps {
		if fqn(ep.Node) != target {
			continue
		}
		if ep.Publisher {
			addTo(&pubs, "p"+ep.Topic+": "+ep.Type)
		} else {
			addTo(&subs, "s"+ep.Topic+": "+ep.Type)
		}
	}
	for _, s := range tr.Services() {
		for _, n := range s.ServerNodes {
			if fqn(n) == target {
				addTo(&servers, "v"+s.Name+": "+s.Type)
			}
		}
		for _, n := range s.ClientNodes {
			if fqn(n) == target {
				addTo(&clients, "c"+s.Name+": "+s.Type)
			}
		}
	}
	fmt.Fprintln(e.stdout, target)
	section := func(title string, lines []string) {
		fmt.Fprintf(e.stdout, "  %s:\n", title)
		slices.Sort(lines)
		if len(lines) == 0 {
			fmt.Fprintln(e.stdout)
			return
		}
		for _, l := range lines {
			fmt.Fprintf(e.stdout, "    %s\n", l[1:])
		}
	}
	section("Subscribers", subs)
	section("Publishers", pubs)
	section("Service Servers", servers)
	section("Service Clients", clients)
	section("Action Servers", nil)
	section("Action Clients", nil)
	return nil
}
