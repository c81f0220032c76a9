package risk

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SQLStatement is what rein reads from one SQL statement (risk.md, SQL).
// Verb is upper case (SELECT, DELETE, DROP, ...); Tables are the tables the
// statement names, lower-cased unless quoted; HasWhere is false when a
// top-level WHERE is missing or always true (WHERE 1=1, WHERE TRUE, OR 1=1).
// Functions are the functions, table functions and procedures it calls
// (lower case, without schema); UnknownFunctions those of them rein does
// not know to be read-only.
type SQLStatement struct {
	Verb             string   `json:"verb"`
	Tables           []string `json:"tables"`
	HasWhere         bool     `json:"has_where"`
	Functions        []string `json:"functions"`
	UnknownFunctions []string `json:"unknown_functions"`
}

// ClassifySQL splits src into statements and classifies each one. It is a
// tokenizer, not a parser: it reads verbs, table names and WHERE.
func ClassifySQL(src string) ([]SQLStatement, []string) {
	return classifySQL(src, sqlReadings(src))
}

// sqlReadings are the readings src needs. The PostgreSQL, MySQL and SQLite
// readings differ only where src holds $, `, [, \, #, -- or /* (E'…' and
// U&'…' strings differ only with a backslash in them); text without any of
// these reads alike in the three, and the PostgreSQL reading stands for all
// (TestSQLReadingsAgree and FuzzClassifySQL check that the answer is the
// same). SQL Server's reading is always made.
func sqlReadings(src string) []sqlDialect {
	if strings.ContainsAny(src, "$`[\\#") || strings.Contains(src, "--") || strings.Contains(src, "/*") {
		return sqlDialects
	}
	return sqlPlainDialects
}

var sqlPlainDialects = []sqlDialect{sqlDialects[0], sqlDialects[2]}

func classifySQL(src string, dialects []sqlDialect) ([]SQLStatement, []string) {
	tags := map[string]bool{"sql": true}
	// Four readings, one per dialect family: PostgreSQL ("--" always
	// starts a comment, /* */ nests, $tag$ quoting, E'' strings with
	// backslash escapes), MySQL ("--" needs a space after it, "#" starts a
	// comment, backslashes escape, /*! */ is executed), SQL Server ([x]
	// names, /* */ nests) and SQLite ([x] and `x` names, no nesting, plain
	// strings). Text that is a string or a comment to one can be SQL to
	// another, so rein keeps what any reading finds.
	var stmts []SQLStatement
	for _, d := range dialects {
		got, ok := sqlStatements(src, d, tags)
		if !ok {
			tags["sql.parse_error"] = true
		}
		for _, a := range got {
			if !containsStatement(stmts, a) {
				stmts = append(stmts, a)
			}
		}
	}
	return stmts, sortedTags(tags)
}

// sqlDialect says how one database family reads SQL text.
type sqlDialect struct {
	mysql    bool // "#" comments, "-- " comments, backslash escapes, /*! */
	nested   bool // /* */ comments nest
	brackets bool // [name] is a quoted name
	dollar   bool // $tag$ ... $tag$ strings, E'' strings
	backtick bool // `name` is a quoted name
	// high: every character beyond ASCII is part of a name (PostgreSQL's
	// scan.l takes any byte above 0x7f in names and dollar-quote tags,
	// MySQL takes U+0080 to U+FFFF, SQLite's tokenizer any byte above
	// 0x7f); elsewhere only letters are.
	high bool
	// tsql: a line holding only GO [count] ends a batch (sqlcmd, SSMS),
	// and a statement ends wherever the next one can begin, ";" or not
	// (SQL Server runs "SELECT 1 DELETE FROM t" as two statements).
	tsql bool
}

var sqlDialects = []sqlDialect{
	{nested: true, dollar: true, high: true},     // PostgreSQL
	{mysql: true, backtick: true, high: true},    // MySQL, MariaDB
	{nested: true, brackets: true, tsql: true},   // SQL Server
	{brackets: true, backtick: true, high: true}, // SQLite, DuckDB
}

func containsStatement(list []SQLStatement, s SQLStatement) bool {
	for _, x := range list {
		if x.Verb == s.Verb && x.HasWhere == s.HasWhere && strings.Join(x.Tables, ",") == strings.Join(s.Tables, ",") &&
			strings.Join(x.Functions, ",") == strings.Join(s.Functions, ",") {
			return true
		}
	}
	return false
}

type sqlTok struct {
	kind byte   // 'w' word, 'q' quoted identifier, 's' string, 'n' number, 'p' punctuation, ';', 'c' client command
	text string // words upper-cased in up; text as written (identifiers unquoted)
	up   string
}

// executableComments are the openings of comments a server does not skip,
// longest first: MySQL and MariaDB run /*! … */ and /*!NNNNN … */ (MySQL
// Reference Manual, "Comments"), MariaDB also /*M! … */ and /*M!NNNNNN … */
// (MariaDB docs, "Comment Syntax"), and /*+ … */ holds optimizer hints
// (MySQL Reference Manual, "Optimizer Hints"; MariaDB, pg_hint_plan), some
// of which set server variables (SET_VAR). rein reads the content of each as
// SQL, whatever the version number says, since it does not know the
// server's version; the lower-case m is read too.
var executableComments = []string{"/*M!", "/*m!", "/*!", "/*+"}

// executableComment is the length of the executable-comment opening that s
// starts with, or 0.
func executableComment(s string) int {
	for _, x := range executableComments {
		if strings.HasPrefix(s, x) {
			return len(x)
		}
	}
	return 0
}

