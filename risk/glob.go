package risk

// Shell glob patterns, read as the shell reads them, for one question only:
// could this pattern name that file? The answer over-approximates: a "yes"
// may be wrong, a "no" never is.
//
// Knowledge: bash(1), "Pattern Matching"; POSIX.1-2017 XCU 2.13 "Pattern
// Matching Notation" and XBD 9.3.5 "RE Bracket Expression"; bash's
// lib/glob/sm_loop.c (BRACKMATCH). A bracket expression [...] matches one
// character. Its set can be negated ([!x], [^x]), start with a literal "]"
// ([]x], [!]x]), and hold classes ([:alpha:]), equivalence classes ([=s=])
// and collating symbols ([.s.]), each with a "]" of its own; a "]" can also
// be quoted or escaped inside it. A "[" that no "]" closes is an ordinary
// character.
//
// rein does not decide which "]" closes a bracket: the text it judges has
// lost its quotes ("]" may have been quoted), and the forms above disagree
// between shells. Every bracket expression is read as "any one character"
// that can end at any later "]", and also as a literal "[": the union of
// every reading, so that whatever the shell decides is covered. Go's
// path.Match is no substitute: it knows neither "!" nor classes, and ends
// [[:alpha:]] at the first "]".

// globTok is one character of a segment pattern.
type globTok struct {
	kind byte // '*' any run, '?' any one character, '[' a bracket, 'c' a literal
	r    rune
}

const (
	tokStar    = '*'
	tokAny     = '?'
	tokBracket = '['
	tokLit     = 'c'
)

// globToks reads one path segment. As a pattern, *, ? and [ are special;
// as a name (pattern false), every character is literal.
func globToks(s string, pattern bool) []globTok {
	out := make([]globTok, 0, len(s))
	for _, r := range s {
		t := globTok{kind: tokLit, r: r}
		if pattern {
			switch r {
			case '*':
				if len(out) > 0 && out[len(out)-1].kind == tokStar {
					continue
				}
				t.kind = tokStar
			case '?':
				t.kind = tokAny
			case '[':
				t.kind = tokBracket
			}
		}
		out = append(out, t)
	}
	return out
}

// hasGlob reports whether a segment holds a glob character.
func hasGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '*' || s[i] == '?' || s[i] == '[' {
			return true
		}
	}
	return false
}

// oneCharNext lists the positions after token k consumes one character:
// k+1, and for a bracket also the position after every later "]".
func oneCharNext(toks []globTok, k int, buf []int) []int {
	buf = append(buf[:0], k+1)
	if toks[k].kind == tokBracket {
		for e := k + 1; e < len(toks); e++ {
			if toks[e].kind == tokLit && toks[e].r == ']' {
				buf = append(buf, e+1)
			}
		}
	}
	return buf
}

// globsIntersect reports whether some name matches both segment patterns a
// and b (each from globToks). Every move consumes a character on both
// sides or skips a "*", so positions only grow and one backward pass over
// the table decides.
func globsIntersect(a, b []globTok) bool {
	n, m := len(a), len(b)
	w := m + 1
	dp := make([]bool, (n+1)*w)
	var na, nb []int
	for i := n; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			r := i == n && j == m
			if !r && i < n && a[i].kind == tokStar {
				r = dp[(i+1)*w+j]
			}
			if !r && j < m && b[j].kind == tokStar {
				r = dp[i*w+j+1]
			}
			if !r && i < n && j < m && (a[i].kind != tokStar || b[j].kind != tokStar) {
				if a[i].kind == tokLit && b[j].kind == tokLit && a[i].r != b[j].r {
					dp[i*w+j] = false
					continue
				}
				// A "*" consumes the character and stays; the other side moves.
				if a[i].kind == tokStar {
					na = append(na[:0], i)
				} else {
					na = oneCharNext(a, i, na)
				}
				if b[j].kind == tokStar {
					nb = append(nb[:0], j)
				} else {
					nb = oneCharNext(b, j, nb)
				}
			search:
				for _, x := range na {
					for _, y := range nb {
						if dp[x*w+y] {
							r = true
							break search
						}
					}
				}
			}
			dp[i*w+j] = r
		}
	}
	return dp[0]
}

// globMatch reports whether a name could match a segment pattern.
func globMatch(pattern, name string) bool {
	if !hasGlob(pattern) {
		return pattern == name
	}
	if len(pattern) > maxGlobTokens {
		return true
	}
	return globToksMatch(globToks(pattern, true), name)
}

// globSet is a set of positions in a pattern of at most maxGlobTokens
// tokens.
type globSet [(maxGlobTokens + 64) / 64]uint64

func (s *globSet) add(i int)      { s[i/64] |= 1 << (i % 64) }
func (s *globSet) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }

// globToksMatch is globMatch on a tokenised pattern of at most
// maxGlobTokens tokens: the positions the name can reach, one character
// at a time, without allocating.
func globToksMatch(pt []globTok, name string) bool {
	n := len(pt)
	if n > maxGlobTokens {
		return true
	}
	closure := func(s *globSet) { // a "*" also matches nothing
		for i := 0; i < n; i++ {
			if pt[i].kind == tokStar && s.has(i) {
				s.add(i + 1)
			}
		}
	}
	var cur globSet
	cur.add(0)
	closure(&cur)
	for _, r := range name {
		var next globSet
		any := false
		for i := 0; i < n; i++ {
			if !cur.has(i) {
				continue
			}
			switch t := pt[i]; t.kind {
			case tokStar:
				next.add(i)
			case tokAny:
				next.add(i + 1)
			case tokBracket:
				next.add(i + 1)
				for e := i + 1; e < n; e++ {
					if pt[e].kind == tokLit && pt[e].r == ']' {
						next.add(e + 1)
					}
				}
			default:
				if t.r != r {
					continue
				}
				next.add(i + 1)
			}
			any = true
		}
		if !any {
			return false
		}
		closure(&next)
		cur = next
	}
	return cur.has(n)
}
