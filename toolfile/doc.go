// Package toolfile loads tools, toolsets and agents described in files, so
// that most tools need no Go code.
//
// # Tool files
//
// A tool file is YAML or JSON in the format of seed 004 §2, one tool per
// file, a list under `tools:`, a top-level list, or a YAML stream of
// documents:
//
//	name: grep
//	description: Search a file for a pattern
//	category: file
//	parameters:
//	  - name: pattern
//	    type: string
//	    validation: {min_length: 1}
//	  - name: path
//	    type: string
//	entry:
//	  type: command
//	  command: ["grep", "-n", "--", "{pattern}", "{path}"]
//	  timeout: 5s
//
// Parameters are compiled once, at load, to the tool's JSON Schema: an
// object with the properties in file order and no others allowed. A
// parameter that says nothing about `required` is required unless it has a
// default (seed 000's ToolParameter default). Nested properties and items
// are required only when they say so or their object lists them.
//
// wield adds permission, timeout ("30s" or seconds), annotations (read_only,
// destructive, idempotent, open_world) and secrets to the format.
//
// The YAML is read by go.yaml.in/yaml/v3 with YAML 1.2's types: true and
// false are booleans, yes and no are strings, and a plain date such as
// 2024-01-01 is taken as text where text is expected. Anchors and aliases
// work anywhere, and a merge key (`<<: *base`) adds the fields a mapping
// does not set itself.
//
// # Kinds of documents
//
// A document may say `kind: tool`, `tools`, `toolset` or `agent`. Without
// it: a document with parameters or entry is a tool; with tool_sets or
// output_strategy an agent; with tools as a list of mappings a list of
// tools; with tools as a list of names a toolset (seed 002
// configs/tool_sets). An agent that lists only tools must say `kind: agent`.
// Each document is then decoded strictly as its kind: an unknown field is a
// problem at its line and column.
//
// # Entries
//
// The entry says how a tool runs. builtin names a Go handler of
// [Loader.Builtins]; command runs a program without a shell (see
// [Command]); other types are [Kind]s of [Loader.Kinds]. http, mcp, remote,
// external and custom are recognised but not yet runnable: such tools load
// without a handler and answer executor_not_found, as do builtins the loader
// was not given.
//
// # Discovery and lint
//
// [Loader.LoadDirs] scans folders in the order given, files in sorted order,
// and returns a [Set]; [Set.Apply] registers it in a wield.Registry, where
// the first tool of a name wins and later ones are kept as shadowed.
// [Lint] reports every problem as "file:line:col: message".
package toolfile
