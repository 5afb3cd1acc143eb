// Package toolfile loads tools, toolsets and agents described in files, so
// that most tools need no Go code.
//
// # Tool files
//
// A tool file is YAML or JSON in the declarative tool format (name,
// version, description, category, tags, parameters, entry, output), one tool per
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
// default (a parameter's default required is true). Nested properties and items
// are required only when they say so or their object lists them.
//
// wield adds permission, timeout ("30s" or seconds), max_output (the
// output budget, bytes), annotations (read_only,
// destructive, idempotent, open_world), secrets, examples (argument objects,
// each checked against the parameters at load, strictly) and
// allowed_callers (direct, program) to the format.
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
// tools; with tools as a list of names a toolset (configs/tool_sets/*.yaml:
// name, description, tools). An agent that lists only tools must say `kind: agent`.
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
// # Built-ins, duplicates and reload
//
// Tool files are the user's configuration and the program's built-in tools
// its defaults ([Loader.Builtins], registered with
// [wield.Registry.RegisterDefaults]):
//
//   - A file that defines a built-in's name replaces the built-in. When its
//     entry is `{type: builtin, handler: NAME}` of that same name, the file
//     re-declares the built-in with its own description, parameters and
//     validation rules: a note in [Set.Notes], not a warning, and the
//     built-in's handler runs under the file's rules (see [HandlersOf] for
//     how arguments are fitted to it and what the tool inherits). A
//     re-declaration may not leave out a parameter the built-in requires. Any
//     other file defining a built-in's name gets a warning that the built-in
//     is shadowed. Removing the file (on reload) brings the built-in back.
//   - Between files, the first in load order wins; both places get a
//     warning naming the other ("a.yaml:2" and "b.yaml:2"), and the later
//     tool is recorded as shadowed ([wield.Registry.Shadowed]).
//   - A file that defines the name of one of the program's other tools
//     (registered in Go, imported from an MCP server) is shadowed by it,
//     with a warning.
//   - Toolsets and agents may name any tool the program has: the files',
//     the built-ins and those [Loader.Known] reports; agents may name the
//     files' toolsets and those [Loader.KnownToolset] reports.
//
// None of this is an error: [Set.Apply] and every reload of a [Watcher]
// apply the same rule, so a reload never leaves the registry in a state the
// next start would refuse. A Watcher logs each problem once, when a load
// first shows it. A toolset or an agent naming what the registry does not
// hold when the set is applied is not defined: [Set.Apply] returns an
// [*UndefinedError] located at each such name.
//
// # Discovery and lint
//
// [Loader.LoadDirs] scans folders in the order given, files in sorted order,
// and returns a [Set]; [Set.Apply] registers it in a wield.Registry.
// [Lint] reports every problem as "file:line:col: message".
package toolfile
