package toolfile

import (
	"path"
	"regexp"
	"strings"
)

// codeArg is an element of a command that a shell or an interpreter runs as
// code: a placeholder there lets the model's value become a program.
type codeArg struct {
	index int    // the element
	rest  bool   // every element from index on is code (cmd /c, powershell -Command)
	how   string // what runs it: "sh -c", "python3 -c", "awk program text"
	shell bool   // a POSIX-like shell, whose script reads its arguments as $1, $2...
}

// commandShape is what wield knows of a command template without running
// it: which elements are code, and from which element on the program no
// longer reads options (after a literal "--", or after a shell's script or
// an interpreter's code, whose further arguments are the code's own).
type commandShape struct {
	code       []codeArg
	optionsEnd int // len(argv) when options never end
}

// interpreter families, by program name.
var (
	shells      = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true, "yash": true, "csh": true, "tcsh": true, "rbash": true, "busybox": true}
	pythonName  = regexp.MustCompile(`^(python|pypy)[0-9.]*$`)
	inlineFlags = map[string][]string{ // program → the flags whose next element is code
		"node": {"-e", "--eval", "-p", "--print"}, "nodejs": {"-e", "--eval", "-p", "--print"}, "bun": {"-e", "--eval", "-p", "--print"},
		"perl": {"-e", "-E"}, "ruby": {"-e"}, "php": {"-r"}, "osascript": {"-e"}, "lua": {"-e"}, "luajit": {"-e"},
		"rscript": {"-e"}, "tclsh": {"-c"}, "jshell": {"-c"},
	}
	awks = map[string]bool{"awk": true, "gawk": true, "mawk": true, "nawk": true}
)

// programName is the lower-case base name of a program, without ".exe".
func programName(p string) string {
	p = path.Base(strings.ReplaceAll(p, `\`, "/"))
	p = strings.ToLower(p)
	return strings.TrimSuffix(p, ".exe")
}

// shapeOf reads a command template: see [commandShape].
func shapeOf(argv []string) commandShape {
	s := commandShape{optionsEnd: len(argv)}
	for i, a := range argv {
		if a == "--" {
			s.optionsEnd = i
			break
		}
	}
	if len(argv) == 0 {
		return s
	}
	i := 0
	name := programName(argv[0])
	if name == "env" { // env [-i] [NAME=value...] program args...
		for i = 1; i < len(argv) && (strings.HasPrefix(argv[i], "-") || strings.Contains(argv[i], "=") && !strings.HasPrefix(argv[i], "{")); i++ {
		}
		if i >= len(argv) {
			return s
		}
		name = programName(argv[i])
	}
	if name == "busybox" && i+1 < len(argv) { // busybox sh -c ...
		i++
		name = programName(argv[i])
	}
	code := func(j int, how string, shell bool) {
		if j < len(argv) {
			s.code = append(s.code, codeArg{index: j, how: how, shell: shell})
			if shell || pythonName.MatchString(name) {
				// What follows a shell's script or Python's -c code is the
				// code's own arguments ($1, sys.argv), never options.
				s.optionsEnd = min(s.optionsEnd, j+1)
			}
		}
	}
	rest := func(j int, how string) {
		if j < len(argv) {
			s.code = append(s.code, codeArg{index: j, rest: true, how: how})
		}
	}
	args := argv[i+1:]
	at := func(k int) int { return i + 1 + k }
	switch {
	case shells[name] || name == "fish":
		// The command string is the first operand after a -c among the
		// options: sh -c, bash -lc, sh -e -c; fish -c or --command.
		hasC := false
		for k := 0; k < len(args); k++ {
			a := args[k]
			switch {
			case a == "--":
				if hasC {
					code(at(k+1), name+" -c", true)
				}
				return s
			case a == "-o" || a == "+o" || a == "-O" || a == "+O":
				k++ // takes an argument
			case strings.HasPrefix(a, "--command="):
				code(at(k), name+" --command", true)
				return s
			case a == "--command":
				hasC = true
			case len(a) > 1 && (a[0] == '-' || a[0] == '+') && !strings.HasPrefix(a, "--"):
				if a[0] == '-' && strings.Contains(a[1:], "c") {
					hasC = true
				}
			case strings.HasPrefix(a, "--"):
			default:
				if hasC {
					code(at(k), name+" -c", true)
				}
				return s
			}
		}
	case name == "cmd":
		for k, a := range args {
			if l := strings.ToLower(a); l == "/c" || l == "/k" || l == "/r" {
				rest(at(k+1), "cmd "+l)
				return s
			}
		}
	case name == "powershell" || name == "pwsh":
		for k, a := range args {
			l := strings.ToLower(a)
			if len(l) < 2 || l[0] != '-' && l[0] != '/' {
				continue
			}
			flag := "-" + l[1:]
			switch {
			case len(flag) >= 2 && strings.HasPrefix("-command", flag):
				rest(at(k+1), name+" -Command")
				return s
			case len(flag) >= 2 && strings.HasPrefix("-encodedcommand", flag), flag == "-ec":
				code(at(k+1), name+" -EncodedCommand", false)
				return s
			case len(flag) >= 2 && strings.HasPrefix("-file", flag):
				return s
			}
		}
	case pythonName.MatchString(name):
		for k := 0; k < len(args); k++ {
			a := args[k]
			switch {
			case a == "-c" || len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.HasSuffix(a, "c") && isLetters(a[1:]):
				code(at(k+1), name+" -c", false)
				return s
			case a == "-m":
				return s
			case a == "-W" || a == "-X":
				k++
			case strings.HasPrefix(a, "-"):
			default:
				return s // a script
			}
		}
	case inlineFlags[name] != nil:
		flags := inlineFlags[name]
		for k := 0; k < len(args); k++ {
			a := args[k]
			if a == "--" || !strings.HasPrefix(a, "-") {
				return s
			}
			for _, f := range flags {
				switch {
				case a == f:
					code(at(k+1), name+" "+f, false)
					k++
				case strings.HasPrefix(f, "--") && strings.HasPrefix(a, f+"="):
					code(at(k), name+" "+f, false)
				case len(f) == 2 && len(a) > 2 && a[0] == '-' && a[1] != '-' && isLetters(a[1:]) && strings.HasSuffix(a, f[1:]):
					code(at(k+1), name+" "+a, false) // perl -ne, ruby -pe
					k++
				}
			}
		}
	case name == "deno":
		if len(args) > 0 && args[0] == "eval" {
			for k := 1; k < len(args); k++ {
				if !strings.HasPrefix(args[k], "-") {
					code(at(k), "deno eval", false)
					return s
				}
			}
		}
	case awks[name]:
		// The program text is the first operand, unless -f names a file;
		// gawk's -e and --source add program text.
		for k := 0; k < len(args); k++ {
			a := args[k]
			switch {
			case a == "--":
				code(at(k+1), name+" program text", false)
				return s
			case a == "-f" || strings.HasPrefix(a, "--file"):
				return s
			case a == "-e" || a == "--source":
				code(at(k+1), name+" "+a, false)
				k++
			case a == "-F" || a == "-v":
				k++
			case strings.HasPrefix(a, "-") && len(a) > 1:
			default:
				code(at(k), name+" program text", false)
				return s
			}
		}
	}
	return s
}

func isLetters(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// placeholdersIn returns the names of the placeholders of a template
// element, in order.
func placeholdersIn(a string) []string {
	var names []string
	for _, m := range placeholder.FindAllStringSubmatch(a, -1) {
		if m[0] != "{{" && m[0] != "}}" && m[1] != "" {
			names = append(names, m[1])
		}
	}
	return names
}
