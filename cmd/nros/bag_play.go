package main

import "context"

func (e *cliEnv) bagPlay(ctx context.Context, args []string) error {
	return usagef("bag play is not implemented yet")
}
