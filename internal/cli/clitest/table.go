package clitest

import (
	"fmt"
	"strings"
)

// Misaligned returns a description of the first row of a streamed table
// (a watch) that is not lined up with the header line above it, or "" when
// every row is. Header lines start with header (the first column's
// header). A column starts where a header word starts; a row is lined up
// when a space precedes each column start it reaches and every cell (text
// after two or more spaces) starts at a column start.
func Misaligned(table, header string) string {
	var starts map[int]bool
	for n, line := range strings.Split(strings.TrimRight(table, "\n"), "\n") {
		if strings.HasPrefix(line, header) {
			starts = map[int]bool{}
			for i := range line {
				if line[i] != ' ' && (i == 0 || line[i-1] == ' ') {
					starts[i] = true
				}
			}
			continue
		}
		if starts == nil {
			return fmt.Sprintf("line %d %q comes before any header", n+1, line)
		}
		for s := range starts {
			if s > 0 && s < len(line) && line[s-1] != ' ' {
				return fmt.Sprintf("line %d %q: a cell runs into the column at %d", n+1, line, s)
			}
		}
		for i := range line {
			cellStart := line[i] != ' ' && (i == 0 || (i >= 2 && line[i-1] == ' ' && line[i-2] == ' '))
			if cellStart && !starts[i] {
				return fmt.Sprintf("line %d %q: a cell starts at %d, not at a column of the header above", n+1, line, i)
			}
		}
	}
	return ""
}
