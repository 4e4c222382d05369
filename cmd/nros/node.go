package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps"
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

// graphNodeNames lists the fully qualified names of the graph's nodes.
func graphNodeNames(tr rmw.Transport) ([]string, error) {
	var names []string
	add := func(n rmw.NodeInfo) {
		if n.Name != "" && !slices.Contains(names, fqn(n)) {
			names = append(names, fqn(n))
		}
	}
	if t, ok := tr.(*rtps.Transport); ok {
		for _, n := range t.Nodes() {
			add(n)
		}
	}
	eps, ok := graphEndpoints(tr, "")
	if !ok {
		return nil, fatalError{"the transport cannot list its graph"}
	}
	for _, ep := range eps {
		add(ep.Node)
	}
	if g, ok := tr.(rmw.ServiceGraph); ok {
		for _, s := range g.Services() {
			for _, n := range append(slices.Clone(s.ServerNodes), s.ClientNodes...) {
				add(n)
			}
		}
	}
	slices.Sort(names)
	return names, nil
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
	names, err := graphNodeNames(tr)
	if err != nil {
		return err
	}
	for _, n := range names {
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
	names, err := graphNodeNames(tr)
	if err != nil {
		return err
	}
	if !slices.Contains(names, target) {
		return fmt.Errorf("unable to find node '%s'", target)
	}
	eps, _ := graphEndpoints(tr, "")
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
	if g, ok := tr.(rmw.ServiceGraph); ok {
		for _, s := range g.Services() {
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
