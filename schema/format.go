package schema

import (
	"maps"
	"net/mail"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// formats are the values of the format keyword that a check enforces: the
// common ones of JSON Schema 2020-12 (section 7.3), each checked by the
// standard library's parser of that syntax where it has one. Other formats
// are annotations, as the specification allows: they are kept in the
// schema for the model and not checked.
var formats = map[string]func(string) bool{
	"date-time":     isDateTime,
	"date":          isDate,
	"time":          isTime,
	"email":         isEmail,
	"idn-email":     isEmail,
	"uri":           isURI,
	"uri-reference": isURIReference,
	"uuid":          isUUID,
	"ipv4":          isIPv4,
	"ipv6":          isIPv6,
	"hostname":      isHostname,
	"regex":         isRegex,
}

// CheckedFormats are the values of the format keyword that validation
// checks, sorted; any other format is an annotation for the model.
func CheckedFormats() []string {
	return slices.Sorted(maps.Keys(formats))
}

// formatWhat says in a message what a format expects.
var formatWhat = map[string]string{
	"date-time":     "a date and time in RFC 3339 form, like 2024-05-01T13:45:00Z",
	"date":          "a date in RFC 3339 form, like 2024-05-01",
	"time":          "a time of day in RFC 3339 form with its offset, like 13:45:00Z",
	"email":         "an email address, like name@example.com",
	"idn-email":     "an email address, like name@example.com",
	"uri":           "an absolute URI with a scheme, like https://example.com/path",
	"uri-reference": "a URI or a relative reference, like /path?q=1",
	"uuid":          "a UUID, like 123e4567-e89b-12d3-a456-426614174000",
	"ipv4":          "an IPv4 address in dotted form, like 192.0.2.1",
	"ipv6":          "an IPv6 address, like 2001:db8::1",
	"hostname":      "a host name of letters, digits and hyphens in dot-separated labels, like api.example.com",
	"regex":         "a regular expression",
}

// isDateTime accepts RFC 3339's date-time: the time's "T" and the offset's
// "Z" in either case, fractional seconds, and a leap second's :60.
func isDateTime(s string) bool {
	if len(s) < len("2006-01-02T15:04:05Z") || (s[10] != 'T' && s[10] != 't') {
		return false
	}
	return isDate(s[:10]) && isTime(s[11:])
}

func isDate(s string) bool {
	if len(s) != len("2006-01-02") {
		return false
	}
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// isTime accepts RFC 3339's full-time: hh:mm:ss, optional fraction, and an
// offset (Z or ±hh:mm), with 60 seconds allowed for a leap second.
func isTime(s string) bool {
	if len(s) < len("15:04:05Z") || s[2] != ':' || s[5] != ':' {
		return false
	}
	if !digits(s[0:2]) || !digits(s[3:5]) || !digits(s[6:8]) {
		return false
	}
	h, m, sec := atoi2(s[0:2]), atoi2(s[3:5]), atoi2(s[6:8])
	if h > 23 || m > 59 || sec > 60 {
		return false
	}
	rest := s[8:]
	if len(rest) > 0 && rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 {
			return false
		}
		rest = rest[i:]
	}
	switch {
	case rest == "Z" || rest == "z":
		return true
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':' && digits(rest[1:3]) && digits(rest[4:6]):
		return atoi2(rest[1:3]) <= 23 && atoi2(rest[4:6]) <= 59
	}
	return false
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func atoi2(s string) int { return int(s[0]-'0')*10 + int(s[1]-'0') }

// isEmail accepts a bare address (RFC 5322's addr-spec), not a display
// name with one ("Ann <ann@example.com>").
func isEmail(s string) bool {
	if strings.ContainsAny(s, "<> \t\r\n") {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

func isURI(s string) bool {
	if !utf8.ValidString(s) || strings.ContainsAny(s, " \t\r\n\\") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

func isURIReference(s string) bool {
	if !utf8.ValidString(s) || strings.ContainsAny(s, " \t\r\n\\") {
		return false
	}
	_, err := url.Parse(s)
	return err == nil
}

var uuidForm = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func isUUID(s string) bool { return len(s) == 36 && uuidForm.MatchString(s) }

// isIPv4 accepts the dotted-quad form only: netip refuses leading zeros
// ("010.0.0.1"), which some parsers read as octal.
func isIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

// isIPv6 accepts an IPv6 address without a zone ("fe80::1%eth0" is not an
// address a schema can mean).
func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && a.Zone() == ""
}

// isHostname accepts RFC 1123 host names: labels of 1 to 63 letters, digits
// and hyphens, not starting or ending with a hyphen, 253 bytes in all, an
// optional final dot.
func isHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return false
			}
		}
	}
	return true
}

func isRegex(s string) bool {
	_, err := CompilePattern(s)
	return err == nil
}
