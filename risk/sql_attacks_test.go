package risk

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// sqlReadOnly is the sample policy's sql-reads rule: nothing but the tag
// sql, and every statement a SELECT, SHOW or EXPLAIN.
func sqlReadOnly(stmts []SQLStatement, tags []string) bool {
	if len(tags) != 1 || tags[0] != "sql" {
		return false
	}
	for _, s := range stmts {
		if s.Verb != "SELECT" && s.Verb != "SHOW" && s.Verb != "EXPLAIN" {
			return false
		}
	}
	return true
}

// TestSQLAttacks: statement boundaries without a semicolon, dollar-quote
// tags outside ASCII, files and URLs read as tables, and catalogs that hold
// credentials. Each case gets the tag it names and is never read-only.
func TestSQLAttacks(t *testing.T) {
	b, err := os.ReadFile("testdata/sql_attacks.json")
	if err != nil {
		t.Fatal(err)
	}
	var attacks []struct{ Src, Class, Want string }
	if err := json.Unmarshal(b, &attacks); err != nil {
		t.Fatal(err)
	}
	if len(attacks) < 60 {
		t.Fatalf("%d cases; the file must keep at least 60", len(attacks))
	}
	classes := map[string]int{}
	for _, a := range attacks {
		classes[a.Class]++
		stmts, tags := ClassifySQL(a.Src)
		if !slices.Contains(tags, a.Want) || sqlReadOnly(stmts, tags) {
			t.Errorf("%q: tags %v (statements %+v), want %s", a.Src, tags, stmts, a.Want)
		}
	}
	for c, n := range classes {
		if n < 10 {
			t.Errorf("class %q has %d cases, want at least 10", c, n)
		}
	}
}

// TestSQLHarmlessStaysReadOnly: plain reads (joins, CTEs, window
// functions, EXPLAIN of a SELECT, T-SQL's TOP, FETCH and lock-free hints,
// names and dollar quotes outside ASCII, batches of SELECTs) stay
// read-only: the fixes for the attacks above must not make every read ask.
func TestSQLHarmlessStaysReadOnly(t *testing.T) {
	b, err := os.ReadFile("testdata/sql_benign.json")
	if err != nil {
		t.Fatal(err)
	}
	var benign []string
	if err := json.Unmarshal(b, &benign); err != nil {
		t.Fatal(err)
	}
	for _, src := range benign {
		if stmts, tags := ClassifySQL(src); !sqlReadOnly(stmts, tags) {
			t.Errorf("%q: not read-only: tags %v, statements %+v", src, tags, stmts)
		}
	}
}