// sqlTokens reads src into tokens. ok is false when a string, quoted
// identifier or comment is not terminated.
func sqlTokens(src string, d sqlDialect) (toks []sqlTok, ok bool) {
	mysql := d.mysql
	i := 0
	n := len(src)
	for i < n {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < n && src[i+1] == '-' && (!mysql || i+2 == n || strings.IndexByte(" \t\r\n", src[i+2]) >= 0),
			c == '#' && mysql:
			// A comment to the end of the line.
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && src[i+1] == '*':
			if k := executableComment(src[i:]); k > 0 {
				// Read the content of an executed comment as SQL.
				i += k
				for i < n && src[i] >= '0' && src[i] <= '9' {
					i++
				}
				continue
			}
			depth := 0
			j := i
			for j < n {
				if src[j] == '/' && j+1 < n && src[j+1] == '*' && (d.nested || depth == 0) {
					depth++
					j += 2
				} else if src[j] == '*' && j+1 < n && src[j+1] == '/' {
					depth--
					j += 2
					if depth == 0 {
						break
					}
				} else {
					j++
				}
			}
			if depth > 0 {
				return toks, false
			}
			i = j
		case c == '*' && i+1 < n && src[i+1] == '/':
			i += 2 // the end of a /*! ... */ section
		case c == '\'' || (d.dollar && (c == 'E' || c == 'e') && i+1 < n && src[i+1] == '\''):
			esc := mysql
			if c != '\'' {
				esc = true
				i++
			}
			s, next, closed := sqlQuoted(src, i, '\'', esc)
			if !closed {
				return toks, false
			}
			toks = append(toks, sqlTok{kind: 's', text: s})
			i = next
		case c == '[' && d.brackets:
			end := strings.IndexByte(src[i+1:], ']')
			if end < 0 {
				return toks, false
			}
			toks = append(toks, sqlTok{kind: 'q', text: src[i+1 : i+1+end]})
			i += end + 2
		case d.dollar && (c == 'U' || c == 'u') && i+2 < n && src[i+1] == '&' && (src[i+2] == '"' || src[i+2] == '\''):
			// PostgreSQL U&"d\0061ta" and U&'d\0061ta': Unicode escapes.
			q, next, closed := sqlQuoted(src, i+2, src[i+2], false)
			if !closed {
				return toks, false
			}
			kind := byte('q')
			if src[i+2] == '\'' {
				kind = 's'
			}
			toks = append(toks, sqlTok{kind: kind, text: unicodeEscapes(q)})
			i = next
		case c == '"' || c == '`' && d.backtick:
			s, next, closed := sqlQuoted(src, i, c, false)
			if !closed {
				return toks, false
			}
			toks = append(toks, sqlTok{kind: 'q', text: s})
			i = next
		case d.dollar && c == '$' && i+1 < n && (src[i+1] == '$' || dollarTagByte(src[i+1], false)):
			j := i + 1
			for j < n && src[j] != '$' && dollarTagByte(src[j], true) {
				j++
			}
			if j >= n || src[j] != '$' {
				toks = append(toks, sqlTok{kind: 'p', text: "$"})
				i++
				continue
			}
			tag := src[i : j+1]
			end := strings.Index(src[j+1:], tag)
			if end < 0 {
				return toks, false
			}
			toks = append(toks, sqlTok{kind: 's', text: src[j+1 : j+1+end]})
			i = j + 1 + end + len(tag)
		case c >= '0' && c <= '9':
			j := i
			for j < n && (isIdentPart(rune(src[j])) || src[j] == '.') {
				j++
			}
			toks = append(toks, sqlTok{kind: 'n', text: src[i:j]})
			i = j
		case c == ';':
			toks = append(toks, sqlTok{kind: ';', text: ";"})
			i++
		case c == '\\' || d.tsql && lineStart(src, i) && i+1 < n &&
			(c == '!' && src[i+1] == '!' || c == ':' && (src[i+1] == '!' || src[i+1]|0x20 >= 'a' && src[i+1]|0x20 <= 'z')):
			// A client's command, to the end of its line: a backslash
			// outside strings is no SQL of any dialect but psql's and
			// mysql's commands (\! runs a program, \gexec reruns results
			// as SQL, \o and \g write files); sqlcmd runs :!! and !!
			// (programs), :r (reads a file), :out, :connect on any line,
			// inside a batch too.
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = n - i
			}
			toks = append(toks, sqlTok{kind: 'c', text: src[i : i+j]})
			i += j
		default:
			r, size := utf8.DecodeRuneInString(src[i:])
			if isIdentStart(r) || d.high && r >= utf8.RuneSelf {
				j := i
				for j < n {
					r, size := utf8.DecodeRuneInString(src[j:])
					if !isIdentPart(r) && r != '$' && !(d.high && r >= utf8.RuneSelf) {
						break
					}
					j += size
				}
				w := src[i:j]
				if d.tsql && len(w) == 2 && strings.EqualFold(w, "GO") && lineStart(src, i) {
					// A batch separator: GO, then an optional count.
					toks = append(toks, sqlTok{kind: ';', text: ";"})
					for j < n && (src[j] == ' ' || src[j] == '\t' || src[j] >= '0' && src[j] <= '9') {
						j++
					}
					i = j
					continue
				}
				toks = append(toks, sqlTok{kind: 'w', text: strings.ToLower(w), up: strings.ToUpper(w)})
				i = j
				continue
			}
			toks = append(toks, sqlTok{kind: 'p', text: src[i : i+size]})
			i += size
		}
	}
	return toks, true
}

// unicodeEscapes decodes PostgreSQL's \XXXX and \+XXXXXX escapes (the
// default escape character; a UESCAPE clause is not read).
func unicodeEscapes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			width := 4
			if i+1 < len(s) && s[i+1] == '+' {
				width = 6
				i++
			}
			if i+1+width <= len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+1+width], 16, 32); err == nil {
					b.WriteRune(rune(v))
					i += width
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sqlQuoted reads a quoted run starting at src[i] == q, where a doubled quote
// stands for itself and, when esc, a backslash escapes the next byte.
func sqlQuoted(src string, i int, q byte, esc bool) (string, int, bool) {
	var b strings.Builder
	for j := i + 1; j < len(src); j++ {
		switch c := src[j]; {
		case esc && c == '\\' && j+1 < len(src):
			j++
			b.WriteByte(src[j])
		case c == q && j+1 < len(src) && src[j+1] == q:
			j++
			b.WriteByte(q)
		case c == q:
			return b.String(), j + 1, true
		default:
			b.WriteByte(c)
		}
	}
	return "", len(src), false
}

// dollarTagByte reports whether b may start (or, when cont, continue) a
// PostgreSQL dollar-quote tag: dolq_start [A-Za-z\200-\377_] and dolq_cont
// [A-Za-z\200-\377_0-9] in src/backend/parser/scan.l. Any byte above 0x7f
// counts, a letter or not (the tag $€$ quotes as $a$ does).
func dollarTagByte(b byte, cont bool) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80 || cont && b >= '0' && b <= '9'
}

