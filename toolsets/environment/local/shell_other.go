//go:build !unix

package local

import (
	"context"
	"fmt"

	"github.com/weft-run/weft/toolsets/environment"
)

// Run refuses every command: process groups, which a timeout must kill
// whole, are a Unix facility here.
func (l *Provider) Run(ctx context.Context, cmd environment.Command) (environment.CommandResult, error) {
	if err := l.shell.Check(cmd); err != nil {
		return environment.CommandResult{}, err
	}
	return environment.CommandResult{}, &environment.CommandError{Command: cmd.String(),
		Err: fmt.Errorf("%w: the local shell runs on Unix only", environment.ErrNotSupported)}
}
