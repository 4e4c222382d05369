package main

import "context"

func (e *cliEnv) bagRecord(ctx context.Context, args []string) error {
	return usagef("bag record is not implemented yet")
}