// lineStart reports whether only spaces and tabs stand between src[i] and
// the start of its line.
func lineStart(src string, i int) bool {
	for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
		i--
	}
	return i == 0 || src[i-1] == '\n' || src[i-1] == '\r'
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// sqlVerbs are the statements rein recognises; anything else is a parse error.
// startsWithSQLVerb reports whether text reads as SQL: its first word,
// after spaces, opening parentheses and comments, is a statement verb.
func startsWithSQLVerb(s string) bool {
	for {
		s = strings.TrimLeft(s, " \t\r\n(")
		switch {
		case strings.HasPrefix(s, "--") || strings.HasPrefix(s, "#"):
			_, rest, ok := strings.Cut(s, "\n")
			if !ok {
				return false
			}
			s = rest
			continue
		case strings.HasPrefix(s, "/*"):
			_, rest, ok := strings.Cut(s[2:], "*/")
			if !ok {
				return false
			}
			s = rest
			continue
		}
		break
	}
	end := strings.IndexFunc(s, func(r rune) bool { return !isIdentPart(r) })
	if end < 0 {
		end = len(s)
	}
	return end > 0 && sqlVerbs[strings.ToUpper(s[:end])]
}

var sqlVerbs = map[string]bool{
	"SELECT": true, "INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true, "REPLACE": true, "UPSERT": true,
	"WITH": true, "VALUES": true, "TABLE": true, "CREATE": true, "ALTER": true, "DROP": true, "TRUNCATE": true,
	"RENAME": true, "COMMENT": true, "GRANT": true, "REVOKE": true, "COPY": true, "VACUUM": true, "ANALYZE": true,
	"ANALYSE": true, "EXPLAIN": true, "SET": true, "RESET": true, "SHOW": true, "BEGIN": true, "START": true,
	"COMMIT": true, "END": true, "ROLLBACK": true, "SAVEPOINT": true, "RELEASE": true, "CALL": true, "EXEC": true,
	"EXECUTE": true, "DO": true, "LOCK": true, "ATTACH": true, "DETACH": true, "PRAGMA": true, "REINDEX": true,
	"CLUSTER": true, "REFRESH": true, "LOAD": true, "USE": true, "DECLARE": true, "FETCH": true, "CLOSE": true,
	"MOVE": true, "LISTEN": true, "NOTIFY": true, "UNLISTEN": true, "PREPARE": true, "DEALLOCATE": true,
	"DESCRIBE": true, "DESC": true, "CHECKPOINT": true, "DISCARD": true, "REASSIGN": true, "IMPORT": true,
	"BULK": true, "RECONFIGURE": true, "SHUTDOWN": true, "KILL": true, "HANDLER": true, "INSTALL": true,
	"EXPORT": true, // DuckDB's EXPORT DATABASE 'dir'
	"FROM":   true, // DuckDB's FROM-first SELECT: FROM t [SELECT …]
}

var (
	sqlWriteVerbs = map[string]bool{"INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true, "REPLACE": true,
		"UPSERT": true, "COPY": true, "TRUNCATE": true, "LOAD": true, "CALL": true, "EXEC": true, "EXECUTE": true, "DO": true,
		"BULK": true}
	sqlDDLVerbs = map[string]bool{"CREATE": true, "ALTER": true, "DROP": true, "TRUNCATE": true, "RENAME": true,
		"COMMENT": true, "GRANT": true, "REVOKE": true}
	// sqlMainVerbs can follow a WITH clause.
	sqlMainVerbs = map[string]bool{"SELECT": true, "INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true,
		"VALUES": true, "TABLE": true}
	// sqlObjectKinds are the words between CREATE/DROP and the object's name.
	sqlObjectKinds = map[string]bool{"TABLE": true, "VIEW": true, "INDEX": true, "SCHEMA": true, "DATABASE": true,
		"SEQUENCE": true, "FUNCTION": true, "PROCEDURE": true, "TRIGGER": true, "TYPE": true, "ROLE": true,
		"USER": true, "EXTENSION": true, "MATERIALIZED": true, "TEMP": true, "TEMPORARY": true, "UNLOGGED": true,
		"UNIQUE": true, "OR": true, "REPLACE": true, "IF": true, "NOT": true, "EXISTS": true, "ONLY": true,
		"CONCURRENTLY": true, "GLOBAL": true, "LOCAL": true, "FOREIGN": true, "VIRTUAL": true, "RECURSIVE": true}
)

// sqlStatements tokenizes src and classifies each statement, adding tags.
func sqlStatements(src string, d sqlDialect, tags map[string]bool) ([]SQLStatement, bool) {
	toks, ok := sqlTokens(src, d)
	var out []SQLStatement
	useMySQL := false // after USE mysql, its tables need no schema
	start := 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) && toks[i].kind != ';' && toks[i].kind != 'c' {
			continue
		}
		if i < len(toks) && toks[i].kind == 'c' {
			tags["sql.parse_error"] = true // a client's command rein does not read
		}
		if i > start {
			parts := [][]sqlTok{toks[start:i]}
			if d.tsql {
				parts = tsqlSplit(toks[start:i])
			}
			for _, p := range parts {
				n := len(out)
				out = classifyStatement(p, tags, out)
				for _, st := range out[n:] {
					if useMySQL && slices.ContainsFunc(st.Tables, func(t string) bool { return credentialTable("mysql." + t) }) {
						tags["sql.secrets"] = true
					}
				}
				if len(p) > 1 && p[0].up == "USE" && strings.EqualFold(p[1].text, "mysql") {
					useMySQL = true
				}
			}
		}
		start = i + 1
	}
	return out, ok
}

// tsqlStatementWords begin a SQL Server statement that changes data or
// the server, or that rein cannot read (the reserved words of Transact-SQL
// that open a statement; learn.microsoft.com/sql/t-sql/language-elements,
// "Reserved Keywords"). Reserved, they cannot be a bare name or alias, so
// after a complete expression one begins a statement of its own.
var tsqlStatementWords = map[string]bool{"SELECT": true, "INSERT": true, "UPDATE": true, "DELETE": true,
	"MERGE": true, "DROP": true, "CREATE": true, "ALTER": true, "TRUNCATE": true, "EXEC": true, "EXECUTE": true,
	"GRANT": true, "REVOKE": true, "DENY": true, "BACKUP": true, "RESTORE": true, "DBCC": true, "BULK": true,
	"KILL": true, "SHUTDOWN": true, "RECONFIGURE": true, "WAITFOR": true, "DECLARE": true, "USE": true,
	"SETUSER": true, "REVERT": true, "WRITETEXT": true, "UPDATETEXT": true, "READTEXT": true, "DUMP": true,
	"LOAD": true}

