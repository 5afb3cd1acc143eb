// Package builtin holds wield's built-in tools, by area: system.go (time,
// environment), calc.go (echo, calculator). Each constructor returns a fresh
// tool with its category, annotations and timeout set; nothing is registered
// by importing the package. [Defaults] lists the ones the wield binary starts
// with.
package builtin

import "github.com/wieldhq/wield"

// Defaults returns the tools that are safe to hand to any model without
// configuration: echo, calculator and current_time.
func Defaults() []*wield.Tool {
	return []*wield.Tool{Echo(), Calculator(), CurrentTime()}
}
