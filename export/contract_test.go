package export

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// docs/contract.md holds the export's columns, in order, each with its
// type, as a promise to whoever loads the files: a column that moves, is
// renamed, changes type or comes without its line there fails here.
func TestContractListsTheColumns(t *testing.T) {
	doc, err := os.ReadFile("../docs/contract.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n## `ingest export`\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var got []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([^|]+) \\|$").FindAllStringSubmatch(section, -1) {
		got = append(got, m[1]+": "+strings.TrimSpace(m[2]))
	}
	var want []string
	for _, name := range csvHeader {
		want = append(want, name+": "+columnType(t, name))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/contract.md's export columns:\n%s\n\nwant, in this order:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// columnType is a column's type as the contract names it, read from the
// Parquet schema, the one of the formats that types every column.
func columnType(t *testing.T, name string) string {
	t.Helper()
	var field parquet.Field
	for _, f := range parquetSchema.Fields() {
		if f.Name() == name {
			field = f
		}
	}
	if field == nil {
		t.Fatalf("no Parquet column %s", name)
	}
	typ := ""
	logical := ""
	if lt := field.Type().LogicalType(); lt != nil {
		logical = lt.String()
	}
	switch {
	case strings.HasPrefix(logical, "LIST"):
		return "list of text"
	case strings.HasPrefix(logical, "TIMESTAMP"):
		typ = "time (UTC, to the second)"
	case strings.HasPrefix(logical, "DATE"):
		typ = "date"
	case field.Type().Kind() == parquet.Boolean:
		typ = "boolean"
	case field.Type().Kind() == parquet.Int64 || field.Type().Kind() == parquet.Int32:
		typ = "integer"
	case field.Type().Kind() == parquet.ByteArray:
		typ = "text"
	default:
		t.Fatalf("column %s: no contract type for %v", name, field.Type())
	}
	if field.Optional() {
		typ += " or null"
	}
	return fmt.Sprint(typ)
}