// tsqlContinues are the words after which a statement word continues the
// statement (UNION SELECT, ON DELETE, FOR UPDATE, THEN DELETE, GRANT
// INSERT, AFTER UPDATE, ON DUPLICATE KEY UPDATE, DO UPDATE, AS SELECT,
// BULK INSERT, SHOW CREATE) or where an expression must follow (SELECT,
// WHERE, AND).
var tsqlContinues = map[string]bool{"SELECT": true, "DISTINCT": true, "ALL": true, "UNION": true, "EXCEPT": true,
	"INTERSECT": true, "ON": true, "FOR": true, "THEN": true, "ELSE": true, "WHEN": true, "AND": true, "OR": true,
	"NOT": true, "WHERE": true, "HAVING": true, "BY": true, "AS": true, "AFTER": true, "BEFORE": true, "OF": true,
	"INSTEAD": true, "GRANT": true, "REVOKE": true, "DENY": true, "KEY": true, "DO": true, "ROW": true,
	"STATEMENT": true, "EACH": true, "FROM": true, "JOIN": true, "INTO": true, "TABLE": true, "SET": true, "IS": true,
	"IN": true, "LIKE": true, "BETWEEN": true, "CASE": true, "TOP": true, "USING": true, "WITH": true, "BULK": true,
	"ALSO": true, "RETURN": true, "SHOW": true}

// tsqlSplit cuts one statement's tokens where SQL Server would start the
// next statement without a ";": at a top-level statement word that follows
// a complete expression (a name, a literal, ")" or "*"). The first verb
// after WITH's common table expressions and after EXPLAIN or DESCRIBE, and
// DROP and ALTER inside ALTER TABLE, belong to their statement; INSERT(…)
// and the like are MySQL's functions.
func tsqlSplit(toks []sqlTok) [][]sqlTok {
	var parts [][]sqlTok
	lead := toks[0].up == "WITH" || toks[0].up == "EXPLAIN" || toks[0].up == "DESC" || toks[0].up == "DESCRIBE"
	alter := toks[0].up == "ALTER"
	depth, start := 0, 0
	for i := 1; i < len(toks); i++ {
		t := toks[i]
		if t.kind == 'p' && t.text == "(" {
			depth++
		} else if t.kind == 'p' && t.text == ")" {
			depth--
		}
		if depth != 0 || t.kind != 'w' || !tsqlStatementWords[t.up] {
			continue
		}
		if lead {
			lead = false
			continue
		}
		if alter && (t.up == "DROP" || t.up == "ALTER") ||
			i+1 < len(toks) && toks[i+1].text == "(" && t.up != "EXEC" && t.up != "EXECUTE" ||
			t.up == "USE" && i+1 < len(toks) && (toks[i+1].up == "INDEX" || toks[i+1].up == "KEY") {
			continue // ALTER TABLE … DROP, MySQL's INSERT(…) and USE INDEX (…)
		}
		prev := toks[i-1]
		if prev.kind == 'w' && tsqlContinues[prev.up] || prev.kind == 'p' && prev.text != ")" && prev.text != "*" {
			continue
		}
		parts = append(parts, toks[start:i])
		start = i
		alter = t.up == "ALTER"
	}
	return append(parts, toks[start:])
}

// classifyStatement classifies one statement's tokens, and every data-changing
// statement nested in its parentheses (a CTE's DELETE, say), appending to out.
func classifyStatement(toks []sqlTok, tags map[string]bool, out []SQLStatement) []SQLStatement {
	for len(toks) > 0 && toks[0].text == "(" {
		toks = toks[1:]
	}
	if len(toks) == 0 {
		return out
	}
	if toks[0].kind != 'w' || !sqlVerbs[toks[0].up] {
		tags["sql.parse_error"] = true
		return out
	}
	// Nested data-changing statements: "(DELETE ...)", "(UPDATE ...)";
	// a word alone in parentheses is a column (avg(load)).
	for i := 1; i+1 < len(toks); i++ {
		if toks[i].text == "(" && toks[i+1].kind == 'w' && (sqlWriteVerbs[toks[i+1].up] || toks[i+1].up == "WITH") &&
			!(i+2 < len(toks) && (toks[i+2].text == ")" || toks[i+2].text == ",")) {
			end := closingParen(toks, i)
			out = classifyStatement(toks[i+1:end], tags, out)
		}
	}
	body := toks
	if body[0].up == "WITH" {
		for i := 1; i < len(toks); i++ {
			if depth := parenDepth(toks[:i]); depth == 0 && toks[i].kind == 'w' && sqlMainVerbs[toks[i].up] {
				body = toks[i:]
				break
			}
		}
	}
	if body[0].up == "EXPLAIN" && len(body) > 1 {
		// EXPLAIN ANALYZE runs the statement; plain EXPLAIN only plans it.
		rest := body[1:]
		analyze := false
		for len(rest) > 0 && (rest[0].text == "(" || rest[0].text == ")" || rest[0].text == "," ||
			(rest[0].kind == 'w' && !sqlVerbs[rest[0].up]) || rest[0].up == "ANALYZE" || rest[0].up == "ANALYSE") {
			analyze = analyze || rest[0].up == "ANALYZE" || rest[0].up == "ANALYSE"
			rest = rest[1:]
		}
		if analyze && len(rest) > 0 {
			return classifyStatement(rest, tags, out)
		}
	}
	tables, files := sqlTables(body)
	if len(body) < len(toks) {
		_, files = sqlTables(toks) // FROM 'file' in a common table expression
	}
	st := SQLStatement{Verb: body[0].up, Tables: tables, HasWhere: sqlHasWhere(body)}
	if st.Verb == "WITH" || st.Verb == "FROM" {
		st.Verb = "SELECT"
	}
	if st.Verb == "SELECT" && hasTopWord(body, "INTO") && !hasTopWord(body, "OUTFILE") && !hasTopWord(body, "DUMPFILE") {
		st.Verb = "CREATE" // SELECT ... INTO new_table creates a table
	}
	if sqlWriteVerbs[st.Verb] {
		tags["sql.write"] = true
	}
	if sqlDDLVerbs[st.Verb] {
		tags["sql.ddl"] = true
	}
	switch st.Verb {
	case "DROP", "TRUNCATE":
		tags["sql.destructive"] = true
	case "DELETE", "UPDATE":
		if !st.HasWhere {
			tags["sql.destructive"] = true
		}
	case "ALTER":
		if hasTopWord(body, "DROP") {
			tags["sql.destructive"] = true
		}
	case "COPY":
		if hasTopWord(body, "PROGRAM") { // COPY ... TO/FROM PROGRAM runs a shell command
			tags["sql.destructive"] = true
		}
	}
	readsFiles := sqlSideEffects(toks, body, &st, tags)
	if len(files) > 0 {
		// A table named by a string or a path is a file or a URL the
		// server (DuckDB's replacement scans) opens: FROM 'data.csv'.
		tags["sql.file"] = true
		readsFiles = true
	}
	if readsFiles && slices.ContainsFunc(body, func(t sqlTok) bool { return (t.kind == 's' || t.kind == 'q') && remoteLocation(t.text) }) {
		tags["sql.network"] = true // the file is on another host: s3://, https://, host=
	}
	if slices.ContainsFunc(st.Tables, credentialTable) || mentionsCredentialTable(toks) ||
		slices.Contains(st.Functions, "loginproperty") && slices.ContainsFunc(body, func(t sqlTok) bool {
			return t.kind == 's' && strings.EqualFold(t.text, "PasswordHash")
		}) {
		tags["sql.secrets"] = true
	}
	if st.Verb == "SELECT" && rowLocks(body) {
		tags["sql.lock"] = true
	}
	if st.Tables == nil {
		st.Tables = []string{}
	}
	return append(out, st)
}

