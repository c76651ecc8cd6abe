package command

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// formatList lays out "|"-separated rows as aligned columns: every column but
// the last is padded to its widest cell and followed by two spaces. This is
// the layout upstream's tables use, so scripts that split on runs of spaces
// keep working.
func formatList(rows []string) string {
	return align(rows, "  ")
}

// formatKV lays out "key|value" rows as "key<pad> = value".
func formatKV(rows []string) string {
	return align(rows, " = ")
}

func align(rows []string, glue string) string {
	cells := make([][]string, len(rows))
	var widths []int
	for i, r := range rows {
		cells[i] = strings.Split(r, "|")
		for j, c := range cells[i] {
			c = strings.TrimSpace(c)
			cells[i][j] = c
			if j >= len(widths) {
				widths = append(widths, 0)
			}
			if n := utf8.RuneCountInString(c); n > widths[j] {
				widths[j] = n
			}
		}
	}
	var b strings.Builder
	for _, row := range cells {
		var line strings.Builder
		for j, c := range row {
			if j == len(row)-1 {
				line.WriteString(c)
				break
			}
			line.WriteString(c)
			line.WriteString(strings.Repeat(" ", widths[j]-utf8.RuneCountInString(c)))
			line.WriteString(glue)
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// formatTime prints a wall-clock time the way every command does.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

// formatUnixNano prints a unix-nanosecond timestamp from the API.
func formatUnixNano(ns int64) string {
	if ns == 0 {
		return ""
	}
	return formatTime(time.Unix(0, ns))
}

// formatAgo prints how long ago t was, coarsely, for allocation tables.
func formatAgo(t time.Time, now time.Time) string {
	d := now.Sub(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%ds ago", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm ago", int(d.Hours()), int(d.Minutes())%60)
	default:
		return formatTime(t)
	}
}

// shortID truncates a UUID to the eight characters commands show by default.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// orNone substitutes "<none>" for an empty value.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// prettyJSON renders v as indented JSON, as every -json flag prints it.
func prettyJSON(v any) (string, error) {
	out, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// str, intv, u64 and boolv read optional api fields.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func intv(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func u64(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func boolv(p *bool) bool {
	return p != nil && *p
}

// formatRows is a table of one row a value under header, or empty when there are none.
func formatRows[T any](list []T, empty, header string, row func(T) string) string {
	if len(list) == 0 {
		return empty
	}
	rows := []string{header}
	for _, v := range list {
		rows = append(rows, row(v))
	}
	return formatList(rows)
}
