package toolfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// What a tool folder may hold besides tool files: configuration files,
// files that are no regular file, folders named through a symbolic link.

// readRegular reads the file at path (symbolic links followed), refusing
// what is not a regular file: a read of a named pipe waits for a writer, of
// a device it may never end. It reads at most one byte more than
// [MaxFileSize], which the decoders refuse.
func readRegular(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &notRegularError{path: path, mode: info.Mode()}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxFileSize+1))
}

// notRegularError is readRegular's refusal of what is not a regular file.
type notRegularError struct {
	path string
	mode fs.FileMode
}

func (e *notRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s)", e.path, fileType(e.mode))
}

// fileType names what a file that is not regular is.
func fileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return "not a file of data"
}

// unreadableFile is the problem of a file the loader could not read: a file
// found in a folder that is no regular file is left out with a warning; one
// given by name is an error, as is any other failure to read.
func unreadableFile(path string, named bool, err error) Problem {
	p := Problem{File: path, Line: 1, Col: 1}
	var nr *notRegularError
	var pe *fs.PathError
	switch {
	case errors.As(err, &nr) && named:
		p.Message = fmt.Sprintf("not a regular file (%s): expected a tool file or a folder of them", fileType(nr.mode))
	case errors.As(err, &nr):
		p.Message, p.Warning = fmt.Sprintf("not a regular file (%s): left out", fileType(nr.mode)), true
	case errors.As(err, &pe):
		p.Message = "cannot read it: " + pe.Err.Error()
	default:
		p.Message = "cannot read it: " + err.Error()
	}
	return p
}

// folderProblem is the problem of a folder given to the loader that cannot
// be walked, at the place that names it when l.DirAt knows one.
func (l *Loader) folderProblem(dir string, err error) Problem {
	missing := errors.Is(err, fs.ErrNotExist)
	p := Problem{File: dir, Line: 1, Col: 1, Message: err.Error(), Warning: missing}
	if missing {
		// A tool folder that does not exist yet is ordinary on a first
		// run (the configuration names it before anyone has put a tool
		// there): a warning, and a reload finds it once it exists.
		p.Message = "tool folder does not exist (yet): no tools loaded from it"
	}
	if at, ok := l.DirAt[dir]; ok {
		p.File, p.Line, p.Col = at.File, at.Line, at.Col
		if missing {
			p.Message = fmt.Sprintf("tool folder \"%s\" does not exist (yet): no tools loaded from it", dir)
		} else {
			p.Message = fmt.Sprintf("tool folder \"%s\": %v", dir, err)
		}
	}
	return p
}

// configNames are the names of configuration files.
var configNames = []string{"wield.yaml", "wield.yml", "config.yml", "config.yaml"}

// IsConfig reports whether the file at path, whose contents are src, is a
// configuration rather than a tool file: one [LooksLikeConfig] takes for
// one, or one named wield.yaml, wield.yml, config.yml or config.yaml that
// is not written as a tool file (a list, a stream of documents, a mapping
// with a name, a kind or a tools: list of tools).
func IsConfig(path string, src []byte) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
	default:
		return false
	}
	if looksLikeConfig(src) {
		return true
	}
	named := false
	for _, n := range configNames {
		named = named || filepath.Base(path) == n
	}
	if !named {
		return false
	}
	var doc map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		return errors.Is(err, io.EOF) // empty: an empty configuration
	}
	var more any
	if dec.Decode(&more) == nil {
		return false
	}
	_, name := doc["name"]
	_, kind := doc["kind"]
	if list, ok := doc["tools"].([]any); ok && len(list) > 0 {
		if _, tool := list[0].(map[string]any); tool {
			return false // a tools: list of tools
		}
	}
	return !name && !kind
}

// config deals with a configuration file found where tool files are: the
// configuration in use is left out without a word (its problems are told
// as it loads), another is checked as a configuration with
// [Loader.CheckConfigs], or else left out with a warning naming it.
func (l *Loader) config(part *Set, path string, src []byte) {
	switch {
	case l.ConfigFile != "" && sameFile(path, l.ConfigFile):
	case l.CheckConfigs:
		c := newConfigDecoder(path, os.LookupEnv)
		c.config(src, filepath.Dir(path))
		part.Problems = append(part.Problems, c.problems...)
	default:
		part.Problems = append(part.Problems, Problem{File: path, Line: 1, Col: 1, Warning: true,
			Message: "a configuration file, not a tool file: left out (wield reads a configuration given with --config; wield validate checks this one)"})
	}
}

// sameFile reports whether a and b name the same file.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// toolDirAt records in cfg.ToolDirAt where the tool folder of the value n
// (a tool_dirs item, tools_directory's value) is written, the first place
// of a folder named twice.
func (c *configDecoder) toolDirAt(cfg *Config, n *yaml.Node) {
	v := unwrap(n)
	if !isString(v) || v.Value == "" {
		return
	}
	d := v.Value
	if !filepath.IsAbs(d) {
		d = filepath.Join(filepath.Dir(c.decoder.file), d)
	}
	if cfg.ToolDirAt == nil {
		cfg.ToolDirAt = map[string]Position{}
	}
	if _, ok := cfg.ToolDirAt[d]; !ok {
		line, col := pos(n)
		cfg.ToolDirAt[d] = Position{File: c.decoder.file, Line: line, Col: col}
	}
}
