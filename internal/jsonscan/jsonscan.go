// Package jsonscan holds the pieces of JSON scanning that wield's strict
// parser (package schema) and its typed decoder (internal/jsondec) share.
package jsonscan

// Number returns the end of the JSON number that starts at b[i], and false
// when none does.
func Number(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, false
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i, true
}

// Hex4 decodes the four hexadecimal digits of a \u escape, which the caller
// has checked.
func Hex4(b []byte) rune {
	var n rune
	for _, c := range b {
		n <<= 4
		switch {
		case c >= '0' && c <= '9':
			n |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			n |= rune(c-'a') + 10
		default:
			n |= rune(c-'A') + 10
		}
	}
	return n
}