// credentialTables are the system tables, views and table functions that
// hold password hashes, stored passwords or connection strings with
// passwords, by their last name part:
//   - PostgreSQL (System Catalogs, postgresql.org/docs/current/catalogs.html):
//     pg_authid and pg_shadow (rolpassword), pg_user_mapping(s) (umoptions,
//     a foreign server's user and password), pg_subscription (subconninfo,
//     the publisher's connection string) and pg_foreign_server (srvoptions);
//   - SQL Server (learn.microsoft.com/sql/relational-databases/system-catalog-views):
//     sql_logins (password_hash), syslogins and sysxlogins, linked_logins,
//     master_key_passwords, database_scoped_credentials (and its older name
//     database_credentials); sys.credentials is named with its schema;
//   - DuckDB: duckdb_secrets() (duckdb.org/docs/stable/configuration/secrets_manager);
//   - Oracle: user$, link$.
//
// SQLite keeps no credentials. MySQL's are named with their schema (its bare
// "user" is too common a name): mysql.user and mysql.global_priv
// (authentication_string), mysql.slave_master_info and
// mysql.replication_connection_configuration (a replica's source password),
// mysql.servers (FEDERATED servers' passwords).
var credentialTables = map[string]bool{"pg_shadow": true, "pg_authid": true, "pg_user_mapping": true,
	"pg_user_mappings": true, "pg_subscription": true, "pg_foreign_server": true, "sql_logins": true,
	"syslogins": true, "sysxlogins": true, "linked_logins": true, "master_key_passwords": true,
	"database_scoped_credentials": true, "database_credentials": true, "duckdb_secrets": true,
	"user$": true, "link$": true}

// credentialSettings are server settings whose value holds a password or a
// key, read with SHOW x, current_setting('x') or a catalog of settings
// filtered to it: PostgreSQL's primary_conninfo (a standby's connection
// string; pg_settings and pg_file_settings hold it), DuckDB's legacy S3 and
// Azure settings (duckdb.org/docs/stable/core_extensions/httpfs/s3api_legacy_authentication).
var credentialSettings = map[string]bool{"primary_conninfo": true, "pg_file_settings": true,
	"s3_secret_access_key": true, "s3_access_key_id": true, "s3_session_token": true,
	"azure_storage_connection_string": true}

var credentialTablesQualified = []string{"mysql.user", "mysql.global_priv", "mysql.slave_master_info",
	"mysql.replication_connection_configuration", "mysql.servers", "sys.credentials"}

func credentialTable(name string) bool {
	if credentialTables[name[strings.LastIndexByte(name, '.')+1:]] {
		return true
	}
	for _, q := range credentialTablesQualified {
		if strings.HasSuffix(name, q) && (len(name) == len(q) || name[len(name)-len(q)-1] == '.') {
			return true
		}
	}
	return false
}

// mentionsCredentialTable finds a credential table named anywhere in a
// statement: in a CTE, a subquery, a join, as a dotted name of words and
// quoted names.
func mentionsCredentialTable(toks []sqlTok) bool {
	isName := func(t sqlTok) bool { return t.kind == 'w' || t.kind == 'q' }
	for i, t := range toks {
		if (isName(t) || t.kind == 's') && len(t.text) >= 15 && len(t.text) <= 31 && credentialSettings[strings.ToLower(t.text)] {
			return true
		}
		if !isName(t) {
			continue
		}
		if credentialTables[t.text] || len(t.text) >= 5 && len(t.text) <= 27 && credentialTables[strings.ToLower(t.text)] {
			return true
		}
		// mysql.user, sys.credentials: tables named with their schema.
		if (strings.EqualFold(t.text, "mysql") || strings.EqualFold(t.text, "sys")) && i+2 < len(toks) &&
			toks[i+1].text == "." && isName(toks[i+2]) {
			for _, q := range credentialTablesQualified {
				if strings.EqualFold(t.text+"."+toks[i+2].text, q) {
					return true
				}
			}
		}
	}
	return false
}

