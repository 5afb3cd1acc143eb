package policy

import (
	"fmt"
	"strings"
)

// maxOperators bounds the operators and brackets of one policy. cedar-go
// parses and folds an expression by recursion, a level per operator or
// bracket, about 2.5 KB of stack a level: half a million levels (a 1 MB
// file of parentheses, 500,000 "&&") exhaust the goroutine's 1 GB stack,
// a fatal error that no recover catches, which ended the server on a
// reload. The count bounds the depth from above; twenty thousand is far
// past what a person writes in one policy (a generated one may compare a
// name with thousands of values, three operators each) and keeps the
// recursion to some 50 MB of stack at worst.
const maxOperators = 20_000

// checkNesting returns the error of the first policy of the file's text b
// with more than maxOperators operators and brackets (outside strings and
// comments), at the place that policy begins; nil when there is none.
func checkNesting(file string, b []byte) *FileError {
	n, line, lineStart := 0, 1, 0
	begun, startLine, startCol := false, 0, 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\n':
			line, lineStart = line+1, i+1
			continue
		case c == ' ' || c == '\t' || c == '\r':
			continue
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i+1 < len(b) && b[i+1] != '\n' {
				i++
			}
			continue
		}
		if !begun {
			begun, startLine, startCol = true, line, i-lineStart+1
		}
		switch {
		case c == '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				switch b[i] {
				case '\\':
					i++
				case '\n':
					line, lineStart = line+1, i+1
				}
			}
		case c == ';':
			n, begun = 0, false
		case strings.IndexByte("([{!-+*<>=.&|", c) >= 0:
			n++
			if i+1 < len(b) && ((c == '&' || c == '|') && b[i+1] == c || strings.IndexByte("=!<>", c) >= 0 && b[i+1] == '=') {
				i++ // one operator of two characters: &&, ||, ==, !=, <=, >=
			}
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(b) && (b[j] == '_' || b[j] >= 'a' && b[j] <= 'z' || b[j] >= 'A' && b[j] <= 'Z' || b[j] >= '0' && b[j] <= '9') {
				j++
			}
			switch string(b[i:j]) {
			case "if", "in", "has", "like", "is":
				n++
			}
			i = j - 1
		}
		if n > maxOperators {
			return &FileError{File: file, Line: startLine, Col: startCol,
				Message: fmt.Sprintf("this policy nests too deep: it has more than %d operators and brackets (split it into several policies)", maxOperators)}
		}
	}
	return nil
}
