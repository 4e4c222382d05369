package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/nros-go/nros/rmw/zenoh/config"
	"github.com/nros-go/nros/rmw/zenoh/link"
	"github.com/nros-go/nros/rmw/zenoh/router"
)

const zenohdSynopsis = "nros zenohd [-l ENDPOINT]... [-c CONFIG]"

const zenohdAbout = `A zenoh router on this machine, a drop-in for 'ros2 run rmw_zenoh_cpp rmw_zenohd':
zenoh-pico clients (nano-ros boards), rmw_zenoh nodes and nros nodes meet through it.

It listens on ` + router.DefaultListen + ` (loopback only) unless an endpoint is named:
rmw_zenohd listens on every interface (tcp/[::]:7447); to be reachable from other
machines say so, e.g. -l tcp/0.0.0.0:7447.

The configuration is read as rmw_zenohd reads it: the JSON5 zenoh config file named
by ZENOH_ROUTER_CONFIG_URI (-c takes its place), else rmw_zenoh's router defaults;
then ZENOH_CONFIG_OVERRIDE ('key=value;...'); then -l, which replaces
listen/endpoints. Faces coming and going are logged on stderr; SIGINT or SIGTERM
stops the router (exit 0).
`

// endpointList is a repeatable endpoint flag.
type endpointList []string

func (l *endpointList) String() string { return strings.Join(*l, ",") }

func (l *endpointList) Set(s string) error {
	if _, err := link.ParseEndpoint(s); err != nil {
		return err
	}
	*l = append(*l, s)
	return nil
}

func runZenohd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return exitCode(stderr, "nros zenohd", zenohdCmd(ctx, args, stdout, stderr, os.Getenv, os.ReadFile))
}

// zenohdCmd is `nros zenohd`: it runs a router until ctx ends.
func zenohdCmd(ctx context.Context, args []string, stdout, stderr io.Writer,
	getenv func(string) string, readFile func(string) ([]byte, error)) error {
	fs := newFlagSet("nros zenohd", zenohdSynopsis)
	var listen endpointList
	fs.Var(&listen, "l", "an endpoint to listen on, such as tcp/127.0.0.1:7447 (repeatable; replaces listen/endpoints)")
	fs.Var(&listen, "listen", "same as -l")
	cfgPath := fs.String("c", "", "a zenoh JSON5 configuration file (in place of $"+config.EnvRouterConfig+")")
	fs.StringVar(cfgPath, "config", "", "same as -c")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n\n%s\nflags:\n", zenohdSynopsis, zenohdAbout)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		// "invalid value "x" for flag -l: zenoh endpoint "x": ..."
		msg := err.Error()
		if i := strings.Index(msg, " for flag -"); strings.HasPrefix(msg, "invalid value ") && i > 0 {
			if name, why, ok := strings.Cut(msg[i+len(" for flag -"):], ": "); ok {
				return usagef("-%s: %s", name, why)
			}
		}
		return flagError(fs, err, stdout)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (endpoints go after -l, a config file after -c)", fs.Arg(0))
	}
	if *cfgPath != "" {
		if _, err := readFile(*cfgPath); err != nil {
			return usagef("-c %s: %v", *cfgPath, err)
		}
	}
	env := func(k string) string {
		if k == config.EnvRouterConfig && *cfgPath != "" {
			return *cfgPath
		}
		return getenv(k)
	}
	c, err := config.Router(env, readFile)
	if err != nil {
		return usagef("%v", err)
	}
	rc, err := router.FromConfig(c)
	if err != nil {
		return usagef("%v", err)
	}
	if len(listen) > 0 {
		rc.Listen = listen
	}
	for _, e := range append(append([]string(nil), rc.Listen...), rc.Connect...) {
		if _, err := link.ParseEndpoint(e); err != nil {
			return usagef("%v", err)
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	rc.Logger = log
	r, err := router.Open(rc)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Started Zenoh router with id %s.\n", r.ZID())
	var eps []string
	for _, e := range r.Listeners() {
		eps = append(eps, e.String())
	}
	log.Info("zenoh router up", "zid", r.ZID().String(), "listen", strings.Join(eps, ","), "connect", strings.Join(rc.Connect, ","))
	<-ctx.Done()
	log.Info("zenoh router stopping")
	return r.Close()
}