// rowLocks reports a SELECT that locks what it reads until its transaction
// ends: FOR UPDATE / SHARE / NO KEY UPDATE / KEY SHARE (PostgreSQL, MySQL),
// LOCK IN SHARE MODE (MySQL), and SQL Server's lock hints.
func rowLocks(toks []sqlTok) bool {
	for i, t := range toks {
		if t.kind != 'w' {
			continue
		}
		switch t.up {
		case "FOR":
			if i+1 < len(toks) && (toks[i+1].up == "UPDATE" || toks[i+1].up == "SHARE" || toks[i+1].up == "NO" || toks[i+1].up == "KEY") {
				return true
			}
		case "LOCK":
			if i+1 < len(toks) && toks[i+1].up == "IN" {
				return true
			}
		case "UPDLOCK", "XLOCK", "TABLOCK", "TABLOCKX", "HOLDLOCK", "PAGLOCK", "ROWLOCK", "SERIALIZABLE", "REPEATABLEREAD":
			return true
		}
	}
	return false
}

func closingParen(toks []sqlTok, open int) int {
	depth := 0
	for i := open; i < len(toks); i++ {
		switch toks[i].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(toks)
}

func parenDepth(toks []sqlTok) int {
	d := 0
	for _, t := range toks {
		if t.kind == 'p' && t.text == "(" {
			d++
		} else if t.kind == 'p' && t.text == ")" {
			d--
		}
	}
	return d
}

func hasTopWord(toks []sqlTok, w string) bool {
	depth := 0
	for _, t := range toks {
		switch {
		case t.kind == 'p' && t.text == "(":
			depth++
		case t.kind == 'p' && t.text == ")":
			depth--
		case depth == 0 && t.kind == 'w' && t.up == w:
			return true
		}
	}
	return false
}

// sqlHasWhere reports whether the statement has a top-level WHERE that is
// not always true.
func sqlHasWhere(toks []sqlTok) bool {
	depth := 0
	for i, t := range toks {
		switch {
		case t.kind == 'p' && t.text == "(":
			depth++
		case t.kind == 'p' && t.text == ")":
			depth--
		case depth == 0 && t.kind == 'w' && t.up == "WHERE":
			return !alwaysTrue(toks[i+1:])
		}
	}
	return false
}

// alwaysTrue reports whether a WHERE clause is a tautology rein can see:
// TRUE, a non-zero number, X = X for equal literals, or any of these after
// a top-level OR.
func alwaysTrue(clause []sqlTok) bool {
	var cond []sqlTok
	depth := 0
	for _, t := range clause {
		if t.kind == 'p' && t.text == "(" {
			depth++
		} else if t.kind == 'p' && t.text == ")" {
			depth--
		}
		if depth == 0 && t.kind == 'w' && (t.up == "RETURNING" || t.up == "ORDER" || t.up == "LIMIT" || t.up == "GROUP") {
			break
		}
		cond = append(cond, t)
	}
	tautology := func(c []sqlTok) bool {
		for len(c) >= 2 && c[0].text == "(" && c[len(c)-1].text == ")" {
			c = c[1 : len(c)-1]
		}
		switch {
		case len(c) == 1:
			return (c[0].kind == 'w' && c[0].up == "TRUE") || (c[0].kind == 'n' && strings.Trim(c[0].text, "0.") != "")
		case len(c) == 3 && c[1].text == "=":
			return (c[0].kind == 'n' || c[0].kind == 's') && c[0].kind == c[2].kind && c[0].text == c[2].text
		}
		return false
	}
	// Split at top-level OR: one always-true branch makes the whole true.
	depth = 0
	last := 0
	for i, t := range cond {
		if t.kind == 'p' && t.text == "(" {
			depth++
		} else if t.kind == 'p' && t.text == ")" {
			depth--
		}
		if depth == 0 && t.kind == 'w' && t.up == "OR" {
			if tautology(cond[last:i]) {
				return true
			}
			last = i + 1
		}
	}
	return tautology(cond[last:])
}

// sqlTables reads the table names a statement refers to: after FROM, JOIN,
// INTO, USING, UPDATE, TABLE, and the object name of CREATE, DROP, ALTER,
// TRUNCATE, COPY and LOCK. FROM inside a function call (EXTRACT(YEAR FROM
// x)) is not a table. files are the tables named by a string (FROM
// 'data.csv') or by a quoted name shaped like a path or URL (FROM
// "data.csv", "/home/x/.ssh/id_rsa"): files DuckDB reads.
func sqlTables(toks []sqlTok) (tables, files []string) {
	add := func(name string) {
		for _, t := range tables {
			if t == name {
				return
			}
		}
		tables = append(tables, name)
	}
	// name reads a qualified name at toks[i]; it returns the name and the
	// index after it.
	name := func(i int) (string, int) {
		var parts []string
		for i < len(toks) && (toks[i].kind == 'w' || toks[i].kind == 'q') {
			if toks[i].kind == 'q' && strings.ContainsAny(toks[i].text, "./\\:") {
				files = append(files, toks[i].text)
			}
			parts = append(parts, toks[i].text)
			i++
			if i+1 < len(toks) && toks[i].text == "." {
				i++
				continue
			}
			break
		}
		return strings.Join(parts, "."), i
	}
	// list reads "name [AS alias], name ..." starting at toks[i]; when
	// strs, a string stands for a table too (FROM 'data.csv').
	list := func(i int, multi, strs bool) {
		for i < len(toks) {
			if toks[i].kind == 'w' && (toks[i].up == "ONLY" || toks[i].up == "LATERAL") {
				i++
				continue
			}
			var n string
			var next int
			switch {
			case toks[i].kind == 's' && strs:
				files = append(files, toks[i].text)
				n, next = toks[i].text, i+1
			case toks[i].kind != 'w' && toks[i].kind != 'q',
				toks[i].kind == 'w' && sqlVerbs[toks[i].up] && toks[i].up != "TABLE":
				return
			default:
				n, next = name(i)
			}
			if n == "" {
				return
			}
			add(n)
			i = next
			if !multi {
				return
			}
			if i < len(toks) && toks[i].kind == 'w' && toks[i].up == "AS" {
				i++
			}
			if i < len(toks) && (toks[i].kind == 'q' || (toks[i].kind == 'w' && !sqlClauseWords[toks[i].up])) {
				i++ // alias
			}
			if i < len(toks) && toks[i].text == "," {
				i++
				continue
			}
			return
		}
	}
	skip := func(i int) int {
		for i < len(toks) && toks[i].kind == 'w' && sqlObjectKinds[toks[i].up] {
			i++
		}
		return i
	}
	var calls []bool // for each open parenthesis: is it a function call's?
	switch toks[0].up {
	case "UPDATE", "COPY", "LOCK", "VACUUM", "REINDEX", "CLUSTER":
		list(skip(1), false, false)
	case "TRUNCATE", "DROP":
		list(skip(1), true, false)
	case "CREATE", "ALTER":
		i := skip(1)
		if i > 1 && toks[i-1].up != "INDEX" {
			list(i, false, false)
		}
	case "FROM": // DuckDB's FROM-first SELECT
		list(1, true, true)
	}
	// Users are strings after FROM in REVOKE … FROM 'bob'@'host'; IS
	// DISTINCT FROM 'x' compares.
	users := toks[0].up == "GRANT" || toks[0].up == "REVOKE" || toks[0].up == "DENY"
	for i := 1; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == 'p' && t.text == "(":
			prev := toks[i-1]
			calls = append(calls, prev.kind == 'w' && !sqlClauseWords[prev.up] && !sqlVerbs[prev.up])
		case t.kind == 'p' && t.text == ")":
			if len(calls) > 0 {
				calls = calls[:len(calls)-1]
			}
		case t.kind == 'w' && (len(calls) == 0 || !calls[len(calls)-1]):
			switch t.up {
			case "FROM", "JOIN", "USING":
				list(i+1, t.up == "FROM", t.up != "USING" && !users && toks[i-1].up != "DISTINCT")
			case "INTO", "ON":
				if t.up == "INTO" && i+1 < len(toks) && (toks[i+1].up == "OUTFILE" || toks[i+1].up == "DUMPFILE") {
					continue // MySQL INTO OUTFILE 'file': a file, not a table
				}
				if t.up == "INTO" || toks[0].up == "GRANT" || toks[0].up == "REVOKE" || toks[0].up == "CREATE" {
					list(skip(i+1), false, false)
				}
			}
		}
	}
	return tables, files
}

