package main

import (
	"strconv"
	"strings"
)

// defaultMaxHistory is --max-history's default: 256 KiB of conversation,
// about 64k tokens, within the context window of every current hosted
// model and of local ones run with a large context.
const defaultMaxHistory = "256KiB"

// historyUnits are the suffixes --max-history takes, longest first.
var historyUnits = []struct {
	suffix string
	n      int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"kb", 1000}, {"mb", 1000 * 1000}, {"b", 1},
}

// maxHistoryBytes reads --max-history: a number of bytes, with or without
// a unit (B, KB, KiB, MB, MiB, in any case); 0 is no bound.
func maxHistoryBytes(s string) (int, error) {
	num, unit := strings.TrimSpace(s), int64(1)
	lower := strings.ToLower(num)
	for _, u := range historyUnits {
		if strings.HasSuffix(lower, u.suffix) {
			num, unit = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.n
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<40)/unit {
		return 0, usagef("--max-history %q: want a size such as 256KiB, 2MB or 100000 (bytes), or 0 for no bound", s)
	}
	return int(n * unit), nil
}
