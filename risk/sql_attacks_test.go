package risk

import (
	"encoding/json"
	"fmt"
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

// TestSQLReadingsAgree: text that ClassifySQL reads twice instead of four
// times (sqlReadings) gets the same statements and tags as when read four
// times, for every query of the attack and read sets and of the tests above.
func TestSQLReadingsAgree(t *testing.T) {
	var srcs []string
	var attacks []struct{ Src string }
	var benign []string
	for path, v := range map[string]any{"testdata/sql_attacks.json": &attacks, "testdata/sql_benign.json": &benign} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range attacks {
		srcs = append(srcs, a.Src)
	}
	srcs = append(srcs, benign...)
	// One text per character on which the readings differ, each hiding a
	// DROP from some reading only.
	srcs = append(srcs, "SELECT 1", "DELETE FROM t", "UPDATE t SET a = 1 WHERE b = 'e'", "SELECT name FROM t WHERE type='e'",
		`SELECT "a" FROM "t"`, "SELECT 'x' FROM t WHERE a = 'y'; DROP TABLE t",
		"SELECT $$; DROP TABLE x$$", "SELECT $a$ ; DELETE FROM x $a$", "SELECT `a; DROP TABLE t` FROM x",
		"SELECT [a; DROP TABLE t] FROM x", `SELECT 'a\'; DROP TABLE t; SELECT '`, "SELECT 1 # ; DROP TABLE t", "SELECT 1 # '\nDROP TABLE t; SELECT '",
		"SELECT 1 --x; DROP TABLE t", "SELECT 1 /* /* */ ; DROP TABLE t; */", `SELECT E'\'; DROP TABLE t; SELECT '`,
		`SELECT U&'\0027'; DROP TABLE t`, `SELECT U&"a"; DROP TABLE t`)
	fast := 0
	for _, src := range srcs {
		if len(sqlReadings(src)) < len(sqlDialects) {
			fast++
		}
		s1, t1 := ClassifySQL(src)
		s2, t2 := classifySQL(src, sqlDialects)
		if fmt.Sprint(s1, t1) != fmt.Sprint(s2, t2) {
			t.Errorf("%q: read twice %v %v, four times %v %v", src, s1, t1, s2, t2)
		}
	}
	if fast < len(srcs)/2 {
		t.Errorf("only %d of %d queries are read twice", fast, len(srcs))
	}
}
