package risk

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SQLStatement is what rein reads from one SQL statement (risk.md, SQL).
// Verb is upper case (SELECT, DELETE, DROP, ...); Tables are the tables the
// statement names, lower-cased unless quoted; HasWhere is false when a
// top-level WHERE is missing or always true (WHERE 1=1, WHERE TRUE, OR 1=1).
type SQLStatement struct {
	Verb     string   `json:"verb"`
	Tables   []string `json:"tables"`
	HasWhere bool     `json:"has_where"`
}

// ClassifySQL splits src into statements and classifies each one. It is a
// tokenizer, not a parser: it reads verbs, table names and WHERE.
func ClassifySQL(src string) ([]SQLStatement, []string) {
	tags := map[string]bool{"sql": true}
	// Two readings: the standard one (PostgreSQL, SQLite: "--" always starts
	// a comment, backslashes are plain) and MySQL's ("--" needs a space
	// after it, "#" starts a comment, backslashes escape). Text that is a
	// string or a comment to one can be SQL to the other, so rein keeps what
	// either reading finds.
	stmts, ok := sqlStatements(src, false, tags)
	alt, altOK := sqlStatements(src, true, tags)
	if !ok || !altOK {
		tags["sql.parse_error"] = true
	}
	for _, a := range alt {
		if !containsStatement(stmts, a) {
			stmts = append(stmts, a)
		}
	}
	return stmts, sortedTags(tags)
}

func containsStatement(list []SQLStatement, s SQLStatement) bool {
	for _, x := range list {
		if x.Verb == s.Verb && x.HasWhere == s.HasWhere && strings.Join(x.Tables, ",") == strings.Join(s.Tables, ",") {
			return true
		}
	}
	return false
}

type sqlTok struct {
	kind byte   // 'w' word, 'q' quoted identifier, 's' string, 'n' number, 'p' punctuation, ';'
	text string // words upper-cased in up; text as written (identifiers unquoted)
	up   string
}

// sqlTokens reads src into tokens. ok is false when a string, quoted
// identifier or comment is not terminated.
func sqlTokens(src string, mysql bool) (toks []sqlTok, ok bool) {
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
			if i+2 < n && src[i+2] == '!' {
				// MySQL executes /*! ... */: read its content as SQL.
				i += 3
				for i < n && src[i] >= '0' && src[i] <= '9' {
					i++
				}
				continue
			}
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return toks, false
			}
			i += end + 4
		case c == '*' && i+1 < n && src[i+1] == '/':
			i += 2 // the end of a /*! ... */ section
		case c == '\'' || ((c == 'E' || c == 'e') && i+1 < n && src[i+1] == '\''):
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
		case c == '"' || c == '`':
			s, next, closed := sqlQuoted(src, i, c, false)
			if !closed {
				return toks, false
			}
			toks = append(toks, sqlTok{kind: 'q', text: s})
			i = next
		case c == '$' && i+1 < n && (src[i+1] == '$' || isIdentStart(rune(src[i+1]))):
			j := i + 1
			for j < n && src[j] != '$' && isIdentPart(rune(src[j])) {
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
		default:
			r, size := utf8.DecodeRuneInString(src[i:])
			if isIdentStart(r) {
				j := i
				for j < n {
					r, size := utf8.DecodeRuneInString(src[j:])
					if !isIdentPart(r) && r != '$' {
						break
					}
					j += size
				}
				w := src[i:j]
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

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// sqlVerbs are the statements rein recognises; anything else is a parse error.
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
}

var (
	sqlWriteVerbs = map[string]bool{"INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true, "REPLACE": true,
		"UPSERT": true, "COPY": true, "TRUNCATE": true, "LOAD": true, "CALL": true, "EXEC": true, "EXECUTE": true, "DO": true}
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
func sqlStatements(src string, mysql bool, tags map[string]bool) ([]SQLStatement, bool) {
	toks, ok := sqlTokens(src, mysql)
	var out []SQLStatement
	start := 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) && toks[i].kind != ';' {
			continue
		}
		if i > start {
			out = classifyStatement(toks[start:i], tags, out)
		}
		start = i + 1
	}
	return out, ok
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
	// Nested data-changing statements: "(DELETE ...)", "(UPDATE ...)".
	for i := 1; i+1 < len(toks); i++ {
		if toks[i].text == "(" && toks[i+1].kind == 'w' && (sqlWriteVerbs[toks[i+1].up] || toks[i+1].up == "WITH") {
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
	st := SQLStatement{Verb: body[0].up, Tables: sqlTables(body), HasWhere: sqlHasWhere(body)}
	if st.Verb == "WITH" {
		st.Verb = "SELECT"
	}
	if st.Verb == "SELECT" && hasTopWord(body, "INTO") {
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
	if st.Tables == nil {
		st.Tables = []string{}
	}
	return append(out, st)
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
// x)) is not a table.
func sqlTables(toks []sqlTok) []string {
	var tables []string
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
	// list reads "name [AS alias], name ..." starting at toks[i].
	list := func(i int, multi bool) {
		for i < len(toks) {
			if toks[i].kind == 'w' && (toks[i].up == "ONLY" || toks[i].up == "LATERAL") {
				i++
				continue
			}
			if toks[i].kind != 'w' && toks[i].kind != 'q' {
				return
			}
			if toks[i].kind == 'w' && sqlVerbs[toks[i].up] && toks[i].up != "TABLE" {
				return
			}
			n, next := name(i)
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
		list(skip(1), false)
	case "TRUNCATE", "DROP":
		list(skip(1), true)
	case "CREATE", "ALTER":
		i := skip(1)
		if i > 1 && toks[i-1].up != "INDEX" {
			list(i, false)
		}
	}
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
				list(i+1, t.up == "FROM")
			case "INTO", "ON":
				if t.up == "INTO" || toks[0].up == "GRANT" || toks[0].up == "REVOKE" || toks[0].up == "CREATE" {
					list(skip(i+1), false)
				}
			}
		}
	}
	return tables
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
