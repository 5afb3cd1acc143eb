package main

import (
	"fmt"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/program"
)

// programsToolset is the toolset of run_program alone, which `wield mcp
// --code` serves (and /mcp/programs with serve --programs).
const programsToolset = "programs"

// offerPrograms registers run_program when --programs (or mcp --code) asks
// for it, unless a tool file has the name, and the programs toolset unless
// one of that name is defined. Its description lists the tools programs may
// call; it is written again once the MCP servers' tools are imported.
func (a *app) offerPrograms(reg *wield.Registry, eng *engine.Engine) error {
	if !a.programs {
		return nil
	}
	if _, taken := reg.Tool(program.Name); taken {
		return nil
	}
	opts := program.Options{Invoker: eng, Registry: reg}
	if err := reg.RegisterDefaults(program.Tool(opts)); err != nil {
		return fmt.Errorf("register %s: %w", program.Name, err)
	}
	if _, ok := reg.Toolset(programsToolset); !ok {
		if err := reg.DefineToolset(wield.Toolset{Name: programsToolset, Description: "run_program alone: every other tool is a function inside it", Tools: []string{program.Name}}); err != nil {
			return err
		}
	}
	if a.serving {
		a.whenImported(func() {
			if err := reg.Update(program.Tool(opts)); err != nil {
				a.warnf("warning: describe %s: %v", program.Name, err)
			}
		})
	}
	return nil
}
