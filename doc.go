// Package wield is the vocabulary of a tool engine for AI agents.
//
// An agent (a model in a loop) asks to call a tool. wield knows the tool, checks
// the call, decides whether it may run, runs it under limits, keeps a record of
// it, tells everyone who listens, and hands the model a [Result] it can read.
//
// This package holds the nouns: [Tool] and its [Handler], the [Registry] of all
// tools with its toolsets and per-agent [Toolkit]s, the [Call] with its [Caller],
// the [Result], the [Event]s on a [Bus], and the small interfaces that adapters
// implement ([Store], [Approver], [Invoker]). The pipeline that runs a call is in
// package engine; the concurrency controller in package limit; schema inference,
// coercion and validation in package schema.
//
// # Defining tools
//
// Typed tools come from Go functions; the input and output schemas are inferred
// from the types, and struct tags carry the JSON Schema keywords:
//
//	type WeatherIn struct {
//		City  string `json:"city" description:"City name" minLength:"1"`
//		Units string `json:"units,omitempty" enum:"c,f" default:"c"`
//	}
//	t := wield.Func("weather", "Current weather for a city", weather)
//
// [Raw] takes a hand-written schema and a [Handler] over raw JSON.
//
// # Organising them
//
// A [Registry] holds every tool, de-duplicated by name (the first registration
// wins; a later one is kept as shadowed, with a warning and an event). Toolsets
// are named groups; a [Toolkit] is one agent's view of the registry: a call to a
// tool outside it answers "Tool 'x' not available in A's toolkit".
//
// # Failures
//
// A tool's failure is a [Result] with OK false and an [ErrorType]; the model sees
// it and can correct itself. A Go error from the engine means the system itself
// failed (store down, engine closed).
package wield