// sqlClauseWords end a table list or cannot be an alias.
var sqlClauseWords = map[string]bool{
	"WHERE": true, "JOIN": true, "INNER": true, "LEFT": true, "RIGHT": true, "FULL": true, "OUTER": true,
	"CROSS": true, "NATURAL": true, "ON": true, "USING": true, "GROUP": true, "ORDER": true, "LIMIT": true,
	"OFFSET": true, "HAVING": true, "UNION": true, "EXCEPT": true, "INTERSECT": true, "SET": true, "VALUES": true,
	"RETURNING": true, "WINDOW": true, "FOR": true, "AS": true, "FROM": true, "INTO": true, "SELECT": true,
	"IN": true, "EXISTS": true, "NOT": true, "AND": true, "OR": true, "ALL": true, "ANY": true, "SOME": true,
	"DEFAULT": true, "WHEN": true, "THEN": true, "CASE": true, "TO": true, "CASCADE": true, "RESTRICT": true,
	"TABLE": true, "PROGRAM": true, "WITH": true, "LATERAL": true,
}

// sqlSideEffects finds what a statement does besides reading and writing
// rows: the functions and procedures it calls (sqlSideEffectFuncs,
// sqlReadOnlyFuncs) and the statements that reach files, programs, other
// servers or the server's configuration. files is true when it reads or
// writes files. toks is the statement's body (after WITH's common table
// expressions); calls are looked for in all of it, those included.
func sqlSideEffects(all, toks []sqlTok, st *SQLStatement, tags map[string]bool) (files bool) {
	st.Functions, st.UnknownFunctions = []string{}, []string{}
	mark := func(tag string) {
		tags[tag] = true
		files = files || tag == "sql.file"
	}
	call := func(name string) {
		name = strings.ToLower(name)
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		if name == "" || slices.Contains(st.Functions, name) {
			return
		}
		st.Functions = append(st.Functions, name)
		if effects, ok := sqlSideEffectFuncs[name]; ok {
			for _, t := range effects {
				mark(t)
			}
		} else if !sqlReadOnlyFuncs[name] {
			st.UnknownFunctions = append(st.UnknownFunctions, name)
			tags["sql.function"] = true
		}
	}
	// qualified reads a dotted name ending at toks[i] (master..xp_cmdshell,
	// pg_catalog.pg_read_file) and returns its last part.
	isName := func(t sqlTok) bool { return t.kind == 'w' || t.kind == 'q' }
	verb := all[0].up
	for i, toks := 0, all; i+1 < len(toks); i++ {
		t := toks[i]
		if !isName(t) || toks[i+1].text != "(" || i == 0 && t.kind == 'w' && sqlVerbs[t.up] {
			continue // EXPLAIN (FORMAT JSON), EXEC('…'): a statement, not a call
		}
		prev := ""
		if i > 0 {
			prev = toks[i-1].up
			if toks[i-1].text == "." {
				prev = ""
			}
		}
		switch {
		case prev == "INTO" || prev == "TABLE" || prev == "INDEX" || prev == "REFERENCES" || prev == "VIEW" ||
			prev == "EXISTS" && i > 1 && toks[i-2].up == "NOT" || prev == "TYPE" || prev == "FUNCTION" ||
			prev == "PROCEDURE" || prev == "ON" && (verb == "CREATE" || verb == "GRANT" || verb == "REVOKE"):
			continue // an object's name and its columns, not a call
		case t.kind == 'w' && (t.up == "INDEX" || t.up == "KEY") && (prev == "USE" || prev == "FORCE" || prev == "IGNORE"),
			t.kind == 'w' && t.up == "OPTION" && i > 0 && (strings.IndexByte("qns", toks[i-1].kind) >= 0 ||
				toks[i-1].text == ")" || toks[i-1].kind == 'w' && !sqlVerbs[prev] && !sqlClauseWords[prev]):
			continue // MySQL's index hints USE INDEX (i), T-SQL's OPTION (MAXDOP 1): hints, not calls
		case verb == "WITH" || hasTopWord(toks, "WITH"):
			if end := closingParen(toks, i+1); end+1 < len(toks) && toks[end+1].up == "AS" {
				continue // a CTE's name and columns: WITH x(a, b) AS (...)
			}
		}
		if verb == "CREATE" || verb == "ALTER" {
			if slices.Contains(st.Tables, t.text) {
				continue
			}
		}
		call(t.text)
	}
	verb = toks[0].up
	// Procedures called without parentheses: EXEC xp_cmdshell 'dir',
	// CALL p, EXECUTE name.
	if (verb == "EXEC" || verb == "EXECUTE") && len(toks) > 1 && toks[1].up == "AS" {
		tags["sql.admin"] = true // EXECUTE AS LOGIN/USER switches identity (SQL Server)
	} else if verb == "EXEC" || verb == "EXECUTE" || verb == "CALL" {
		if len(toks) > 1 && toks[1].kind == 's' || len(toks) > 1 && toks[1].text == "(" {
			tags["sql.exec"] = true // EXEC('...'): dynamic SQL rein cannot read
		}
		j := 1
		if j+1 < len(toks) && toks[j+1].text == "=" { // EXEC @rc = proc
			j += 2
		}
		name := ""
		for j < len(toks) && (isName(toks[j]) || toks[j].text == ".") {
			name += toks[j].text
			j++
		}
		if name != "" && !strings.HasPrefix(name, "@") {
			call(name)
		}
	}
	hasWord := func(w string) bool { return hasTopWord(toks, w) }
	next := func(w string) (sqlTok, bool) {
		for i := 0; i+1 < len(toks); i++ {
			if toks[i].kind == 'w' && toks[i].up == w {
				return toks[i+1], true
			}
		}
		return sqlTok{}, false
	}
	switch verb {
	case "COPY":
		// COPY ... FROM/TO PROGRAM runs a command; FROM/TO 'file' reads or
		// writes a server file (postgresql.org/docs/current/sql-copy.html).
		if hasWord("PROGRAM") {
			tags["sql.exec"] = true
		}
		for _, w := range []string{"FROM", "TO"} {
			if t, ok := next(w); ok && t.kind == 's' {
				mark("sql.file")
			}
		}
	case "SELECT":
		// SELECT ... INTO OUTFILE / DUMPFILE writes a server file (MySQL SELECT ... INTO).
		if hasWord("OUTFILE") || hasWord("DUMPFILE") {
			mark("sql.file")
		}
	case "LOAD":
		// LOAD DATA / LOAD XML [LOCAL] INFILE reads a file (MySQL); LOAD 'lib'
		// loads a shared library (PostgreSQL LOAD), LOAD httpfs an extension
		// (DuckDB).
		if t, ok := next("LOAD"); ok && (t.up == "DATA" || t.up == "XML") {
			mark("sql.file")
		} else {
			tags["sql.exec"] = true
		}
	case "IMPORT", "EXPORT":
		// DuckDB's IMPORT / EXPORT DATABASE 'dir' reads or writes files;
		// PostgreSQL's IMPORT FOREIGN SCHEMA reads another server.
		if hasWord("FOREIGN") {
			tags["sql.network"] = true
		} else {
			mark("sql.file")
		}
	case "SHOW", "DESCRIBE", "DESC":
		// SHOW CREATE USER prints the account's authentication string
		// (MySQL); SHOW ALL every setting, primary_conninfo's password
		// included (PostgreSQL).
		if len(toks) > 2 && toks[1].up == "CREATE" && toks[2].up == "USER" || len(toks) == 2 && toks[1].up == "ALL" {
			tags["sql.secrets"] = true
		}
		// DuckDB's SHOW and DESCRIBE 'data.csv' read the file.
		if len(toks) > 1 && (toks[1].kind == 's' || toks[1].kind == 'q' && strings.ContainsAny(toks[1].text, "./\\:")) {
			mark("sql.file")
		}
	case "VACUUM":
		if hasWord("INTO") {
			mark("sql.file") // SQLite's VACUUM INTO 'file' writes a copy of the database
		}
	case "ATTACH":
		mark("sql.file") // SQLite ATTACH DATABASE 'file' opens or creates a file
	case "BULK":
		mark("sql.file") // SQL Server BULK INSERT ... FROM 'file'
	case "DO", "INSTALL":
		tags["sql.exec"] = true // PostgreSQL DO runs a code block; MySQL INSTALL PLUGIN/COMPONENT loads code
	case "RECONFIGURE", "SHUTDOWN", "KILL":
		tags["sql.admin"] = true
	case "SET":
		// SET GLOBAL / PERSIST changes the server for every session (MySQL).
		if len(toks) > 1 && (toks[1].up == "GLOBAL" || toks[1].up == "PERSIST" || toks[1].up == "PERSIST_ONLY" ||
			len(toks) > 3 && toks[1].text == "@" && toks[2].text == "@" && (toks[3].up == "GLOBAL" || toks[3].up == "PERSIST")) {
			tags["sql.admin"] = true
		}
	case "ALTER":
		if len(toks) > 1 && (toks[1].up == "SYSTEM" || toks[1].up == "SERVER" || toks[1].up == "ROLE" || toks[1].up == "USER" ||
			toks[1].up == "LOGIN" || toks[1].up == "INSTANCE") {
			tags["sql.admin"] = true // ALTER SYSTEM writes postgresql.auto.conf; roles and logins
		}
	case "CREATE":
		switch {
		case hasWord("EXTENSION"):
			tags["sql.exec"] = true // an extension loads a shared library
		case hasWord("SERVER") || hasWord("WRAPPER") || hasWord("MAPPING"):
			tags["sql.network"] = true // foreign servers and user mappings
		case hasWord("ROLE") || hasWord("USER") || hasWord("LOGIN"):
			tags["sql.admin"] = true
		case hasWord("FUNCTION") || hasWord("PROCEDURE"):
			// Code in an untrusted or external language runs with the
			// server's rights (plpython3u, plperlu, C, ...).
			if t, ok := next("LANGUAGE"); ok {
				if l := strings.ToLower(t.text); l != "sql" && l != "plpgsql" {
					tags["sql.exec"] = true
				}
			}
		}
	}
	return files
}

// remoteLocation reports whether a file a statement names is on another
// host: a URL (https://, s3://, gs://, hf://), a scheme without slashes
// (s3:, az:, md:), a connection string (postgres:…, host=…) or a UNC path.
func remoteLocation(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	if strings.Contains(s, "://") || strings.HasPrefix(s, `\\`) || strings.HasPrefix(s, "//") || strings.Contains(s, "host=") {
		return true
	}
	scheme, _, ok := strings.Cut(s, ":")
	return ok && len(scheme) > 1 && scheme != "file" && strings.IndexFunc(scheme, func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '+' }) < 0
}
